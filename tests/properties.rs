//! Property tests: the guarantees each algorithm documents, checked on random configurations
//! and random traces (proptest). Times are in nanoseconds and windows are tiny, so every
//! trace crosses many windows and every off-by-one at a boundary shows.

use proptest::prelude::*;
use tollgate::algorithm::check_slot;
use tollgate::policy::{Limit, LimitRef, Policy, PolicyState};
use tollgate::{Algorithm, AnyAlgorithm, AnyState, Decision, Kind, LimitSpec, Nanos};

// ---------------------------------------------------------------------------------------
// Strategies

/// A valid configuration of any algorithm with small numbers.
fn spec() -> impl Strategy<Value = LimitSpec> {
    (0usize..7, 1u64..=6, 1u64..=60, 1u64..=10, 1u64..=6, any::<u64>(), any::<u64>()).prop_map(
        |(k, limit, w, p, n, r1, r2)| {
            let kind = Kind::ALL[k];
            let window = if kind == Kind::SlidingBuckets { p * n } else { w.max(limit) };
            let mut s = LimitSpec::new(kind, limit, Nanos::new(window.max(limit)));
            let window = s.window.as_nanos();
            match kind {
                Kind::FixedWindow | Kind::SlidingWindow if r1 % 3 == 0 => s.offset = Some(Nanos::new(r2 % window)),
                Kind::SlidingBuckets => {
                    let p = window / n.min(window).max(1);
                    let p = (1..=p).rev().find(|d| window % d == 0).unwrap_or(1);
                    s.precision = Some(Nanos::new(p));
                    if r1 % 3 == 0 {
                        s.offset = Some(Nanos::new(r2 % p));
                    }
                }
                Kind::TokenBucket | Kind::Gcra => {
                    if r1 % 2 == 0 {
                        s.burst = Some(1 + r2 % 8);
                    }
                    if kind == Kind::TokenBucket && r1 % 3 == 0 {
                        let cap = s.burst.unwrap_or(limit);
                        s.refill_amount = Some(1 + (r2 >> 8) % cap);
                    }
                }
                _ => {}
            }
            s
        },
    )
}

fn algorithm() -> impl Strategy<Value = AnyAlgorithm> {
    spec().prop_map(|s| AnyAlgorithm::from_spec(&s).expect("the strategy only makes valid specs"))
}

/// A trace of (time step, cost draw); the cost is reduced modulo the capacity later.
fn trace(max_step: u64) -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0..=max_step, 1u64..=8), 1..120)
}

/// A trace whose time also goes backwards: (signed step, cost draw).
fn wild_trace() -> impl Strategy<Value = Vec<(i64, u64)>> {
    prop::collection::vec((-80i64..=120, 1u64..=8), 1..120)
}

const ORIGIN: u64 = 1_000_000;

fn cost_of(a: &AnyAlgorithm, draw: u64) -> u64 {
    1 + (draw - 1) % a.capacity()
}

// ---------------------------------------------------------------------------------------
// The bound each algorithm documents, over admitted hits (time, cost).

fn sum_in(hits: &[(Nanos, u64)], from: Nanos, to_inclusive: Nanos) -> u64 {
    hits.iter().filter(|(t, _)| *t >= from && *t <= to_inclusive).map(|(_, c)| c).sum()
}

