//! Property tests of the concurrency limit (`tollgate::concurrency`, docs/concurrency.md)
//! against a model of its leases: never more than `limit` live leases at any instant, under
//! any interleaving of acquisitions, releases, renewals, expiries, replays and clocks that go
//! back; a denial's `retry_after` exact (the nearest live lease's expiry); a denied hit and a
//! peek change no byte; all or nothing with a rate limit in the same policy (a denial by
//! either takes nothing from the other); the state's bytes round-trip.

use std::collections::HashMap;

use proptest::prelude::*;
use tollgate::algorithms::Concurrency;
use tollgate::concurrency::{LeaseError, LeaseToken};
use tollgate::policy::{Limit, Policy, PolicyState};
use tollgate::{Algorithm, AnyAlgorithm, Gcra, Nanos, Quota};

const ORIGIN: u64 = 1_000_000_000;
const TTL: u64 = 1_000;

#[derive(Clone, Debug)]
enum Op {
    /// Time step (may be negative: a clock that went back), cost.
    Acquire(i64, u64),
    /// Time step, which lease taken so far.
    Release(i64, usize),
    Renew(i64, usize),
    Peek(i64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let step = -300i64..=400;
    let op = prop_oneof![
        4 => (step.clone(), 1u64..=5).prop_map(|(t, c)| Op::Acquire(t, c)),
        3 => (step.clone(), any::<usize>()).prop_map(|(t, p)| Op::Release(t, p)),
        2 => (step.clone(), any::<usize>()).prop_map(|(t, p)| Op::Renew(t, p)),
        1 => step.prop_map(Op::Peek),
    ];
    prop::collection::vec(op, 1..150)
}

fn policy(n: u64, with_rate: bool) -> Policy {
    let c = AnyAlgorithm::Concurrency(Concurrency::new(n, Nanos::new(TTL)).unwrap());
    let mut limits = vec![Limit::new("in-flight", c).unwrap()];
    if with_rate {
        // 6 units per 2,000 ns, bursts of 6: costs of 1 to 5 make it deny often.
        let g = Gcra::new(Quota::new(6, Nanos::new(2_000)).unwrap()).unwrap();
        limits.push(Limit::new("rate", AnyAlgorithm::Gcra(g)).unwrap());
    }
    Policy::new(limits).unwrap()
}

fn bytes(s: &Option<PolicyState>) -> Option<Vec<u8>> {
    s.as_ref().map(PolicyState::encode)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn never_more_than_the_limit_and_every_answer_as_the_model(n in 1u64..=4, with_rate: bool, ops in ops()) {
        let p = policy(n, with_rate);
        let rate = p.limits().get(1).map(|l| *l.algorithm());
        let mut states = [None];
        // The rate limit alone, fed only the hits the policy admitted.
        let mut rate_state = None;
        // The model: every lease taken (id, expiry), live while expiry > now.
        let mut model: HashMap<u64, Nanos> = HashMap::new();
        let mut taken: Vec<u64> = Vec::new();
        let mut clock = ORIGIN as i64;
        let mut next_id = 1u64;
        for op in ops {
            let step = match op { Op::Acquire(t, _) | Op::Release(t, _) | Op::Renew(t, _) | Op::Peek(t) => t };
            clock = (clock + step).max(0);
            let now = Nanos::new(clock as u64);
            let live = |m: &HashMap<u64, Nanos>| m.values().filter(|e| **e > now).count() as u64;
            let before = bytes(&states[0]);
            match op {
                Op::Acquire(_, cost) => {
                    let id = next_id;
                    next_id += 1;
                    let rate_admits = rate.map_or(true, |r| r.peek(rate_state.as_ref(), now, cost).unwrap().allowed);
                    let slot_free = live(&model) < n;
                    let d = p.acquire(&mut states, now, cost, id).unwrap();
                    prop_assert_eq!(d.allowed, rate_admits && slot_free);
                    if d.allowed {
                        if let Some(r) = rate {
                            tollgate::algorithm::check_slot(&r, &mut rate_state, now, cost).unwrap();
                        }
                        let e = p.lease_expires_at(&states, id).unwrap();
                        prop_assert!(e >= now + Nanos::new(TTL));
                        prop_assert!(model.values().all(|m| e >= *m), "a lease taken after a clock went back expires no earlier than the others");
                        // A write drops the leases expired at its `now` (freed for good, even if
                        // a clock then goes back).
                        model.retain(|_, e| *e > now);
                        model.insert(id, e);
                        taken.push(id);
                        prop_assert_eq!(d.limits[0].decision.remaining, n - live(&model));
                    } else {
                        prop_assert_eq!(bytes(&states[0]), before, "a denied hit changes nothing");
                        if !slot_free {
                            let nearest = model.values().filter(|e| **e > now).min().unwrap().saturating_sub(now);
                            prop_assert_eq!(d.limits[0].decision.retry_after, nearest);
                            prop_assert!(d.decision.retry_after >= nearest);
                        }
                        if !rate_admits {
                            // The rate's denial took no slot, and the slot's none of the rate.
                            prop_assert_eq!(rate.unwrap().peek(rate_state.as_ref(), now, cost).unwrap().retry_after,
                                d.limits[1].decision.retry_after);
                        }
                    }
                }
                Op::Release(_, pick) if !taken.is_empty() => {
                    let id = taken[pick % taken.len()];
                    let was_live = model.get(&id).is_some_and(|e| *e > now);
                    let r = p.release(&mut states, now, id);
                    prop_assert_eq!(r.released, was_live);
                    model.remove(&id);
                    model.retain(|_, e| *e > now);
                    // A replay is a no-op.
                    let after = bytes(&states[0]);
                    prop_assert!(!p.release(&mut states, now, id).released);
                    prop_assert_eq!(bytes(&states[0]), after);
                }
                Op::Renew(_, pick) if !taken.is_empty() => {
                    let id = taken[pick % taken.len()];
                    let was_live = model.get(&id).is_some_and(|e| *e > now);
                    match p.renew(&mut states, now, id) {
                        Ok(r) => {
                            prop_assert!(was_live);
                            let old = model[&id];
                            prop_assert!(r.expires_at >= old && r.expires_at >= now + Nanos::new(TTL));
                            model.insert(id, r.expires_at);
                            model.retain(|_, e| *e > now);
                        }
                        Err(e) => {
                            prop_assert!(!was_live);
                            prop_assert_eq!(e, LeaseError::UnknownLease);
                            prop_assert_eq!(bytes(&states[0]), before);
                        }
                    }
                }
                _ => {
                    let d = p.peek(&states, now, 1).unwrap();
                    prop_assert_eq!(bytes(&states[0]), before, "a peek changes nothing");
                    // A peek's figures are as if the hit were counted (when the policy admits it).
                    let taken_now = u64::from(d.allowed);
                    prop_assert_eq!(d.limits[0].decision.remaining, n.saturating_sub(live(&model) + taken_now));
                }
            }
            // The bound (every lease the state holds counts, live or not yet dropped), and the
            // state as the model.
            prop_assert!(model.len() as u64 <= n);
            let held = states[0].as_ref().and_then(|s| s.slots()[0].as_ref()).map_or(0, |s| match s {
                tollgate::AnyState::Concurrency(c) => c.leases.iter().filter(|l| l.expires_at > now).count() as u64,
                _ => u64::MAX,
            });
            prop_assert_eq!(held, live(&model));
            if let Some(st) = &states[0] {
                let back = p.decode_state(&st.encode()).unwrap();
                prop_assert_eq!(&back, st);
                prop_assert!(st.expires_at() >= model.values().copied().filter(|e| *e > now).max().unwrap_or(Nanos::ZERO));
            }
        }
    }
}

#[test]
fn two_keys_all_or_nothing_and_a_renewal_on_every_key() {
    let p = policy(1, false);
    let now = Nanos::new(ORIGIN);
    let mut states = [None, None];
    assert!(p.acquire(&mut states, now, 1, 5).unwrap().allowed);
    // Key 1 full: a hit on keys 1 and 2 takes nothing from key 2.
    let mut two = [states[0].clone(), None];
    let d = p.acquire(&mut two, now, 1, 6).unwrap();
    assert!(!d.allowed && two[1].is_none());
    // A renewal needs the lease live on every key.
    let mut mixed = [states[0].clone(), None];
    assert_eq!(p.renew(&mut mixed, now, 5).unwrap_err(), LeaseError::UnknownLease);
    assert!(p.renew(&mut states, now + Nanos::new(10), 5).is_ok());
    assert_eq!(p.lease_expires_at(&states, 5), Some(now + Nanos::new(10 + TTL)));
    // Expired: the slot is free at the next decision, the lease unknown.
    let later = now + Nanos::new(10 + TTL);
    assert_eq!(p.renew(&mut states, later, 5).unwrap_err().code(), "unknown_lease");
    assert!(p.acquire(&mut states, later, 1, 7).unwrap().allowed);
    let token = LeaseToken { id: 7, policy: String::new(), keys: vec!["a".into(), "b".into()] }.to_token();
    assert_eq!(LeaseToken::from_token(&token).unwrap().id, 7);
    assert_eq!(LeaseToken::from_token("nope").unwrap_err().code(), "invalid_lease");
}

#[test]
fn a_plain_check_takes_an_anonymous_slot_that_only_its_expiry_frees() {
    let p = policy(1, false);
    let now = Nanos::new(ORIGIN);
    let mut states = [None];
    assert!(p.check(&mut states, now, 1).unwrap().allowed);
    assert!(!p.release(&mut states, now, 0).released);
    let d = p.check(&mut states, now, 1).unwrap();
    assert_eq!((d.allowed, d.decision.retry_after), (false, Nanos::new(TTL)));
    assert!(p.check(&mut states, now + Nanos::new(TTL), 1).unwrap().allowed);
}
