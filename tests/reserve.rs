//! Property tests of reserve and settle (`tollgate::reserve`) against a reference model: the
//! charges that stand (a reservation at its estimate less what settling gave back, at the
//! time it was reserved; an excess at the time it was settled) keep every algorithm's
//! documented bound plus its debt bound (one limit of debt, docs/reserve.md); a key in debt
//! is denied until the debt is paid, with an exact `retry_after`; a settlement that fails
//! changes no byte; time going backwards never corrupts a state.

mod support;

use proptest::prelude::*;
use support::algorithm;
use tollgate::policy::{Limit, Policy, PolicyState};
use tollgate::reserve::{charge_debt, Reservation, SettleError, MAX_OPEN, SETTLE_WITHIN};
use tollgate::{Algorithm, AnyAlgorithm, Kind, LimitSpec, Nanos};

const ORIGIN: u64 = 1_000_000;

#[derive(Clone, Debug)]
enum Op {
    /// A plain hit: time step, cost draw.
    Hit(u64, u64),
    /// A reservation: time step, estimate draw.
    Reserve(u64, u64),
    /// A settlement of the `pick`-th reservation made so far: time step, pick, actual draw.
    Settle(u64, usize, u64),
}

fn ops(max_step: u64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        (0..=max_step, 1u64..=8).prop_map(|(t, c)| Op::Hit(t, c)),
        (0..=max_step, 1u64..=8).prop_map(|(t, c)| Op::Reserve(t, c)),
        (0..=max_step, any::<usize>(), 0u64..=12).prop_map(|(t, p, a)| Op::Settle(t, p, a)),
    ];
    prop::collection::vec(op, 1..120)
}

fn sum_in(hits: &[(Nanos, u64)], from: Nanos, to_inclusive: Nanos) -> u64 {
    hits.iter().filter(|(t, _)| *t >= from && *t <= to_inclusive).map(|(_, c)| c).sum()
}