fn assert_bound(a: &AnyAlgorithm, hits: &[(Nanos, u64)]) -> Result<(), TestCaseError> {
    let mut hits = hits.to_vec();
    hits.sort();
    for &(t, _) in &hits {
        match a {
            AnyAlgorithm::FixedWindow(fw) => {
                let al = fw.alignment();
                let in_window: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                prop_assert!(in_window <= fw.limit(), "fixed window: {in_window} in one window");
            }
            AnyAlgorithm::FixedWindowFirstHit(_) | AnyAlgorithm::SlidingWindow(_) => {
                let (limit, window) = a.advertised_quota();
                let most = sum_in(&hits, t, t + window - Nanos::new(1));
                prop_assert!(most <= 2 * limit, "{}: {most} within one window length", a.name());
                if let AnyAlgorithm::SlidingWindow(sw) = a {
                    let al = sw.alignment();
                    let aligned: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                    prop_assert!(aligned <= limit, "sliding window: {aligned} in one aligned window");
                }
            }
            AnyAlgorithm::SlidingLog(_) => {
                let (limit, window) = a.advertised_quota();
                let most = sum_in(&hits, t.saturating_sub(window), t);
                prop_assert!(most <= limit, "sliding log: {most} in a closed window ending at {t:?}");
            }
            AnyAlgorithm::SlidingBuckets(sb) => {
                let al = sb.alignment();
                let first = al.index(t);
                let span: u64 = hits
                    .iter()
                    .filter(|(u, _)| al.index(*u) >= first && al.index(*u) < first + sb.bucket_count())
                    .map(|(_, c)| c)
                    .sum();
                prop_assert!(span <= sb.limit(), "sliding buckets: {span} in {} buckets", sb.bucket_count());
            }
            AnyAlgorithm::TokenBucket(tb) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let refills = (u - t).as_nanos().div_ceil(tb.interval().as_nanos());
                    let bound = tb.limit() + tb.refill_amount() * refills;
                    let got = sum_in(&hits, t, u);
                    prop_assert!(got <= bound, "token bucket: {got} in [{t:?}, {u:?}], bound {bound}");
                }
            }
            AnyAlgorithm::Gcra(g) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let bound = g.burst() + (u - t).as_nanos() / g.emission_interval().as_nanos();
                    let got = sum_in(&hits, t, u);
                    prop_assert!(got <= bound, "gcra: {got} in [{t:?}, {u:?}], bound {bound}");
                }
            }
            // Not among the generated algorithms (tests/concurrency.rs holds its bound).
            _ => {}
        }
    }
    Ok(())
}

/// The latest instant a state has recorded: a clock that went back decides as if it were
/// this time (or stricter), so that is where an admitted hit counts.
fn recorded_time(a: &AnyAlgorithm, s: Option<&AnyState>, now: Nanos) -> Nanos {
    let latest = match (a, s) {
        (_, None) => Nanos::ZERO,
        (_, Some(AnyState::FixedWindow(s))) => s.start,
        (_, Some(AnyState::FixedWindowFirstHit(s))) => s.start,
        (_, Some(AnyState::SlidingLog(s))) => s.entries().last().map_or(Nanos::ZERO, |e| e.at),
        (_, Some(AnyState::SlidingWindow(s))) => s.start,
        (AnyAlgorithm::SlidingBuckets(sb), Some(AnyState::SlidingBuckets(s))) => sb.alignment().start(s.buckets().0),
        (_, Some(AnyState::TokenBucket(s))) => s.anchor,
        // GCRA needs no clamping: an earlier `now` is only stricter.
        _ => Nanos::ZERO,
    };
    now.max(latest)
}

// ---------------------------------------------------------------------------------------
// Per-hit properties

