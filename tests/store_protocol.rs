//! The store protocol (`tollgate::store_protocol`) driven over an in-memory compare-and-swap
//! store, with the drivers' reads and swaps interleaved adversarially: it never admits more
//! than the limit, loses no admission it was given, and gives up after its attempt cap.

use std::collections::HashMap;

use proptest::prelude::*;
use tollgate::policy::{Limit, Policy};
use tollgate::store_protocol::{Attempts, CasRun, Contention, Next, Retry, Schedule, Step, Wait, Written};
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Nanos};

type Bytes = Vec<Option<Vec<u8>>>;

fn policy(kind: Kind, limit: u64) -> Policy {
    let mut spec = LimitSpec::new(kind, limit, Nanos::from_secs(3600));
    if kind == Kind::SlidingBuckets {
        spec.precision = Some(Nanos::from_secs(60));
    }
    Policy::new(vec![Limit::new("l", AnyAlgorithm::from_spec(&spec).unwrap()).unwrap()]).unwrap()
}

/// One driver: a hit in flight, at the point of its next I/O.
enum Phase {
    /// Read the keys (its first step).
    Read,
    /// Swap `new` in if the store holds `expected` (the decision is the run's).
    Swap { expected: Bytes, new: Vec<Option<Vec<u8>>> },
    /// Finished: admitted, denied, or gave up after this many attempts.
    Done { allowed: bool, gave_up: Option<u32> },
}

struct Driver {
    run: CasRun<bool>,
    phase: Phase,
    now: Nanos,
}

/// The store: one key's bytes, and a switch that makes every swap lose (other writers).
struct Store {
    map: HashMap<&'static str, Vec<u8>>,
}

impl Store {
    fn load(&self) -> Bytes {
        vec![self.map.get("k").cloned()]
    }
}

impl Driver {
    /// Feeds what the store held and moves to the next phase.
    fn decide(&mut self, policy: &Policy, raw: Bytes) {
        let now = self.now;
        let step = self.run.feed(policy, raw, &mut |s| policy.check(s, now, 1).unwrap().allowed).unwrap();
        self.phase = match step {
            Step::Done(allowed) => Phase::Done { allowed, gave_up: None },
            Step::Write { expected, new } => Phase::Swap {
                expected: expected.to_vec(),
                new: new.iter().map(|n| n.as_ref().map(|(b, _)| b.clone())).collect(),
            },
        };
    }

    /// Advances one I/O step against `store`; `sabotage`: another writer wins this swap.
    fn advance(&mut self, policy: &Policy, store: &mut Store, sabotage: bool, jitter: u32) {
        match std::mem::replace(&mut self.phase, Phase::Read) {
            Phase::Read => self.decide(policy, store.load()),
            Phase::Swap { expected, new, .. } => {
                let holds = store.load() == expected;
                let outcome = if holds && !sabotage {
                    match &new[0] {
                        Some(b) => store.map.insert("k", b.clone()),
                        None => store.map.remove("k"),
                    };
                    Written::Swapped
                } else {
                    Written::Conflict(store.load())
                };
                match self.run.written(outcome, Nanos::from_micros(300), jitter) {
                    Next::Done(allowed) => self.phase = Phase::Done { allowed, gave_up: None },
                    Next::Decide(observed) => self.decide(policy, observed),
                    Next::Backoff(pause, observed) => {
                        assert!(pause <= Nanos::from_millis(64), "pause {pause:?} beyond the schedule's cap");
                        self.decide(policy, observed)
                    }
                    Next::GiveUp { attempts, observed } => {
                        assert_eq!(observed, store.load());
                        self.phase = Phase::Done { allowed: false, gave_up: Some(attempts) };
                    }
                }
            }
            done @ Phase::Done { .. } => self.phase = done,
        }
    }
}

