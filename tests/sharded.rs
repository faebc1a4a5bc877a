//! The sharded limiter under many threads: exact (never more admitted than the limit, across
//! threads) for every algorithm, on one hot key and on many keys; time is an argument, so the
//! test is the same on a busy machine. The loom model of the same rule is src/sharded.rs's.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;

use tollgate::algorithms::any::{Kind, LimitSpec};
use tollgate::sharded::ShardedLimiter;
use tollgate::{AnyAlgorithm, Nanos};

const THREADS: usize = 8;

fn algorithm(kind: Kind, limit: u64) -> AnyAlgorithm {
    let mut spec = LimitSpec::new(kind, limit, Nanos::from_secs(60));
    if kind == Kind::SlidingBuckets {
        spec.precision = Some(Nanos::from_secs(6));
    }
    AnyAlgorithm::from_spec(&spec).unwrap()
}

/// `THREADS` threads each send `hits` hits, spread over `keys` keys, all at one instant:
/// what was admitted per key.
fn hammer(limiter: &ShardedLimiter<AnyAlgorithm>, keys: usize, hits: usize) -> Vec<u64> {
    let admitted: Vec<AtomicU64> = (0..keys).map(|_| AtomicU64::new(0)).collect();
    let start = Barrier::new(THREADS);
    let now = Nanos::from_secs(1_700_000_000);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (admitted, start) = (&admitted, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..hits {
                    let k = (i * 7 + t * 13) % keys;
                    if limiter.check(format!("key:{k}").as_str(), now, 1).unwrap().allowed {
                        admitted[k].fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    admitted.into_iter().map(AtomicU64::into_inner).collect()
}

#[test]
fn one_hot_key_admits_exactly_its_limit_for_every_algorithm() {
    for kind in Kind::ALL {
        let limiter = ShardedLimiter::new(algorithm(kind, 1000));
        let admitted = hammer(&limiter, 1, 2000);
        assert_eq!(admitted, vec![1000], "{kind:?}: 16,000 hits from {THREADS} threads at one instant");
        assert!(!limiter.check("key:0", Nanos::from_secs(1_700_000_000), 1).unwrap().allowed);
    }
}

#[test]
fn many_keys_each_admit_exactly_their_limit_for_every_algorithm() {
    for kind in Kind::ALL {
        let limiter = ShardedLimiter::new(algorithm(kind, 5));
        let admitted = hammer(&limiter, 997, 4000);
        assert!(admitted.iter().all(|&a| a == 5), "{kind:?}: every key at its limit, none over: {admitted:?}");
        assert_eq!(limiter.len(), 997);
    }
}

#[test]
fn decisions_match_a_single_threaded_keyed_limiter() {
    // One thread: the sharded limiter is the keyed limiter's decisions, figure for figure.
    for kind in Kind::ALL {
        let sharded = ShardedLimiter::new(algorithm(kind, 3));
        let mut keyed = tollgate::KeyedLimiter::new(algorithm(kind, 3));
        for i in 0..500u64 {
            let now = Nanos::from_secs(1_700_000_000) + Nanos::from_millis(i * 37);
            let key = format!("k{}", i % 5);
            assert_eq!(sharded.check(key.as_str(), now, 1 + i % 2), keyed.check(key.as_str(), now, 1 + i % 2), "{kind:?} hit {i}");
            assert_eq!(sharded.peek(key.as_str(), now, 1), keyed.peek(key.as_str(), now, 1));
            if i % 11 == 0 {
                sharded.refund(key.as_str(), now, 1);
                keyed.refund(key.as_str(), now, 1);
            }
        }
        assert_eq!(sharded.len(), keyed.len());
        let later = Nanos::from_secs(1_800_000_000);
        assert_eq!(sharded.prune(later), keyed.prune(later));
        assert!(sharded.is_empty());
    }
}

#[test]
fn the_key_cap_holds_across_shards() {
    let limiter: ShardedLimiter<AnyAlgorithm> = ShardedLimiter::with_shards(algorithm(Kind::Gcra, 5), 4).with_max_keys(100);
    for i in 0..1000u64 {
        limiter.check(format!("k{i}").as_str(), Nanos::from_secs(1_700_000_000), 1).unwrap();
    }
    assert!(limiter.len() <= 100, "{} keys held", limiter.len());
    assert!(limiter.evictions() >= 900);
}