/// The bound each algorithm documents (docs/algorithms.md), over the charges that stand,
/// plus the debt bound of docs/reserve.md: one cap (the limit, the capacity, the burst) in
/// every window, or in every aligned window of the window algorithms (two in a window's
/// length that spans two of them).
fn assert_bound(a: &AnyAlgorithm, hits: &[(Nanos, u64)]) -> Result<(), TestCaseError> {
    let cap = a.capacity();
    let mut hits: Vec<_> = hits.iter().copied().filter(|(_, c)| *c > 0).collect();
    hits.sort();
    for &(t, _) in &hits {
        match a {
            AnyAlgorithm::FixedWindow(fw) => {
                let al = fw.alignment();
                let got: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                prop_assert!(got <= fw.limit() + cap, "fixed window: {got} in one window");
            }
            AnyAlgorithm::FixedWindowFirstHit(_) | AnyAlgorithm::SlidingWindow(_) => {
                let (limit, window) = a.advertised_quota();
                let most = sum_in(&hits, t, t + window - Nanos::new(1));
                prop_assert!(most <= 2 * (limit + cap), "{}: {most} within one window length", a.name());
                if let AnyAlgorithm::SlidingWindow(sw) = a {
                    let al = sw.alignment();
                    let got: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                    prop_assert!(got <= limit + cap, "sliding window: {got} in one aligned window");
                }
            }
            AnyAlgorithm::SlidingLog(_) => {
                let (limit, window) = a.advertised_quota();
                let most = sum_in(&hits, t.saturating_sub(window), t);
                prop_assert!(most <= limit + cap, "sliding log: {most} in a closed window ending at {t:?}");
            }
            AnyAlgorithm::SlidingBuckets(sb) => {
                let al = sb.alignment();
                let first = al.index(t);
                let span: u64 = hits
                    .iter()
                    .filter(|(u, _)| al.index(*u) >= first && al.index(*u) < first + sb.bucket_count())
                    .map(|(_, c)| c)
                    .sum();
                prop_assert!(span <= sb.limit() + cap, "sliding buckets: {span} in {} buckets", sb.bucket_count());
            }
            AnyAlgorithm::TokenBucket(tb) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let refills = (u - t).as_nanos().div_ceil(tb.interval().as_nanos());
                    let bound = tb.limit() + tb.refill_amount() * refills + cap;
                    let got = sum_in(&hits, t, u);
                    prop_assert!(got <= bound, "token bucket: {got} in [{t:?}, {u:?}], bound {bound}");
                }
            }
            AnyAlgorithm::Gcra(g) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let bound = g.burst() + (u - t).as_nanos() / g.emission_interval().as_nanos() + cap;
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

/// After a settlement, a key the figures deny (in debt, or full) admits nothing before
/// `now + retry_after` and one unit at it; peeking changes nothing.
fn assert_denied_until_paid(
    policy: &Policy,
    states: &[Option<PolicyState>],
    now: Nanos,
    allowed: bool,
    retry_after: Nanos,
) -> Result<(), TestCaseError> {
    let before = bytes(states);
    if allowed {
        prop_assert!(policy.peek(states, now, 1).unwrap().allowed);
    } else {
        prop_assert!(retry_after > Nanos::ZERO);
        prop_assert!(
            !policy.peek(states, now + retry_after - Nanos::new(1), 1).unwrap().allowed,
            "admitted before retry_after"
        );
        prop_assert!(policy.peek(states, now + retry_after, 1).unwrap().allowed, "denied at retry_after");
    }
    prop_assert_eq!(bytes(states), before, "a peek changed the state");
    Ok(())
}

fn cost_of(a: &AnyAlgorithm, draw: u64) -> u64 {
    1 + (draw - 1) % a.capacity()
}

fn bytes(states: &[Option<PolicyState>]) -> Vec<Option<Vec<u8>>> {
    states.iter().map(|s| s.as_ref().map(PolicyState::encode)).collect()
}

/// Every state survives the codec and fits its policy.
fn assert_stored(policy: &Policy, states: &[Option<PolicyState>]) -> Result<(), TestCaseError> {
    for s in states.iter().flatten() {
        let back = PolicyState::decode(&s.encode()).unwrap();
        policy.validate_state(&back).unwrap();
        prop_assert_eq!(&back, s);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(600)))]

    /// Reserving decides and charges exactly as a check of the estimate; the charges that
    /// stand after settling keep the algorithm's bound plus its debt bound; only the excess
    /// past the debt cap is forgiven; a key the settlement leaves denied admits again exactly
    /// at its `retry_after`; a second settlement is an error that changes nothing.
    #[test]
    fn settled_charges_keep_every_bound(a in algorithm(), ops in ops(40)) {
        let policy = Policy::single(a);
        let mut states = [None];
        let mut now = Nanos::new(ORIGIN);
        // The charges that stand: (time, units); a reservation's entry is corrected at settlement.
        let mut charges: Vec<(Nanos, u64)> = Vec::new();
        // Reservations made: (id, estimate, index of its charge, settled).
        let mut made: Vec<(u64, u64, usize, bool)> = Vec::new();
        for (n, op) in ops.into_iter().enumerate() {
            match op {
                Op::Hit(dt, draw) => {
                    now = now + Nanos::new(dt);
                    let cost = cost_of(&a, draw);
                    if policy.check(&mut states, now, cost).unwrap().allowed {
                        charges.push((now, cost));
                    }
                }
                Op::Reserve(dt, draw) => {
                    now = now + Nanos::new(dt);
                    let estimate = cost_of(&a, draw);
                    let mut checked = states.clone();
                    let want = policy.check(&mut checked, now, estimate).unwrap();
                    let id = n as u64 * 7919 + 1;
                    let got = policy.reserve(&mut states, now, estimate, id).unwrap();
                    prop_assert_eq!(&got, &want);
                    // The same charge as a check: only the ledger differs.
                    prop_assert_eq!(states[0].as_ref().map(|s| s.slots().to_vec()), checked[0].as_ref().map(|s| s.slots().to_vec()));
                    if got.allowed {
                        charges.push((now, estimate));
                        made.push((id, estimate, charges.len() - 1, false));
                    }
                }
                Op::Settle(dt, pick, actual) => {
                    now = now + Nanos::new(dt);
                    if made.is_empty() {
                        continue;
                    }
                    let k = pick % made.len();
                    let (id, estimate, at, settled) = made[k];
                    let before = bytes(&states);
                    let open = states[0].as_ref().is_some_and(|s| s.open_reservations() > 0);
                    match policy.settle(&mut states, now, id, estimate, actual) {
                        Ok(s) => {
                            prop_assert!(!settled, "settled twice");
                            prop_assert!(open);
                            prop_assert!(s.refunded <= estimate.saturating_sub(actual));
                            prop_assert_eq!(s.charged + s.forgiven, actual.saturating_sub(estimate));
                            charges[at].1 -= s.refunded;
                            charges.push((now, s.charged));
                            made[k].3 = true;
                            if s.forgiven > 0 {
                                // Forgiven only past the cap: the limit charges none of it.
                                let slot = states[0].as_ref().and_then(|st| st.slots()[0].clone());
                                prop_assert_eq!(charge_debt(&a, slot.as_ref(), now, s.forgiven).1, 0);
                            }
                            let d = &s.decision;
                            assert_denied_until_paid(&policy, &states, now, d.allowed, d.decision.retry_after)?;
                        }
                        Err(e) => {
                            prop_assert_eq!(e, SettleError::UnknownReservation);
                            prop_assert_eq!(bytes(&states), before, "a failed settlement changed the state");
                            // Only a settled reservation, or one dropped from a full ledger, fails.
                            prop_assert!(settled || made.iter().filter(|m| !m.3).count() > MAX_OPEN);
                        }
                    }
                }
            }
            assert_stored(&policy, &states)?;
        }
        assert_bound(&a, &charges)?;
    }

    /// Time going backwards, reservations past their settling time, resets, a full ledger,
    /// and settlements of another estimate: a failed settlement changes no byte, and every
    /// state stays one the codec and the policy accept.
    #[test]
    fn failed_settlements_change_nothing(
        a in algorithm(),
        b in algorithm(),
        steps in prop::collection::vec((-80i64..=120, 0u8..6, 1u64..=8, any::<usize>(), 0u64..=12), 1..150),
    ) {
        let policy = Policy::new(vec![Limit::new("a", a).unwrap(), Limit::new("b", b).unwrap()]).unwrap();
        let capacity = a.capacity().min(b.capacity());
        let mut states = [None, None];
        let mut now = Nanos::new(ORIGIN);
        let mut made: Vec<(u64, u64)> = Vec::new();
        for (n, (dt, what, draw, pick, actual)) in steps.into_iter().enumerate() {
            now = if dt < 0 { now.saturating_sub(Nanos::new(dt.unsigned_abs())) } else { now + Nanos::new(dt as u64) };
            let cost = 1 + (draw - 1) % capacity;
            match what {
                0 | 1 => {
                    let id = n as u64 + 1;
                    if policy.reserve(&mut states, now, cost, id).unwrap().allowed {
                        made.push((id, cost));
                    }
                }
                2 => {
                    policy.check(&mut states[..1], now, cost).unwrap();
                }
                3 if n % 5 == 0 => {
                    // A reset of one key: its reservations can no longer be settled on both.
                    states[n % 2] = None;
                }
                3 => {
                    // A jump past every reservation's settling time.
                    now = now + SETTLE_WITHIN + policy.longest_window();
                }
                _ if !made.is_empty() => {
                    let (id, estimate) = made[pick % made.len()];
                    let estimate = if pick % 7 == 0 { estimate + 1 } else { estimate };
                    let before = bytes(&states);
                    if policy.settle(&mut states, now, id, estimate, actual).is_err() {
                        prop_assert_eq!(bytes(&states), before, "a failed settlement changed the state");
                    }
                }
                _ => {}
            }
            assert_stored(&policy, &states)?;
            for s in states.iter().flatten() {
                prop_assert!(s.open_reservations() <= MAX_OPEN);
                prop_assert!(s.expires_at() >= s.slots().iter().zip(policy.limits()).filter_map(|(s, l)| s.as_ref().map(|s| l.algorithm().fresh_at(s))).max().unwrap_or(Nanos::ZERO));
            }
        }
    }

    /// A token is opaque but exact: it round-trips, and bytes that are not one are refused.
    #[test]
    fn tokens_round_trip(id in any::<u64>(), estimate in 1u64.., keys in prop::collection::vec("[a-z:é]{1,12}", 1..4), junk in "[A-Za-z0-9_-]{0,40}") {
        let r = Reservation { id, estimate, policy: String::new(), keys };
        prop_assert_eq!(Reservation::from_token(&r.to_token()), Ok(r.clone()));
        if junk != r.to_token() {
            let _ = Reservation::from_token(&junk);
        }
    }
}

