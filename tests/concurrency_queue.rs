//! Property tests of waiting in line for a concurrency slot (`tollgate::concurrency::queue`,
//! docs/concurrency.md "Waiting in line"), each answer checked against the state it was made
//! over: never more than `limit` leases; a ticket admitted only when the live tickets ahead of
//! it fit in the free slots, and an arrival only when everyone in line fits (no overtaking);
//! the line never beyond `maxQueue`, its order never changed; no ticket admitted or kept past
//! its deadline; a waiter that stops polling stops blocking after the claim window; replays
//! of an admitted poll change nothing; clocks going back; the bytes round-trip.

use proptest::prelude::*;
use tollgate::algorithms::{Concurrency, ConcurrencyState};
use tollgate::concurrency::queue::{QueueArgs, QueueStatus, CLAIM_WINDOW};
use tollgate::policy::{Limit, Policy, PolicyState};
use tollgate::{AnyAlgorithm, AnyState, Nanos};

const ORIGIN: u64 = 1_000_000_000_000;
const TTL: u64 = 8_000_000_000; // 8 s
const MAX_QUEUE: u64 = 3;

#[derive(Clone, Debug)]
enum Op {
    /// Time step (ms, may be negative), maxWait (ms).
    Arrive(i64, u64),
    /// Time step, which waiter polls.
    Poll(i64, usize),
    /// Time step, which admitted lease is released.
    Release(i64, usize),
    /// Time step: a plain acquire (no ticket).
    Plain(i64),
    /// Time step, which admitted waiter polls again (a replay).
    Replay(i64, usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let step = -1_500i64..=2_500;
    let op = prop_oneof![
        3 => (step.clone(), prop_oneof![Just(0u64), 1u64..=12_000]).prop_map(|(t, w)| Op::Arrive(t, w)),
        5 => (step.clone(), any::<usize>()).prop_map(|(t, p)| Op::Poll(t, p)),
        3 => (step.clone(), any::<usize>()).prop_map(|(t, p)| Op::Release(t, p)),
        1 => step.clone().prop_map(Op::Plain),
        1 => (step, any::<usize>()).prop_map(|(t, p)| Op::Replay(t, p)),
    ];
    prop::collection::vec(op, 1..120)
}

fn policy(n: u64) -> Policy {
    let c = AnyAlgorithm::Concurrency(Concurrency::new(n, Nanos::new(TTL)).unwrap());
    Policy::new(vec![Limit::new("in-flight", c).unwrap()]).unwrap()
}

fn line(s: &Option<PolicyState>) -> ConcurrencyState {
    match s.as_ref().and_then(|s| s.slots()[0].clone()) {
        Some(AnyState::Concurrency(c)) => c,
        None => ConcurrencyState::default(),
        Some(_) => unreachable!(),
    }
}

fn live_leases(c: &ConcurrencyState, now: Nanos) -> u64 {
    c.leases.iter().filter(|l| l.expires_at > now).count() as u64
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_fair_bounded_line(n in 1u64..=3, ops in ops()) {
        let p = policy(n);
        let mut states = [None];
        let mut clock = ORIGIN as i64;
        let mut next_id = 1u64;
        // Waiters: (id, deadline) still waiting as far as they know; admitted ids.
        let mut waiters: Vec<(u64, Nanos)> = Vec::new();
        let mut admitted: Vec<u64> = Vec::new();
        for op in ops {
            let step = match op { Op::Arrive(t, _) | Op::Poll(t, _) | Op::Release(t, _) | Op::Plain(t) | Op::Replay(t, _) => t };
            clock = (clock + step * 1_000_000).max(0);
            let now = Nanos::new(clock as u64);
            let before = line(&states[0]);
            let before_bytes = states[0].as_ref().map(PolicyState::encode);
            let leases = live_leases(&before, now);
            let waiting: Vec<_> = before.waiting(now).map(|t| t.id).collect();
            if std::env::var("QDEBUG").is_ok() { eprintln!("{:?} now {} {:?}", op, now.as_nanos() / 1_000_000, before); }
            match op {
                Op::Arrive(..) | Op::Poll(..) if matches!(op, Op::Arrive(..)) || !waiters.is_empty() => {
                    let (id, deadline) = match op {
                        Op::Arrive(_, wait) => {
                            next_id += 1;
                            (next_id, now + Nanos::from_millis(wait))
                        }
                        Op::Poll(_, pick) => waiters[pick % waiters.len()],
                        _ => unreachable!(),
                    };
                    let place = waiting.iter().position(|&w| w == id);
                    let ticket = before.queue.iter().find(|t| t.id == id).copied();
                    let q = p.acquire_queued(&mut states, now, 1, id, QueueArgs::new(MAX_QUEUE, deadline)).unwrap();
                    let ahead = place.unwrap_or(waiting.len()) as u64;
                    let past = ticket.filter(|t| t.alive_until > now).is_some_and(|t| t.deadline <= now);
                    // Admitted exactly when the tickets ahead fit in the free slots, or it holds
                    // a live lease already (a clock that went back can show both).
                    let held = before.leases.iter().any(|l| l.id == id && l.expires_at > now);
                    let fits = held || (leases + ahead < n && !past);
                    prop_assert_eq!(q.status == QueueStatus::Admitted, fits, "{:?} {:?} ahead {} leases {}", q.status, before, ahead, leases);
                    prop_assert_eq!(q.decision.allowed, fits);
                    waiters.retain(|w| w.0 != id);
                    match q.status {
                        QueueStatus::Admitted => {
                            prop_assert!(q.expires_at.unwrap() > now);
                            admitted.push(id);
                        }
                        QueueStatus::Waiting { position } => {
                            prop_assert_eq!(position, ahead);
                            prop_assert!(deadline > now && q.poll_after > Nanos::ZERO);
                            prop_assert!(place.is_some() || (waiting.len() as u64) < MAX_QUEUE);
                            waiters.push((id, ticket.filter(|t| t.alive_until > now).map_or(deadline, |t| t.deadline)));
                        }
                        QueueStatus::Full => prop_assert!(place.is_none() && waiting.len() as u64 >= MAX_QUEUE),
                        QueueStatus::TimedOut => prop_assert!(past || (place.is_none() && deadline <= now)),
                    }
                    // Its ticket is in line exactly while it waits.
                    let after = line(&states[0]);
                    let in_line = after.queue.iter().any(|t| t.id == id);
                    let waits = matches!(q.status, QueueStatus::Waiting { .. });
                    prop_assert!(held || in_line == waits);
                }
                Op::Release(_, pick) if !admitted.is_empty() => {
                    let id = admitted[pick % admitted.len()];
                    p.release(&mut states, now, id);
                }
                Op::Replay(_, pick) if !admitted.is_empty() => {
                    let id = admitted[pick % admitted.len()];
                    let held = before.leases.iter().any(|l| l.id == id && l.expires_at > now);
                    let q = p.acquire_queued(&mut states, now, 1, id, QueueArgs::new(MAX_QUEUE, now + Nanos::from_millis(1_000))).unwrap();
                    if held {
                        prop_assert_eq!(q.status, QueueStatus::Admitted);
                        prop_assert_eq!(states[0].as_ref().map(PolicyState::encode), before_bytes, "a replay changes nothing");
                    }
                    admitted.retain(|&a| a != id);
                    if q.status == QueueStatus::Admitted { admitted.push(id); }
                    if matches!(q.status, QueueStatus::Waiting { .. }) { waiters.push((id, now + Nanos::from_millis(1_000))); }
                }
                _ => {
                    // A hit without a ticket never overtakes the line.
                    next_id += 1;
                    let d = p.acquire(&mut states, now, 1, next_id).unwrap();
                    prop_assert_eq!(d.allowed, leases + (waiting.len() as u64) < n);
                    if d.allowed { admitted.push(next_id); }
                }
            }
            let after = line(&states[0]);
            // The bound: never more than `limit` leases, live or not yet dropped.
            prop_assert!(after.leases.len() as u64 <= n);
            // The line: never beyond maxQueue, every ticket written alive and before its deadline.
            prop_assert!(after.waiting(now).count() as u64 <= MAX_QUEUE);
            // Its order never changes: the tickets live before and kept after, in the same order
            // (a dead waiter that polls again arrives anew, at the back).
            let old: Vec<u64> = before.waiting(now).map(|t| t.id).filter(|id| after.queue.iter().any(|t| t.id == *id)).collect();
            let new: Vec<u64> = after.queue.iter().map(|t| t.id).filter(|id| old.contains(id)).collect();
            prop_assert_eq!(old, new);
            if let Some(st) = &states[0] {
                prop_assert_eq!(&p.decode_state(&st.encode()).unwrap(), st);
                prop_assert!(st.expires_at() >= after.fresh_at());
            }
        }
    }
}

#[test]
fn a_dead_waiter_stops_blocking_after_the_claim_window() {
    let p = policy(1);
    let now = Nanos::new(ORIGIN);
    let args = QueueArgs::new(10, now + Nanos::from_secs(60));
    let mut states = [None];
    assert_eq!(p.acquire_queued(&mut states, now, 1, 1, args).unwrap().status, QueueStatus::Admitted);
    assert_eq!(p.acquire_queued(&mut states, now, 1, 2, args).unwrap().status, QueueStatus::Waiting { position: 0 });
    assert_eq!(p.acquire_queued(&mut states, now, 1, 3, args).unwrap().status, QueueStatus::Waiting { position: 1 });
    p.release(&mut states, now, 1);
    // Waiter 2 died; 3 keeps polling: it waits until 2's ticket ends, then takes the slot.
    let mut t = now;
    loop {
        t = t + Nanos::from_millis(50);
        let q = p.acquire_queued(&mut states, t, 1, 3, args).unwrap();
        if q.status == QueueStatus::Admitted {
            break;
        }
        assert!(t < now + CLAIM_WINDOW);
    }
    assert_eq!(t, now + CLAIM_WINDOW);
    // A waiter past its deadline leaves the line, refused.
    let short = QueueArgs::new(10, t + Nanos::from_millis(100));
    assert!(matches!(p.acquire_queued(&mut states, t, 1, 4, short).unwrap().status, QueueStatus::Waiting { .. }));
    let q = p.acquire_queued(&mut states, t + Nanos::from_millis(100), 1, 4, short).unwrap();
    assert_eq!(q.status, QueueStatus::TimedOut);
    assert!(!q.decision.allowed);
    assert!(line(&states[0]).queue.is_empty());
}

#[test]
fn a_line_across_two_keys_and_a_state_without_tickets_keeps_its_bytes() {
    let p = policy(1);
    let now = Nanos::new(ORIGIN);
    let args = QueueArgs::new(10, now + Nanos::from_secs(5));
    let mut states = [None, None];
    assert_eq!(p.acquire_queued(&mut states, now, 1, 1, args).unwrap().status, QueueStatus::Admitted);
    assert_eq!(p.acquire_queued(&mut states, now, 1, 2, args).unwrap().status, QueueStatus::Waiting { position: 0 });
    // The second key's line holds the ticket too: a hit on that key alone waits behind it.
    let mut second = [states[1].clone()];
    assert!(!p.acquire(&mut second, now, 1, 9).unwrap().allowed);
    p.release(&mut states, now, 1);
    let q = p.acquire_queued(&mut states, now, 1, 2, args).unwrap();
    assert_eq!(q.status, QueueStatus::Admitted);
    // With no one in line the state is written as before (tag 8).
    let bytes = states[0].as_ref().unwrap().encode();
    assert!(bytes.contains(&8) && !line(&states[0]).leases.is_empty());
}