/// Checks everything that must hold for one hit at `now` against `before`, and returns the
/// decision and the state after the hit.
fn check_one(
    a: &AnyAlgorithm,
    before: &Option<AnyState>,
    now: Nanos,
    cost: u64,
) -> Result<(Decision, Option<AnyState>), TestCaseError> {
    let outcome = a.check(before.as_ref(), now, cost).unwrap();
    let d = outcome.decision;

    // A peek gives the same answer and changes nothing.
    prop_assert_eq!(a.peek(before.as_ref(), now, cost).unwrap(), d);
    // The in-place path agrees with the pure one.
    let mut slot = before.clone();
    prop_assert_eq!(check_slot(a, &mut slot, now, cost).unwrap(), d);
    // A policy of this one limit decides the same for one key (its one-pair path), counting
    // the hit in the same state, or leaving it as it was.
    let policy = Policy::single(*a);
    let mut states = [before.clone().map(|s| single_state(&policy, Some(s)))];
    let pd = policy.check(&mut states, now, cost).unwrap();
    prop_assert_eq!((pd.allowed, pd.decision), (d.allowed, d));
    prop_assert_eq!(states[0].as_ref().and_then(|s| s.slots()[0].clone()), slot.clone());
    prop_assert_eq!(states[0].as_ref().map(PolicyState::expires_at), slot.as_ref().map(|s| a.fresh_at(s)));
    // Its `peek` answers the same and, like every peek, changes nothing.
    let peeked = [before.clone().map(|s| single_state(&policy, Some(s)))];
    let pp = policy.peek(&peeked, now, cost).unwrap();
    prop_assert_eq!(&pp, &pd);
    prop_assert_eq!(&peeked[0], &before.clone().map(|s| single_state(&policy, Some(s))));
    // That one-pair path of `check` and `peek` decides as the general path does: the same
    // limit with a penalty goes the general way, which answers the same while no block
    // applies (its pairs keep the limit's own answer when it denies, and start a block).
    let general = Policy::single(*a).with_block_duration(Nanos::new(1));
    let mut gstates = [before.clone().map(|s| single_state(&general, Some(s)))];
    prop_assert_eq!(&general.peek(&gstates, now, cost).unwrap(), &pd);
    let gd = general.check(&mut gstates, now, cost).unwrap();
    prop_assert_eq!(gd.limits[0].decision, d);
    if d.allowed {
        prop_assert_eq!(&gd, &pd);
        prop_assert_eq!(&gstates[0], &states[0]);
    }

    if d.allowed {
        prop_assert!(outcome.state.is_some());
        prop_assert_eq!(&slot, &outcome.state);
        prop_assert_eq!(d.retry_after, Nanos::ZERO);
        let new = outcome.state.as_ref().unwrap();
        // reset_at is when the state becomes fresh, and from then on it decides like a new key.
        prop_assert_eq!(d.reset_at, a.fresh_at(new), "reset_at");
        for later in [d.reset_at, d.reset_at + Nanos::new(1), d.reset_at + Nanos::new(977)] {
            prop_assert_eq!(a.peek(Some(new), later, cost).unwrap(), a.peek(None, later, cost).unwrap());
        }
        // remaining is exact: that many more unit hits fit now, and not one more.
        let mut s = outcome.state.clone();
        for _ in 0..d.remaining.min(64) {
            prop_assert!(check_slot(a, &mut s, now, 1).unwrap().allowed, "remaining {} overstated", d.remaining);
        }
        if d.remaining <= 64 {
            prop_assert!(!a.peek(s.as_ref(), now, 1).unwrap().allowed, "remaining {} understated", d.remaining);
        }
        // A refund of the same cost at the same instant gives the room back.
        let refunded = a.refund(new, now, cost);
        let room_before = a.peek(before.as_ref(), now, 1).unwrap();
        let room_after = a.peek(refunded.as_ref(), now, 1).unwrap();
        prop_assert_eq!(room_after.remaining, room_before.remaining, "refund");
        // State survives the codec.
        let policy = Policy::single(*a);
        let ps = single_state(&policy, Some(new.clone()));
        let decoded = PolicyState::decode(&ps.encode()).unwrap();
        policy.validate_state(&decoded).unwrap();
        prop_assert_eq!(decoded, ps);
    } else {
        // A denied hit is not counted anywhere.
        prop_assert!(outcome.state.is_none());
        prop_assert_eq!(&slot, before);
        prop_assert!(d.remaining < cost, "denied with {} remaining for cost {cost}", d.remaining);
        // retry_after is exact: denied just before it, allowed at it.
        let r = d.retry_after;
        prop_assert!(r > Nanos::ZERO);
        prop_assert!(
            !a.peek(before.as_ref(), now + r - Nanos::new(1), cost).unwrap().allowed,
            "denied before retry_after"
        );
        prop_assert!(a.peek(before.as_ref(), now + r, cost).unwrap().allowed, "allowed at retry_after {r:?}");
    }
    Ok((d, if d.allowed { outcome.state } else { before.clone() }))
}

