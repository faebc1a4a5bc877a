//! Stores: the same decisions over every store, atomicity under real contention, and bad
//! stored bytes as errors.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tollgate::policy::{Limit, Policy};
use tollgate::store::{CasBackend, CasError, CasStore, MemoryStore};
use tollgate::{AnyAlgorithm, Gcra, KeyedLimiter, Kind, LimitSpec, Limiter, Nanos, Quota};

/// A compare-and-swap backend over a shared map: what a Redis script offers, in process.
#[derive(Clone, Default)]
struct SharedCas {
    map: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    /// Lose this many races on purpose before each real swap (exercises the re-run).
    sabotage: Arc<AtomicUsize>,
    swaps: Arc<AtomicUsize>,
}

impl CasBackend for SharedCas {
    type Error = String;

    fn load(&mut self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>, String> {
        let map = self.map.lock().map_err(|e| e.to_string())?;
        Ok(keys.iter().map(|k| map.get(*k).cloned()).collect())
    }

    fn compare_and_swap(
        &mut self,
        keys: &[&str],
        expected: &[Option<Vec<u8>>],
        new: &[Option<(Vec<u8>, Nanos)>],
    ) -> Result<bool, String> {
        if self.sabotage.load(Ordering::SeqCst) > 0 {
            self.sabotage.fetch_sub(1, Ordering::SeqCst);
            return Ok(false);
        }
        let mut map = self.map.lock().map_err(|e| e.to_string())?;
        if keys.iter().zip(expected).any(|(k, e)| map.get(*k) != e.as_ref()) {
            return Ok(false);
        }
        for (k, v) in keys.iter().zip(new) {
            match v {
                Some((bytes, _expires)) => map.insert(k.to_string(), bytes.clone()),
                None => map.remove(*k),
            };
        }
        self.swaps.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    fn delete(&mut self, keys: &[&str]) -> Result<(), String> {
        let mut map = self.map.lock().map_err(|e| e.to_string())?;
        for k in keys {
            map.remove(*k);
        }
        Ok(())
    }
}

fn policy_of(kinds: &[Kind]) -> Policy {
    let limits = kinds
        .iter()
        .enumerate()
        .map(|(i, &kind)| {
            let mut spec = LimitSpec::new(kind, 5 + i as u64, Nanos::from_millis(100 * (i as u64 + 1)));
            if kind == Kind::SlidingBuckets {
                spec.precision = Some(Nanos::from_millis(10));
            }
            Limit::new(&format!("l{i}"), AnyAlgorithm::from_spec(&spec).unwrap()).unwrap()
        })
        .collect();
    Policy::new(limits).unwrap()
}

/// A deterministic pseudo-random sequence (xorshift), so traces are reproducible.
fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn memory_and_compare_and_swap_stores_decide_identically() {
    for kinds in [
        &Kind::ALL[..],
        &[Kind::Gcra][..],
        &[Kind::SlidingLog, Kind::TokenBucket][..],
        &[Kind::FixedWindow, Kind::SlidingWindow, Kind::SlidingBuckets][..],
    ] {
        let policy = policy_of(kinds);
        let backend = SharedCas::default();
        backend.sabotage.store(3, Ordering::SeqCst);
        let mut memory = Limiter::in_memory(policy.clone());
        let mut cas = Limiter::new(policy.clone(), CasStore::new(backend, policy.clone()));
        let keys = ["a", "b", "c", "d"];
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        let mut now = Nanos::from_secs(1_700_000_000);
        for _ in 0..3000 {
            let r = xorshift(&mut seed);
            now = now + Nanos::from_millis(r % 7);
            let k1 = keys[(r >> 8) as usize % 4];
            let k2 = keys[(r >> 16) as usize % 4];
            let hit: Vec<&str> = if k1 == k2 { vec![k1] } else { vec![k1, k2] };
            let cost = 1 + (r >> 24) % 3;
            match (r >> 32) % 10 {
                0 => {
                    memory.refund(&hit, now, 1).unwrap();
                    cas.refund(&hit, now, 1).unwrap();
                }
                1 => assert_eq!(memory.peek(&hit, now, cost).unwrap(), cas.peek(&hit, now, cost).unwrap()),
                _ => assert_eq!(memory.check(&hit, now, cost).unwrap(), cas.check(&hit, now, cost).unwrap()),
            }
        }
    }
}

#[test]
fn concurrent_writers_admit_exactly_the_limit() {
    // 8 threads x 50 hits at one instant on one key, limit 100: exactly 100 admitted.
    let policy =
        Policy::single(AnyAlgorithm::from_spec(&LimitSpec::new(Kind::FixedWindow, 100, Nanos::from_secs(60))).unwrap());
    let backend = SharedCas::default();
    let admitted = Arc::new(AtomicUsize::new(0));
    let now = Nanos::from_secs(1_700_000_000);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            let (backend, policy, admitted) = (backend.clone(), policy.clone(), admitted.clone());
            scope.spawn(move || {
                let mut limiter =
                    Limiter::new(policy.clone(), CasStore::new(backend, policy).with_max_attempts(10_000));
                for _ in 0..50 {
                    if limiter.check(&["hot"], now, 1).unwrap().allowed {
                        admitted.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(admitted.load(Ordering::SeqCst), 100);
    // Denied hits never wrote: exactly one swap per admitted hit.
    assert_eq!(backend.swaps.load(Ordering::SeqCst), 100);
}

#[test]
fn corrupt_stored_bytes_are_a_clear_error_and_change_nothing() {
    let policy = policy_of(&[Kind::Gcra]);
    let backend = SharedCas::default();
    backend.map.lock().unwrap().insert("k".into(), vec![1, 0xff]);
    let mut limiter = Limiter::new(policy.clone(), CasStore::new(backend.clone(), policy.clone()));
    let err = limiter.check(&["k"], Nanos::from_secs(1), 1).unwrap_err();
    let tollgate::limiter::LimitError::Store(CasError::Corrupt { key, .. }) = &err else { panic!("{err:?}") };
    assert_eq!(key, "k");
    assert!(err.to_string().contains("invalid"), "{err}");
    assert_eq!(backend.map.lock().unwrap()["k"], vec![1, 0xff]);
    // State written for another policy shape is refused too.
    let other = policy_of(&[Kind::SlidingLog, Kind::Gcra]);
    let mut limiter_other = Limiter::new(other.clone(), CasStore::new(backend.clone(), other));
    limiter_other.check(&["k2"], Nanos::from_secs(1), 1).unwrap();
    assert!(limiter.check(&["k2"], Nanos::from_secs(1), 1).is_err());
}

#[test]
fn bad_keys_and_costs_are_refused_before_the_store_is_touched() {
    let policy = policy_of(&[Kind::Gcra]);
    let backend = SharedCas::default();
    let mut limiter = Limiter::new(policy.clone(), CasStore::new(backend.clone(), policy));
    let long = "x".repeat(tollgate::limiter::MAX_KEY_LEN + 1);
    for keys in [&[][..], &[""][..], &[long.as_str()][..], &["a", "a"][..], &["a"; 9][..]] {
        assert!(limiter.check(keys, Nanos::ZERO, 1).is_err(), "{keys:?}");
    }
    assert!(limiter.check(&["a"], Nanos::ZERO, 0).is_err());
    assert!(limiter.check(&["a"], Nanos::ZERO, 1000).is_err());
    assert!(backend.map.lock().unwrap().is_empty());
    assert_eq!(backend.swaps.load(Ordering::SeqCst), 0);
}

#[test]
fn the_key_cap_drops_idle_keys_first_then_evicts_the_soonest_fresh() {
    let gcra = Gcra::new(Quota::per_second(10).unwrap()).unwrap();
    let mut limiter = KeyedLimiter::<Gcra, u32>::with_key_type(gcra).with_max_keys(64);
    let t = Nanos::from_secs(1_000);
    for k in 0..64u32 {
        limiter.check(&k, t, 1).unwrap();
    }
    // One second later all 64 are idle again: a new key sweeps them instead of evicting.
    limiter.check(&1000, t + Nanos::from_secs(1), 1).unwrap();
    assert_eq!((limiter.len(), limiter.evictions()), (1, 0));
    // Fill to the cap with keys of different ages; the next new key evicts an eighth, the
    // ones closest to fresh (the oldest hits).
    for k in 0..63u32 {
        limiter.check(&k, t + Nanos::from_secs(1) + Nanos::from_millis(k as u64), 1).unwrap();
    }
    assert_eq!(limiter.len(), 64);
    // Just before any of them is idle (key 1000 and key 0 become fresh at 1.1 s).
    limiter.check(&2000, t + Nanos::from_millis(1099), 1).unwrap();
    assert_eq!(limiter.evictions(), 8);
    assert_eq!(limiter.len(), 64 - 8 + 1);
    for k in [1000, 0, 1, 2, 3, 4, 5, 6] {
        assert!(limiter.state(&k).is_none(), "key {k} (closest to fresh) should have been evicted");
    }
    assert!(limiter.state(&7).is_some() && limiter.state(&62).is_some());
}

#[test]
fn memory_store_sweeps_idle_keys_as_it_grows() {
    let policy = policy_of(&[Kind::FixedWindow]);
    let mut limiter = Limiter::new(policy, MemoryStore::new());
    let t = Nanos::from_secs(1_000);
    let keys: Vec<String> = (0..5000).map(|i| format!("k{i}")).collect();
    for (i, k) in keys.iter().enumerate() {
        // Each key is idle again 100 ms later; time moves 1 ms per key.
        limiter.check(&[k], t + Nanos::from_millis(i as u64), 1).unwrap();
    }
    assert!(limiter.store().len() < 2100, "idle keys were not swept: {}", limiter.store().len());
    let held = limiter.store().len();
    assert_eq!(limiter.store_mut().prune(t + Nanos::from_secs(10)), held);
    assert!(limiter.store().is_empty());
}

#[test]
fn the_sans_io_step_says_what_to_write_or_that_nothing_changed() {
    use tollgate::store::cas_step;
    let policy = policy_of(&[Kind::FixedWindow]);
    let now = Nanos::from_secs(1_000);
    let absent: [Option<Vec<u8>>; 1] = [None];
    // Allowed over an absent key: new bytes to swap in.
    let step = cas_step(&policy, &absent, &mut |s| policy.check(s, now, 1).unwrap().allowed).unwrap();
    assert!(step.result && step.changed, "an allowed hit writes");
    let bytes = step.states[0].as_ref().unwrap().0.clone();
    // Peeking over those bytes changes nothing: nothing to swap.
    let step = cas_step(&policy, &[Some(bytes.clone())], &mut |s| policy.peek(s, now, 1).unwrap().allowed).unwrap();
    assert!(step.result && !step.changed);
    assert_eq!(step.states[0].as_ref().unwrap().0, bytes);
    // A denial writes nothing either.
    let full = tollgate::Algorithm::capacity(policy.limits()[0].algorithm());
    let step = cas_step(&policy, &[Some(bytes.clone())], &mut |s| policy.check(s, now, full).unwrap().allowed).unwrap();
    assert!(!step.result && !step.changed);
    // Bytes that are not a state of this policy: the key's index and why, nothing decided.
    let mut decided = false;
    let err = cas_step(&policy, &[None, Some(vec![0xff, 1, 2])], &mut |_| decided = true).unwrap_err();
    assert_eq!(err.0, 1);
    assert!(!decided);
}