fn ten_per_10s(kind: Kind) -> AnyAlgorithm {
    let mut s = LimitSpec::new(kind, 10, Nanos::from_secs(10));
    if kind == Kind::SlidingBuckets {
        s.precision = Some(Nanos::from_secs(1));
    }
    AnyAlgorithm::from_spec(&s).unwrap()
}

/// A reservation never settled stays charged at its estimate: the key decides as if a hit
/// of the estimate had been checked, until its state expires.
#[test]
fn an_unsettled_reservation_stays_charged() {
    for kind in Kind::ALL {
        let a = ten_per_10s(kind);
        let policy = Policy::single(a);
        let (mut reserved, mut checked) = ([None], [None]);
        let now = Nanos::from_secs(100);
        policy.reserve(&mut reserved, now, 6, 1).unwrap();
        policy.check(&mut checked, now, 6).unwrap();
        for later in [0, 1, 3, 7, 11] {
            let t = now + Nanos::from_secs(later);
            assert_eq!(
                policy.peek(&reserved, t, 4).unwrap(),
                policy.peek(&checked, t, 4).unwrap(),
                "{kind:?} +{later}s"
            );
        }
        // The ledger keeps the key until the reservation can no longer be settled.
        assert_eq!(reserved[0].as_ref().unwrap().expires_at(), now + SETTLE_WITHIN);
    }
}

