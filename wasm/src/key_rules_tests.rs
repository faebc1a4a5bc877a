//! The compact store decides and keeps keys as the core's in-memory stores do: the same
//! decisions, the same automatic sweeps, the same `maxKeys` evictions, counted alike, over
//! random traces. With a cap, every hit is at its own instant, so no two keys are fresh at the
//! same time and the eviction rule picks the same keys whatever order each table lists them in.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use tollgate::keyed::FreshTable;
use tollgate::policy::{Limit, Policy};
use tollgate::{AnyAlgorithm, Gcra, KeyedLimiter, MemoryStore, Nanos, Quota, Store};

use crate::key_store::CompactKeyed;
use crate::policy_states::PolicyStore;

impl CompactKeyed {
    /// A hit for `key`, decided in the records as the limiter decides it.
    fn check(&mut self, key: &str, now: Nanos, cost: u64) -> Result<tollgate::Decision, tollgate::CheckError> {
        crate::limiter::in_records(self, key, None, now, cost, false).map(|(d, _)| d)
    }
}

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
            let ours = PolicyStore { keys: &mut compact, policy: &policy }
                .update(&keys, now, &mut |s| policy.check(s, now, 1))
                .unwrap();
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

/// Several keys per hit, all or nothing, through the compact store's `Store::update` and the
/// core's `MemoryStore`'s: records (one limit) and the slab (several limits, a penalty).
#[test]
fn several_keys_decide_as_over_the_memory_store() {
    let second = || gcra(Quota::per_second(2).unwrap());
    let policies = [
        Policy::single(second()),
        Policy::new(alloc::vec![
            Limit::new("second", second()).unwrap(),
            Limit::new("minute", gcra(Quota::per_minute(30).unwrap())).unwrap(),
        ])
        .unwrap(),
        Policy::single(second()).with_block_duration(Nanos::from_secs(3)),
    ];
    for (p, policy) in policies.iter().enumerate() {
        let mut compact = CompactKeyed::for_policy(policy, None);
        let mut native = MemoryStore::new();
        let mut next = trace(0x1234_5678_9abc_def1 + p as u64, 40);
        let mut now = Nanos::from_secs(1_000);
        let (mut allowed, mut denied) = (0, 0);
        for step in 0..4_000 {
            now = now + Nanos::from_millis(7 * (step % 5));
            let mut keys: Vec<String> = (0..1 + step % 3).map(|_| next()).collect();
            keys.sort_unstable();
            keys.dedup();
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let peek = step % 7 == 0;
            let mut decide = |s: &mut [Option<_>]| {
                if peek {
                    policy.peek(s, now, 1)
                } else {
                    policy.check(s, now, 1)
                }
            };
            let ours = PolicyStore { keys: &mut compact, policy }.update(&keys, now, &mut decide).unwrap();
            let theirs = native.update(&keys, now, &mut decide).unwrap();
            assert_eq!(ours, theirs, "policy {p} step {step} keys {keys:?}");
            if ours.unwrap().allowed {
                allowed += 1;
            } else {
                denied += 1;
            }
            assert_eq!(compact.len(), native.len(), "policy {p} step {step}");
        }
        assert!(allowed > 100 && denied > 100, "policy {p}: {allowed} allowed, {denied} denied");
        for (key, state) in native.iter() {
            let ours = PolicyStore { keys: &mut compact, policy }.update(&[key], now, &mut |s| s[0].clone()).unwrap();
            assert_eq!(ours.as_ref(), Some(state), "policy {p} key {key}");
        }
    }
}
