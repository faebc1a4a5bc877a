//! Property tests of reconfiguration (`tollgate::reconfigure`): a key's state built by a
//! random trace under one configuration, converted to another of the same algorithm, then
//! decided under the new one.
//!
//! - the converted state always fits the new configuration (it validates and decides without
//!   error), and an unchanged configuration changes nothing;
//! - usage is kept: what the key may take at once right after the change is at most the new
//!   capacity minus what it had used (never below 0), except where the new limit itself sees
//!   less of it (a shorter sliding log window);
//! - never more than the new limit allows: the hits admitted after the change keep the new
//!   configuration's documented bound;
//! - the configuration's bytes round-trip, so a store can always rebuild the old policy.

// Its spec drawing only (the other tests draw whole algorithms from it too).
#[allow(dead_code)]
mod support;

use proptest::prelude::*;
use tollgate::algorithm::check_slot;
use tollgate::policy::{Limit, Policy};
use tollgate::policy_codec::{decode_policy, encode_policy};
use tollgate::reconfigure::{carries, convert, convert_slot, restore, Carry, Restored};
use tollgate::{Algorithm, AnyAlgorithm, AnyState, FixedWindow, Gcra, Kind, LimitSpec, Nanos, Quota};

const ORIGIN: u64 = 1_000_000;

/// A valid configuration of `kind` with small numbers (windows of a few ns, so traces cross
/// many windows).
fn spec_of(kind: Kind) -> impl Strategy<Value = LimitSpec> {
    (1u64..=8, 1u64..=40, 1u64..=6, any::<u64>(), any::<u64>()).prop_map(move |(limit, w, n, r1, r2)| {
        let window = if kind == Kind::SlidingBuckets { (w % 8 + 1) * n } else { w.max(limit) };
        support::spec(kind, limit, window, n, r1, r2)
    })
}

/// Two configurations of one algorithm: before and after the change.
fn change() -> impl Strategy<Value = (AnyAlgorithm, AnyAlgorithm)> {
    (0usize..7).prop_flat_map(|k| {
        let kind = Kind::ALL[k];
        (spec_of(kind), spec_of(kind), any::<bool>()).prop_map(|(a, b, same)| {
            let old = AnyAlgorithm::from_spec(&a).expect("valid spec");
            let new = if same { old } else { AnyAlgorithm::from_spec(&b).expect("valid spec") };
            (old, new)
        })
    })
}

fn trace() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0u64..=12, 1u64..=8), 0..60)
}

/// Runs `steps` from `start` on `slot`; the admitted hits (time, cost) and the last time.
fn run(a: &AnyAlgorithm, slot: &mut Option<AnyState>, start: u64, steps: &[(u64, u64)]) -> (Vec<(Nanos, u64)>, u64) {
    let mut t = start;
    let mut admitted = Vec::new();
    for &(dt, draw) in steps {
        t += dt;
        let cost = 1 + (draw - 1) % a.capacity();
        let d = check_slot(a, slot, Nanos::new(t), cost).expect("costs within capacity");
        if d.allowed {
            admitted.push((Nanos::new(t), cost));
        }
    }
    (admitted, t)
}

/// The most units a burst of cost-1 hits takes at `now`.
fn burst_at(a: &AnyAlgorithm, slot: &Option<AnyState>, now: Nanos) -> u64 {
    let mut s = slot.clone();
    let mut n = 0;
    while n <= a.capacity() && check_slot(a, &mut s, now, 1).unwrap().allowed {
        n += 1;
    }
    n
}

fn sum_in(hits: &[(Nanos, u64)], from: Nanos, to_inclusive: Nanos) -> u64 {
    hits.iter().filter(|(t, _)| *t >= from && *t <= to_inclusive).map(|(_, c)| c).sum()
}