/// Settling gives back the unused estimate at once, on every algorithm, when nothing else
/// was counted; an excess is charged whole, past the limit, up to one limit of debt, and
/// only the rest is forgiven; the key in debt is denied until it is paid.
#[test]
fn settling_refunds_and_charges() {
    for kind in Kind::ALL {
        let a = ten_per_10s(kind);
        let policy = Policy::single(a);
        let now = Nanos::from_secs(100);
        let mut states = [None];
        policy.reserve(&mut states, now, 8, 1).unwrap();
        let s = policy.settle(&mut states, now, 1, 8, 3).unwrap();
        assert_eq!((s.refunded, s.charged, s.forgiven), (5, 0, 0), "{kind:?}");
        assert_eq!(s.decision.decision.remaining, 7, "{kind:?}");
        assert!(s.decision.allowed);
        assert_eq!(policy.settle(&mut states, now, 1, 8, 3), Err(SettleError::UnknownReservation));
        policy.reserve(&mut states, now, 2, 2).unwrap();
        policy.reserve(&mut states, now, 2, 3).unwrap();
        // 7 of 10 counted: the excess of 10 goes 7 past the limit, into debt.
        let s = policy.settle(&mut states, now, 2, 2, 12).unwrap();
        assert_eq!((s.refunded, s.charged, s.forgiven), (0, 10, 0), "{kind:?}");
        assert_eq!(s.decision.decision.remaining, 0);
        assert!(!s.decision.allowed && s.decision.decision.retry_after > Nanos::ZERO);
        // 17 counted: the debt cap (one limit) takes 3 more of an excess of 18.
        let s = policy.settle(&mut states, now, 3, 2, 20).unwrap();
        assert_eq!((s.refunded, s.charged, s.forgiven), (0, 3, 15), "{kind:?}");
        let retry = s.decision.decision.retry_after;
        assert!(!policy.peek(&states, now + retry - Nanos::new(1), 1).unwrap().allowed, "{kind:?}");
        assert!(policy.peek(&states, now + retry, 1).unwrap().allowed, "{kind:?}");
    }
}