const KINDS: [Kind; 5] = [Kind::Gcra, Kind::FixedWindow, Kind::SlidingWindow, Kind::SlidingLog, Kind::TokenBucket];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any interleaving of the drivers' reads and swaps, with some swaps lost to an outside
    /// writer: no more admissions than the limit, and every hit admitted when none gave up
    /// and the limit allows them all.
    #[test]
    fn interleaved_drivers_never_admit_more_than_the_limit(
        kind in 0..KINDS.len(),
        limit in 1u64..8,
        drivers in 1usize..12,
        max_attempts in 1u32..6,
        schedule in proptest::collection::vec((0usize..64, any::<bool>(), any::<u32>()), 0..400),
    ) {
        let policy = policy(KINDS[kind], limit);
        let now = Nanos::from_secs(7200);
        let mut store = Store { map: HashMap::new() };
        let mut ds: Vec<Driver> = (0..drivers)
            .map(|_| Driver { run: CasRun::begin(Retry::cas(max_attempts)), phase: Phase::Read, now })
            .collect();
        // The adversary's order (a lost race only when the flag says so), then every driver
        // finishes alone, without sabotage.
        for (who, sabotage, jitter) in schedule {
            ds[who % drivers].advance(&policy, &mut store, sabotage, jitter);
        }
        for d in &mut ds {
            for _ in 0..4 * max_attempts + 4 {
                d.advance(&policy, &mut store, false, 7);
            }
        }
        let mut admitted = 0u64;
        let mut gave_up = 0u64;
        for d in &ds {
            match d.phase {
                Phase::Done { allowed, gave_up: g } => {
                    if allowed { admitted += 1; }
                    if let Some(attempts) = g {
                        prop_assert_eq!(attempts, max_attempts, "gave up before or after the cap");
                        gave_up += 1;
                    }
                }
                _ => prop_assert!(false, "a driver did not finish"),
            }
        }
        prop_assert!(admitted <= limit, "{} admitted over a limit of {}", admitted, limit);
        if gave_up == 0 {
            prop_assert_eq!(admitted, limit.min(drivers as u64));
        }
        // What the store holds counts exactly the admitted hits.
        let left = tollgate::store::cas_step(&policy, &store.load(), &mut |s| {
            (0..=limit).take_while(|_| policy.check(s, now, 1).unwrap().allowed).count() as u64
        })
        .unwrap()
        .result;
        prop_assert_eq!(left, limit - admitted);
    }

    /// A store where another writer wins every swap: the run gives up after exactly the cap,
    /// with the bytes the store answered last, and its first retry is at once.
    #[test]
    fn a_run_that_always_loses_gives_up_after_its_cap(max_attempts in 1u32..100, jitters in proptest::collection::vec(any::<u32>(), 100)) {
        let policy = policy(Kind::Gcra, 5);
        let mut run = CasRun::<bool>::begin(Retry::cas(max_attempts));
        let mut attempts = 0;
        loop {
            let step = run.feed(&policy, vec![None], &mut |s| policy.check(s, Nanos::from_secs(1), 1).unwrap().allowed).unwrap();
            let writes = matches!(step, Step::Write { .. });
            prop_assert!(writes);
            attempts += 1;
            let other = vec![Some(vec![1u8, 2, 3])];
            match run.written(Written::Conflict(other.clone()), Nanos::from_millis(2), jitters[attempts as usize % 100]) {
                Next::GiveUp { attempts: a, observed } => {
                    prop_assert_eq!(a, max_attempts);
                    prop_assert_eq!(attempts, max_attempts);
                    prop_assert_eq!(observed, other);
                    break;
                }
                Next::Decide(_) | Next::Backoff(..) if attempts == 1 => {
                    let first_at_once = matches!(run_first(&policy), Next::Decide(_));
                    prop_assert!(first_at_once, "the first retry pauses");
                }
                Next::Decide(_) => {}
                Next::Backoff(pause, _) => {
                    prop_assert!(pause <= Nanos::from_millis(64) && pause <= Nanos::from_millis(1 << attempts.min(20)));
                }
                Next::Done(_) => prop_assert!(false, "a lost race cannot be done"),
            }
        }
    }

    /// The backoff is a pure function of the attempt, the store's estimates and the jitter.
    #[test]
    fn the_backoff_is_deterministic_given_its_inputs(
        losses in proptest::collection::vec((any::<bool>(), 0u64..5_000_000), 0..64),
        jitter in any::<u32>(),
        attempt in 1u32..20,
    ) {
        let mut c = Contention::default();
        for (lost, ns) in losses {
            c.record(Nanos::new(ns), lost);
        }
        let wait = |c: &Contention| {
            let mut a = Attempts::new(Retry::cas(100), Nanos::ZERO);
            let mut w = Wait::Now;
            for _ in 0..attempt {
                w = a.lost(Nanos::ZERO, jitter, c);
            }
            w
        };
        prop_assert_eq!(wait(&c), wait(&c.clone()));
        if let Wait::Pause(p) = wait(&c) {
            prop_assert!(attempt >= 2 && p <= Nanos::from_millis(64));
        }
    }
}

/// A fresh run's answer to its first lost race.
fn run_first(policy: &Policy) -> Next<bool> {
    let mut run = CasRun::<bool>::begin(Retry::cas(64));
    let _ = run.feed(policy, vec![None], &mut |s| policy.check(s, Nanos::from_secs(1), 1).unwrap().allowed).unwrap();
    run.written(Written::Conflict(vec![None]), Nanos::from_millis(1), u32::MAX)
}