/// The bound each algorithm documents for a fresh key, over hits admitted after the change.
fn assert_bound(a: &AnyAlgorithm, hits: &[(Nanos, u64)]) -> Result<(), TestCaseError> {
    for &(t, _) in hits {
        let most = match a {
            AnyAlgorithm::FixedWindow(fw) => {
                let al = fw.alignment();
                let got: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                prop_assert!(got <= fw.limit(), "fixed window: {got} in one window");
                continue;
            }
            AnyAlgorithm::FixedWindowFirstHit(_) | AnyAlgorithm::SlidingWindow(_) => {
                let (limit, window) = a.advertised_quota();
                (sum_in(hits, t, t + window - Nanos::new(1)), 2 * limit)
            }
            AnyAlgorithm::SlidingLog(_) => {
                let (limit, window) = a.advertised_quota();
                (sum_in(hits, t.saturating_sub(window), t), limit)
            }
            AnyAlgorithm::SlidingBuckets(sb) => {
                let al = sb.alignment();
                let first = al.index(t);
                let got = hits
                    .iter()
                    .filter(|(u, _)| al.index(*u) >= first && al.index(*u) < first + sb.bucket_count())
                    .map(|(_, c)| c)
                    .sum();
                (got, sb.limit())
            }
            AnyAlgorithm::TokenBucket(tb) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let refills = (u - t).as_nanos().div_ceil(tb.interval().as_nanos());
                    let bound = tb.limit() + tb.refill_amount() * refills;
                    prop_assert!(sum_in(hits, t, u) <= bound, "token bucket over its bound");
                }
                continue;
            }
            AnyAlgorithm::Gcra(g) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let bound = g.burst() + (u - t).as_nanos() / g.emission_interval().as_nanos();
                    prop_assert!(sum_in(hits, t, u) <= bound, "gcra over its bound");
                }
                continue;
            }
            // Not among the generated algorithms (tests/concurrency.rs holds its bound).
            _ => continue,
        };
        prop_assert!(most.0 <= most.1, "{}: {} admitted, bound {}", a.name(), most.0, most.1);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_converted_state_fits_keeps_usage_and_never_admits_beyond_the_new_limit(
        (old, new) in change(),
        before in trace(),
        gap in 0u64..20,
        after in trace(),
    ) {
        let mut slot = None;
        let (_, t) = run(&old, &mut slot, ORIGIN, &before);
        let now = Nanos::new(t + gap);
        let Some(state) = slot.clone() else { return Ok(()) };
        let converted = convert_slot(&old, &new, &state, now);
        if old == new {
            prop_assert_eq!(converted.as_ref(), Some(&state), "an unchanged configuration changes nothing");
        }
        if let Some(c) = &converted {
            prop_assert!(tollgate::codec::validate_state(&new, c).is_ok(), "fits the new configuration: {:?}", c);
        }
        // Usage kept: at most the new capacity minus what was used, never below 0.
        let used = old.capacity() - burst_at(&old, &slot, now).min(old.capacity());
        let room = burst_at(&new, &converted, now);
        // Where the state knows exactly when its hits were (a log's times, a first-hit window's
        // opening), a shorter new window sees less of them: that is the new limit's own view.
        let exact_and_shorter = match (&old, &new) {
            (AnyAlgorithm::SlidingLog(o), AnyAlgorithm::SlidingLog(n)) => n.window() < o.window(),
            (AnyAlgorithm::FixedWindowFirstHit(o), AnyAlgorithm::FixedWindowFirstHit(n)) => n.window() < o.window(),
            _ => false,
        };
        if !exact_and_shorter {
            prop_assert!(room <= new.capacity().saturating_sub(used), "{}: room {room} after using {used} (new capacity {})", new.name(), new.capacity());
        }
        // Never more than the new limit allows, from the change on.
        let mut s = converted;
        let (admitted, _) = run(&new, &mut s, now.as_nanos(), &after);
        assert_bound(&new, &admitted)?;
    }

    #[test]
    fn policies_convert_limit_by_limit_by_name_and_a_new_algorithm_starts_fresh(
        (old, new) in change(),
        before in trace(),
    ) {
        let other = AnyAlgorithm::from_spec(&LimitSpec::new(
            if old.kind() == Kind::Gcra { Kind::SlidingLog } else { Kind::Gcra }, 3, Nanos::new(30))).unwrap();
        let old_policy = Policy::new(vec![Limit::new("a", old).unwrap(), Limit::new("b", old).unwrap()]).unwrap();
        // Reordered, "b" changes algorithm, "c" is new.
        let new_policy = Policy::new(vec![
            Limit::new("c", new).unwrap(), Limit::new("b", other).unwrap(), Limit::new("a", new).unwrap(),
        ]).unwrap();
        let mut states = [None];
        let mut t = ORIGIN;
        for &(dt, draw) in &before {
            t += dt;
            let cost = 1 + (draw - 1) % old.capacity();
            old_policy.check(&mut states, Nanos::new(t), cost).unwrap();
        }
        let Some(state) = states[0].clone() else { return Ok(()) };
        let now = Nanos::new(t);
        let converted = convert(&old_policy, &new_policy, &state, now);
        let want_a = convert_slot(&old, &new, state.slots()[0].as_ref().unwrap(), now);
        match &converted {
            Some(c) => {
                prop_assert!(new_policy.validate_state(c).is_ok());
                prop_assert_eq!(&c.slots()[0], &None, "a new limit starts fresh");
                prop_assert_eq!(&c.slots()[1], &None, "another algorithm starts fresh");
                prop_assert_eq!(&c.slots()[2], &want_a, "matched by name, whatever the order");
                prop_assert_eq!(c.expires_at(), new_policy.expiry(c));
            }
            None => prop_assert_eq!(want_a, None),
        }
        let expected = vec![Carry::Fresh, Carry::Fresh, if old == new { Carry::Unchanged } else { Carry::Kept }];
        prop_assert_eq!(carries(&old_policy, &new_policy), expected);
    }

    #[test]
    fn a_policy_s_configuration_round_trips((old, new) in change()) {
        let p = Policy::new(vec![Limit::new("x", old).unwrap(), Limit::new("y:2", new).unwrap()]).unwrap();
        let bytes = encode_policy(&p);
        prop_assert_eq!(decode_policy(&bytes).unwrap(), p.clone());
        prop_assert_eq!(encode_policy(&p) == encode_policy(&Policy::single(old)), false);
    }

    #[test]
    fn decoding_any_bytes_as_a_configuration_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..48)) {
        let _ = decode_policy(&bytes);
    }
}