/// Settling charges every limit of every key the same excess: when one limit reaches its
/// debt cap first, every limit is charged only that much and the rest is forgiven.
#[test]
fn the_first_cap_reached_binds_every_limit_and_key() {
    let ten = ten_per_10s(Kind::FixedWindow);
    let hundred = AnyAlgorithm::from_spec(&LimitSpec::new(Kind::Gcra, 100, Nanos::from_secs(10))).unwrap();
    let policy = Policy::new(vec![Limit::new("ten", ten).unwrap(), Limit::new("hundred", hundred).unwrap()]).unwrap();
    let now = Nanos::from_secs(100);
    let mut states = [None, None];
    policy.reserve(&mut states[1..], now, 4, 1).unwrap();
    policy.reserve(&mut states, now, 2, 2).unwrap();
    // The second key's 10/10s limit holds 6: its cap (20) takes 14 of the excess of 28.
    let s = policy.settle(&mut states, now, 2, 2, 30).unwrap();
    assert_eq!((s.charged, s.forgiven), (14, 14));
    let figures = |i: usize| policy.peek(&states[i..=i], now, 1).unwrap().limits;
    assert!(!figures(0).iter().next().unwrap().decision.allowed);
    // The 100/10s meter of each key was charged the same 14 past its estimate: 16 and 20 used
    // (a denied peek shows what each limit holds).
    let remaining: Vec<u64> = (0..2).map(|i| figures(i).iter().nth(1).unwrap().decision.remaining).collect();
    assert_eq!(remaining, [100 - 16, 100 - 20]);
}

/// A full ledger drops its oldest reservation, which stays charged; a reset key's
/// reservations are unknown; several keys settle all or nothing.
#[test]
fn the_ledger_is_bounded_and_all_or_nothing() {
    let a = AnyAlgorithm::from_spec(&LimitSpec::new(Kind::Gcra, 1000, Nanos::from_secs(1))).unwrap();
    let policy = Policy::single(a);
    let now = Nanos::from_secs(100);
    let mut states = [None, None];
    for id in 1..=(MAX_OPEN as u64 + 1) {
        assert!(policy.reserve(&mut states, now, 1, id).unwrap().allowed);
    }
    assert_eq!(states[0].as_ref().unwrap().open_reservations(), MAX_OPEN);
    assert_eq!(policy.settle(&mut states, now, 1, 1, 0), Err(SettleError::UnknownReservation));
    assert!(policy.settle(&mut states, now, 2, 1, 0).is_ok());
    states[1] = None; // a reset of the second key
    let before = bytes(&states);
    assert_eq!(policy.settle(&mut states, now, 3, 1, 0), Err(SettleError::UnknownReservation));
    assert_eq!(bytes(&states), before);
}

/// Settling through the store protocol over the keys' bytes, as Redis and a Durable Object
/// run it: the same answers as in memory, and an error writes nothing.
#[test]
fn settling_runs_as_a_compare_and_swap() {
    use tollgate::store_protocol::{CasRun, Next, Retry, Step, Written};
    let policy = Policy::single(ten_per_10s(Kind::SlidingLog));
    let now = Nanos::from_secs(100);
    let mut stored: Vec<Option<Vec<u8>>> = vec![None];
    let mut memory = [None];
    type Op<'a> = &'a mut dyn FnMut(&mut [Option<PolicyState>]) -> Result<u64, SettleError>;
    let run_once = |stored: &mut Vec<Option<Vec<u8>>>, op: Op<'_>| {
        let mut run = CasRun::begin(Retry::cas(4));
        match run.feed(&policy, stored.clone(), op).unwrap() {
            Step::Done(r) => r,
            Step::Write { expected, new } => {
                assert_eq!(expected, &stored[..]);
                *stored = new.iter().map(|n| n.as_ref().map(|(b, _)| b.clone())).collect();
                match run.written(Written::Swapped, Nanos::ZERO, 0) {
                    Next::Done(r) => r,
                    other => panic!("{other:?}"),
                }
            }
        }
    };
    let reserved = run_once(&mut stored, &mut |s| Ok(policy.reserve(s, now, 6, 9).unwrap().decision.remaining));
    assert_eq!(reserved, Ok(policy.reserve(&mut memory, now, 6, 9).unwrap().decision.remaining));
    let settled = run_once(&mut stored, &mut |s| policy.settle(s, now, 9, 6, 2).map(|d| d.refunded));
    assert_eq!(settled, policy.settle(&mut memory, now, 9, 6, 2).map(|d| d.refunded));
    assert_eq!(stored, bytes(&memory));
    let before = stored.clone();
    assert_eq!(
        run_once(&mut stored, &mut |s| policy.settle(s, now, 9, 6, 2).map(|d| d.refunded)),
        Err(SettleError::UnknownReservation)
    );
    assert_eq!(stored, before);
}

