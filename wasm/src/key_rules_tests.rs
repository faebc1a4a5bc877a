//! The compact store keeps exactly the keys the core's in-memory stores keep: the same
//! automatic sweeps, the same `maxKeys` evictions, counted alike, over random traces (every
//! hit at its own instant, so no two keys are fresh at the same time and the eviction rule
//! picks the same keys whatever order each table lists them in).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use tollgate::keyed::FreshTable;
use tollgate::policy::{Limit, Policy};
use tollgate::{AnyAlgorithm, Gcra, KeyedLimiter, MemoryStore, Nanos, Quota, Store};

use crate::key_store::CompactKeyed;

fn gcra(quota: Quota) -> AnyAlgorithm {
    AnyAlgorithm::Gcra(Gcra::new(quota).unwrap())
}

/// A key of a pool of `keys`, from a xorshift sequence.
fn trace(seed: u64, keys: u64) -> impl FnMut() -> String {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        alloc::format!("user:{}", x % keys)
    }
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort_unstable();
    keys
}

/// One limit with a fixed-size state: records hold the state, the core's `KeyedLimiter` the
/// same algorithm.
#[test]
fn records_sweep_and_evict_as_the_keyed_limiter() {
    // (quota, cap, pool of keys): evictions without sweeps; sweeps (a key is fresh a second
    // after its hit, 1000 hits later) without a cap; and both.
    for (quota, cap, keys) in [
        (Quota::per_hour(1).unwrap(), Some(64), 300),
        (Quota::per_second(1).unwrap(), None, 3000),
        (Quota::per_second(1).unwrap(), Some(700), 3000),
    ] {
        let algorithm = gcra(quota);
        let mut compact = CompactKeyed::for_policy(&Policy::single(algorithm), cap);
        let mut native = KeyedLimiter::new(algorithm);
        if let Some(cap) = cap {
            native = native.with_max_keys(cap);
        }
        let mut next = trace(0x9e37_79b9_7f4a_7c15, keys);
        let mut now = Nanos::from_secs(1_000);
        for step in 0..12_000 {
            now = now + Nanos::from_millis(1);
            if step % 4_000 == 3_999 {
                now = now + Nanos::from_secs(7_200); // every key fresh: the next insert sweeps
            }
            let key = next();
            let at = alloc::format!("{quota:?} cap {cap:?} step {step}");
            assert_eq!(compact.check(&key, now, 1), native.check(key.as_str(), now, 1), "{at}");
            assert_eq!((compact.len(), compact.evictions()), (native.len(), native.evictions()), "{at}");
        }
        let native_keys = native.keys().map(ToString::to_string).collect();
        assert_eq!(sorted(compact.keys()), sorted(native_keys));
        assert!(cap.is_none() || native.evictions() > 0, "the trace reached the cap");
        assert_eq!(compact.prune(now + Nanos::from_secs(1)), native.prune(now + Nanos::from_secs(1)));
    }
}

/// Several limits: records hold slab indices, the core's `MemoryStore` the policy states.
#[test]
fn the_slab_sweeps_and_evicts_as_the_memory_store() {
    let policy = Policy::new(alloc::vec![
        Limit::new("second", gcra(Quota::per_second(1).unwrap())).unwrap(),
        Limit::new("hour", gcra(Quota::per_hour(100).unwrap())).unwrap(),
    ])
    .unwrap();
    for cap in [None, Some(500)] {
        let mut compact = CompactKeyed::for_policy(&policy, cap);
        let mut native = MemoryStore::new();
        if let Some(cap) = cap {
            native = native.with_max_keys(cap);
        }
        let mut next = trace(0x2545_f491_4f6c_dd1d, 3000);
        let mut now = Nanos::from_secs(1_000);
        for step in 0..6_000 {
            now = now + Nanos::from_millis(1);
            let key = next();
            let keys = [key.as_str()];
            let mut states = alloc::vec![compact.take(&policy, &key).unwrap()];
            let ours = policy.check(&mut states, now, 1);
            compact.put_states(&keys, states, now);
            let theirs = native.update(&keys, now, &mut |s| policy.check(s, now, 1)).unwrap();
            let at = alloc::format!("cap {cap:?} step {step}");
            assert_eq!(ours, theirs, "{at}");
            assert_eq!((compact.len(), compact.evictions()), (native.len(), native.evictions()), "{at}");
        }
        let native_keys = native.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(sorted(compact.keys()), sorted(native_keys));
        assert!(cap.is_none() || native.evictions() > 0, "the trace reached the cap");
    }
}