#[test]
fn lowering_100_to_50_does_not_give_a_fresh_50_and_raising_keeps_the_usage() {
    use tollgate::{FixedWindow, Gcra, Quota, TokenBucket};
    let now = Nanos::from_secs(3600 * 10 + 5);
    let cases: [(&str, AnyAlgorithm, AnyAlgorithm, AnyAlgorithm); 3] = [
        (
            "fixed window",
            AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_hour(100).unwrap())),
            AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_hour(50).unwrap())),
            AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_hour(200).unwrap())),
        ),
        (
            "token bucket",
            AnyAlgorithm::TokenBucket(TokenBucket::from_quota(Quota::per_hour(100).unwrap()).unwrap()),
            AnyAlgorithm::TokenBucket(TokenBucket::from_quota(Quota::per_hour(50).unwrap()).unwrap()),
            AnyAlgorithm::TokenBucket(TokenBucket::from_quota(Quota::per_hour(200).unwrap()).unwrap()),
        ),
        (
            "gcra",
            AnyAlgorithm::Gcra(Gcra::new(Quota::per_hour(100).unwrap()).unwrap()),
            AnyAlgorithm::Gcra(Gcra::new(Quota::per_hour(50).unwrap()).unwrap()),
            AnyAlgorithm::Gcra(Gcra::new(Quota::per_hour(200).unwrap()).unwrap()),
        ),
    ];
    for (name, a100, a50, a200) in cases {
        let mut slot = None;
        check_slot(&a100, &mut slot, now, 60).unwrap();
        let state = slot.unwrap();
        let lowered = convert_slot(&a100, &a50, &state, now);
        assert_eq!(burst_at(&a50, &lowered, now), 0, "{name}: 60 used of a new 50 leaves nothing");
        let raised = convert_slot(&a100, &a200, &state, now);
        assert_eq!(burst_at(&a200, &raised, now), 140, "{name}: 60 used of a new 200 leaves 140");
    }
}

// A state read back from a store (the Worker's Durable Objects keep `written_under` beside it).
fn fixed_hour(limit: u64) -> Policy {
    Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_hour(limit).unwrap())))
}

#[test]
fn a_state_written_under_another_configuration_is_converted_not_dropped() {
    let now = Nanos::from_secs(7200 + 60);
    let (old, new) = (fixed_hour(100), fixed_hour(50));
    let mut states = [None];
    old.check(&mut states, now, 60).unwrap();
    let bytes = states[0].as_ref().unwrap().encode();
    let (state, loaded) = restore(&bytes, Some(&encode_policy(&old)), &new, now);
    assert_eq!(loaded, Restored::Converted);
    assert!(!new.peek(&[state], now, 1).unwrap().allowed, "not a fresh 50");
    // Written under the running configuration, or before the configuration was stored.
    for under in [Some(encode_policy(&old)), None] {
        let (state, loaded) = restore(&bytes, under.as_deref(), &old, now);
        assert_eq!((state.as_ref(), loaded), (states[0].as_ref(), Restored::AsStored));
    }
}

#[test]
fn another_algorithm_starts_fresh_and_garbage_is_dropped() {
    let now = Nanos::from_secs(100);
    let gcra = Policy::single(AnyAlgorithm::Gcra(Gcra::new(Quota::per_hour(100).unwrap()).unwrap()));
    let mut states = [None];
    fixed_hour(100).check(&mut states, now, 60).unwrap();
    let bytes = states[0].as_ref().unwrap().encode();
    assert_eq!(restore(&bytes, Some(&encode_policy(&fixed_hour(100))), &gcra, now), (None, Restored::Converted));
    assert!(matches!(restore(&bytes, Some(b"junk"), &gcra, now), (None, Restored::Dropped(_))));
    assert!(matches!(restore(b"junk", None, &gcra, now), (None, Restored::Dropped(_))));
    assert!(matches!(restore(&bytes, None, &gcra, now), (None, Restored::Dropped(_))), "no record: as before");
}