/// A store that keeps ledgers apart from the limits' states (the npm memory limiter) decides
/// exactly as one that keeps the state whole: detaching and attaching round-trip every state.
#[test]
fn a_ledger_kept_apart_round_trips() {
    for kind in Kind::ALL {
        let policy = Policy::single(ten_per_10s(kind));
        let now = Nanos::from_secs(100);
        let mut whole = [None];
        policy.reserve(&mut whole, now, 4, 1).unwrap();
        policy.reserve(&mut whole, now, 3, 2).unwrap();
        let mut apart = whole.clone();
        let ledger = policy.detach_ledger(&mut apart[0]);
        assert_eq!(ledger.len(), 2);
        assert_eq!(apart[0].as_ref().unwrap().open_reservations(), 0);
        policy.attach_ledger(&mut apart[0], ledger);
        assert_eq!(apart, whole, "{kind:?}");
        // A ledger on a key whose limits are fresh again (pruned, evicted) still settles.
        let later = now + Nanos::from_secs(60);
        let mut fresh = [None];
        policy.attach_ledger(&mut fresh[0], policy.detach_ledger(&mut whole[0]));
        let s = policy.settle(&mut fresh, later, 1, 4, 1).unwrap();
        assert_eq!(s.refunded, 0);
        let mut empty = [None];
        assert!(policy.detach_ledger(&mut empty[0]).is_empty());
        policy.attach_ledger(&mut empty[0], Vec::new());
        assert_eq!(empty[0], None);
    }
}

/// A key in debt reconfigured: kept as is by the same limit; by another limit of its kind,
/// capped at the new limit as the reconfiguration rules say (docs/reserve.md): a state the
/// new policy accepts.
#[test]
fn a_key_in_debt_reconfigures_within_the_new_limit() {
    use tollgate::reconfigure::convert;
    for kind in Kind::ALL {
        let policy = Policy::single(ten_per_10s(kind));
        let now = Nanos::from_secs(100);
        let mut states = [None];
        policy.reserve(&mut states, now, 4, 1).unwrap();
        let s = policy.settle(&mut states, now, 1, 4, 25).unwrap();
        assert_eq!((s.charged, s.forgiven), (16, 5), "{kind:?}");
        let st = states[0].as_ref().unwrap();
        let same = convert(&policy, &policy, st, now).unwrap();
        assert_eq!(same.slots(), st.slots(), "{kind:?}: the same limit keeps the debt");
        let mut spec = LimitSpec::new(kind, 20, Nanos::from_secs(10));
        if kind == Kind::SlidingBuckets {
            spec.precision = Some(Nanos::from_secs(1));
        }
        let wider = Policy::single(AnyAlgorithm::from_spec(&spec).unwrap());
        let moved = [convert(&policy, &wider, st, now)];
        for m in moved.iter().flatten() {
            wider.validate_state(&PolicyState::decode(&m.encode()).unwrap()).unwrap();
        }
        // Twice the old limit, the new one's own: full, except a token bucket's, whose rule
        // counts only the tokens used (the old capacity).
        let allowed = wider.peek(&moved, now, 1).unwrap().allowed;
        assert_eq!(allowed, kind == Kind::TokenBucket, "{kind:?}");
    }
}