#[test]
fn a_busy_object_is_asked_again_doubling_to_32_ms_for_10_s() {
    let mut a = Attempts::new(Retry::BUSY_OBJECT, Nanos::from_secs(100));
    let pauses: Vec<Wait> =
        (0..7).map(|i| a.lost(Nanos::from_secs(100) + Nanos::from_millis(i), 0, &Contention::default())).collect();
    let ms = |n| Wait::Pause(Nanos::from_millis(n));
    assert_eq!(pauses, [ms(1), ms(2), ms(4), ms(8), ms(16), ms(32), ms(32)]);
    assert!(matches!(a.lost(Nanos::from_secs(110), 0, &Contention::default()), Wait::GiveUp { attempts: 8 }));
}

#[test]
fn lock_rounds_are_immediate_and_capped_at_8() {
    assert_eq!(Retry::LOCK_ROUNDS.schedule, Schedule::Immediate);
    let mut a = Attempts::new(Retry::LOCK_ROUNDS, Nanos::ZERO);
    for _ in 1..8 {
        assert_eq!(a.lost(Nanos::ZERO, u32::MAX, &Contention::default()), Wait::Now);
    }
    assert_eq!(a.lost(Nanos::ZERO, u32::MAX, &Contention::default()), Wait::GiveUp { attempts: 8 });
}

#[test]
fn a_short_slice_is_decided_again_at_once_four_times_in_all() {
    let mut a = Attempts::new(Retry::SLICE_WAITS, Nanos::ZERO);
    for _ in 1..4 {
        assert_eq!(a.lost(Nanos::from_secs(60), 0, &Contention::default()), Wait::Now);
    }
    assert_eq!(a.lost(Nanos::from_secs(60), 0, &Contention::default()), Wait::GiveUp { attempts: 4 });
}

#[test]
fn a_wait_in_the_isolate_looks_again_doubling_to_16_ms_without_giving_up() {
    let mut a = Attempts::new(Retry::IN_ISOLATE, Nanos::ZERO);
    let pauses: Vec<Wait> = (0..6).map(|_| a.lost(Nanos::from_secs(3600), 0, &Contention::default())).collect();
    let ms = |n| Wait::Pause(Nanos::from_millis(n));
    assert_eq!(pauses, [ms(1), ms(2), ms(4), ms(8), ms(16), ms(16)]);
}

#[test]
fn a_contended_store_pauses_longer() {
    let mut calm = Contention::default();
    let mut hot = Contention::default();
    for _ in 0..200 {
        calm.record(Nanos::from_millis(1), false);
        hot.record(Nanos::from_millis(1), true);
    }
    let pause = |c: &Contention| {
        let mut a = Attempts::new(Retry::cas(64), Nanos::ZERO);
        a.lost(Nanos::ZERO, u32::MAX, c);
        a.lost(Nanos::ZERO, u32::MAX, c);
        a.lost(Nanos::ZERO, u32::MAX, c)
    };
    match (pause(&calm), pause(&hot)) {
        (Wait::Pause(c), Wait::Pause(h)) => assert!(c < h && h <= Nanos::from_millis(8), "{c:?} {h:?}"),
        other => panic!("{other:?}"),
    }
}

/// A run over an edge's cached bytes: what follows each decision and each answer of the store.
#[test]
fn a_swap_run_confirms_untrusted_cached_bytes_and_gives_up_at_its_cap() {
    use tollgate::store_protocol::{Act, After, Answer, SwapRun};
    let mut c = Contention::default();
    let ms = Nanos::from_millis(1);
    // Over cached bytes: a write is swapped; nothing to write is final only when they are trusted.
    let untrusted = SwapRun::begin(Retry::cas(3), false);
    assert_eq!([untrusted.decided(true), untrusted.decided(false)], [Act::Write, Act::Confirm]);
    assert_eq!(SwapRun::begin(Retry::cas(3), true).decided(false), Act::Final);
    // A swap that landed, or a guard applied over other bytes, ends the run.
    for answer in [Answer::Swapped, Answer::Guarded] {
        assert_eq!(SwapRun::begin(Retry::cas(3), false).answered(answer, ms, 0, &mut c), After::Done);
    }
    // A lost race: decide again over the store's bytes (read, so nothing to write is final),
    // at once the first time, then after a pause; the third loss of `cas(3)` gives up.
    let mut run = SwapRun::begin(Retry::cas(3), false);
    assert_eq!(run.answered(Answer::Conflict, ms, u32::MAX, &mut c), After::Decide(Nanos::ZERO));
    assert_eq!((run.attempt(), run.decided(false)), (2, Act::Final));
    assert!(matches!(run.answered(Answer::Conflict, ms, u32::MAX, &mut c), After::Decide(p) if p > Nanos::ZERO));
    assert_eq!(run.answered(Answer::Conflict, ms, u32::MAX, &mut c), After::GiveUp { attempts: 3 });
}