fn single_state(policy: &Policy, slot: Option<AnyState>) -> PolicyState {
    policy.state_from_slots(vec![slot]).unwrap().unwrap()
}

proptest! {
    // 600 cases by default; PROPTEST_CASES=100000 for a long soak.
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(600)))]

    /// Monotone time: every per-hit property, and the documented bound over the whole trace.
    #[test]
    fn every_algorithm_keeps_its_guarantees(a in algorithm(), steps in trace(40)) {
        let mut state = None;
        let mut now = Nanos::new(ORIGIN);
        let mut admitted = Vec::new();
        for (dt, draw) in steps {
            now = now + Nanos::new(dt);
            let cost = cost_of(&a, draw);
            let (d, next) = check_one(&a, &state, now, cost)?;
            if d.allowed {
                admitted.push((now, cost));
            }
            state = next;
        }
        assert_bound(&a, &admitted)?;
    }

    /// Time going backwards: still every per-hit property; never more permissive than at the
    /// latest time seen; the bound holds with each hit counted where the state recorded it.
    #[test]
    fn time_going_backwards_never_admits_extra(a in algorithm(), steps in wild_trace()) {
        let mut state: Option<AnyState> = None;
        let mut now = Nanos::new(ORIGIN);
        let mut latest = now;
        let mut admitted = Vec::new();
        for (dt, draw) in steps {
            now = if dt < 0 { now.saturating_sub(Nanos::new(dt.unsigned_abs())) } else { now + Nanos::new(dt as u64) };
            latest = latest.max(now);
            let cost = cost_of(&a, draw);
            if a.peek(state.as_ref(), now, cost).unwrap().allowed {
                prop_assert!(a.peek(state.as_ref(), latest, cost).unwrap().allowed,
                    "allowed at {now:?} but not at the later {latest:?}");
            }
            let recorded = recorded_time(&a, state.as_ref(), now);
            let (d, next) = check_one(&a, &state, now, cost)?;
            // State never moves back in time.
            prop_assert!(
                recorded_time(&a, next.as_ref(), Nanos::ZERO) >= recorded_time(&a, state.as_ref(), Nanos::ZERO),
                "a check at {now:?} wrote state in the past"
            );
            if d.allowed {
                admitted.push((if matches!(a, AnyAlgorithm::Gcra(_)) { now } else { recorded }, cost));
            }
            state = next;
        }
        assert_bound(&a, &admitted)?;
    }

    /// Costs that can never fit, and zero, are errors that change nothing.
    #[test]
    fn impossible_costs_are_errors_not_denials(a in algorithm(), extra in 1u64..1000) {
        prop_assert!(a.check(None, Nanos::new(ORIGIN), a.capacity() + extra).is_err());
        prop_assert!(a.check(None, Nanos::new(ORIGIN), 0).is_err());
    }

    /// Several limits over several keys: all or nothing, the blocking pair named, exact retry.
    #[test]
    fn policies_are_all_or_nothing(
        algorithms in prop::collection::vec(algorithm(), 1..4),
        keys in 1usize..4,
        steps in trace(30),
        which in prop::collection::vec(0usize..8, 120),
    ) {
        let limits = algorithms.iter().enumerate().map(|(i, a)| Limit::new(&format!("l{i}"), *a).unwrap()).collect();
        let policy = Policy::new(limits).unwrap();
        let capacity = algorithms.iter().map(|a| a.capacity()).min().unwrap();
        let mut states: Vec<Option<PolicyState>> = vec![None; 3];
        let mut now = Nanos::new(ORIGIN);
        for (i, (dt, draw)) in steps.into_iter().enumerate() {
            now = now + Nanos::new(dt);
            let cost = 1 + (draw - 1) % capacity;
            // A hit names `keys` of the three keys, starting at a random one.
            let chosen: Vec<usize> = (0..keys).map(|k| (which[i] + k) % 3).collect();
            let mut slots: Vec<Option<PolicyState>> = chosen.iter().map(|&k| states[k].clone()).collect();
            let before = slots.clone();
            let d = policy.check(&mut slots, now, cost).unwrap();
            // Each pair alone.
            let mut alone = Vec::new();
            for (k, st) in before.iter().enumerate() {
                for (j, l) in policy.limits().iter().enumerate() {
                    let slot = st.as_ref().and_then(|s| s.slots()[j].clone());
                    let out = l.algorithm().check(slot.as_ref(), now, cost).unwrap();
                    alone.push((LimitRef { key: k, limit: j }, out));
                }
            }
            prop_assert_eq!(d.allowed, alone.iter().all(|(_, o)| o.decision.allowed));
            if d.allowed {
                for (at, out) in &alone {
                    prop_assert_eq!(slots[at.key].as_ref().unwrap().slots()[at.limit].as_ref(), out.state.as_ref());
                }
                let expires = slots.iter().flatten().map(|s| s.expires_at()).collect::<Vec<_>>();
                for (s, e) in slots.iter().flatten().zip(expires) {
                    prop_assert_eq!(policy.expiry(s), e);
                }
            } else {
                prop_assert_eq!(&slots, &before, "a denied hit changed state");
                let blocked = d.blocked_by().unwrap();
                let (_, o) = alone.iter().find(|(at, _)| *at == blocked).unwrap();
                prop_assert!(!o.decision.allowed, "blocked_by names a pair that allowed");
                let r = d.decision.retry_after;
                prop_assert!(!policy.peek(&before, now + r - Nanos::new(1), cost).unwrap().allowed);
                prop_assert!(policy.peek(&before, now + r, cost).unwrap().allowed);
            }
            for (&k, s) in chosen.iter().zip(slots) {
                states[k] = s;
            }
        }
    }

    /// Decoding arbitrary bytes never panics, and what decodes re-encodes to the same bytes.
    #[test]
    fn decoding_garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(state) = PolicyState::decode(&bytes) {
            prop_assert_eq!(PolicyState::decode(&state.encode()).unwrap(), state);
        }
        let _ = tollgate::codec::decode_state(&bytes);
    }

    /// Any state a store can hand back (imported, merged across nodes with counts above the
    /// limit, written by a skewed clock) is decided without a panic or an overflow.
    #[test]
    fn arbitrary_stored_states_never_panic(
        a in algorithm(),
        fields in prop::collection::vec(any::<u64>(), 8),
        small in prop::collection::vec(0u64..1000, 8),
        now in any::<u64>(),
        draw in 1u64..8,
    ) {
        use tollgate::algorithms::*;
        let pick = |i: usize| if fields[7] % 2 == 0 { fields[i] } else { small[i] };
        let state = match a {
            AnyAlgorithm::FixedWindow(_) => AnyState::FixedWindow(FixedWindowState { start: Nanos::new(pick(0)), count: pick(1) }),
            AnyAlgorithm::FixedWindowFirstHit(_) => AnyState::FixedWindowFirstHit(FirstHitState { start: Nanos::new(pick(0)), count: pick(1) }),
            AnyAlgorithm::SlidingWindow(_) => AnyState::SlidingWindow(SlidingWindowState { start: Nanos::new(pick(0)), current: pick(1), previous: pick(2) }),
            AnyAlgorithm::TokenBucket(tb) => AnyState::TokenBucket(TokenBucketState { tokens: pick(1) % (tb.limit() + 1), anchor: Nanos::new(pick(0)) }),
            AnyAlgorithm::Gcra(_) => AnyState::Gcra(GcraState { tat: Nanos::new(pick(0)) }),
            AnyAlgorithm::SlidingLog(_) | AnyAlgorithm::SlidingBuckets(_) => {
                // Build through the codec so the variable-length states stay well formed.
                let mut bytes = vec![if matches!(a, AnyAlgorithm::SlidingLog(_)) { 3 } else { 5 }];
                if matches!(a, AnyAlgorithm::SlidingLog(_)) {
                    leb(&mut bytes, 2);
                    leb(&mut bytes, pick(0));
                    leb(&mut bytes, pick(1).max(1));
                    leb(&mut bytes, pick(2).max(1));
                    leb(&mut bytes, pick(3).max(1));
                } else {
                    leb(&mut bytes, pick(0).max(1));
                    leb(&mut bytes, 1);
                    leb(&mut bytes, pick(1));
                }
                match tollgate::codec::decode_state(&bytes) {
                    Ok(s) => s,
                    Err(_) => return Ok(()),
                }
            }
            AnyAlgorithm::Concurrency(_) => AnyState::Concurrency(ConcurrencyState {
                leases: vec![HeldLease { id: pick(1), expires_at: Nanos::new(pick(0)) }],
                queue: Vec::new(),
            }),
        };
        let now = Nanos::new(if fields[6] % 2 == 0 { now } else { ORIGIN + now % 10_000 });
        let cost = cost_of(&a, draw);
        let out = a.check(Some(&state), now, cost).unwrap();
        prop_assert_eq!(a.peek(Some(&state), now, cost).unwrap(), out.decision);
        let _ = a.refund(&state, now, cost);
        let _ = a.fresh_at(&state);
    }

    /// The pacer never schedules more than its rate in any closed window of the service's
    /// length, nor more than its share in any grain; starts are in order and never early.
    #[test]
    fn the_pacer_never_exceeds_its_rate(
        rate in 1u64..=40,
        window in 1u64..=200,
        grain_div in 1u64..=8,
        work in prop::collection::vec((0u64..=50, 1u64..=8), 1..150),
    ) {
        let window = window.max(rate);
        let grain = (window / grain_div).max(1);
        let quota = tollgate::Quota::new(rate, Nanos::new(window)).unwrap();
        let mut pacer = tollgate::pacer::Pacer::new(quota, Nanos::new(grain)).unwrap();
        let mut now = Nanos::new(ORIGIN);
        let mut starts: Vec<(Nanos, u64)> = Vec::new();
        for (dt, draw) in work {
            now = now + Nanos::new(dt);
            let cost = 1 + (draw - 1) % pacer.max_cost();
            let start = pacer.reserve(now, cost).unwrap();
            prop_assert!(start >= now);
            prop_assert!(starts.last().is_none_or(|(s, _)| start >= *s), "out of order");
            starts.push((start, cost));
        }
        for &(t, _) in &starts {
            prop_assert!(sum_in(&starts, t, t + Nanos::new(window)) <= rate, "rate exceeded");
            prop_assert!(sum_in(&starts, t, t + Nanos::new(grain)) <= pacer.per_grain(), "share exceeded");
        }
    }

    /// Pruning idle keys never changes a decision.
    #[test]
    fn pruning_idle_keys_changes_no_decision(a in algorithm(), steps in trace(60), keys in prop::collection::vec(0u8..6, 120)) {
        let mut pruned = tollgate::KeyedLimiter::<AnyAlgorithm, u8>::with_key_type(a);
        let mut kept = tollgate::KeyedLimiter::<AnyAlgorithm, u8>::with_key_type(a);
        let mut now = Nanos::new(ORIGIN);
        for (i, (dt, draw)) in steps.into_iter().enumerate() {
            now = now + Nanos::new(dt);
            let cost = cost_of(&a, draw);
            pruned.prune(now);
            prop_assert_eq!(pruned.check(&keys[i], now, cost).unwrap(), kept.check(&keys[i], now, cost).unwrap());
        }
    }
}

/// Appends an unsigned LEB128 varint (the codec's integer encoding).
fn leb(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
