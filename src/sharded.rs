//! [`ShardedLimiter`]: a keyed limiter many threads share (`&self`, `Send + Sync`), for a
//! multi-threaded server (tokio, axum/tower) that would otherwise wrap a [`KeyedLimiter`] in one
//! `Mutex`.
//!
//! The keys are split over a power of two of shards by a hash of the key; each shard is a
//! [`KeyedLimiter`] behind its own lock, padded to its own cache lines. A key lives in exactly
//! one shard, and every decision on it (check, peek, refund, reset) runs under that shard's
//! lock, as the core's pure function of (config, state, now, cost): so the decisions on one key
//! are the ones a single-threaded [`KeyedLimiter`] makes on the same hits in the order the lock
//! admitted them, and never more than the limit is admitted across threads (shown by a loom
//! model of the lock, this module's `loom_tests`, and a stress test, `tests/sharded.rs`). Threads
//! working on keys of different shards never wait for one another. Every algorithm works: the
//! shards hold the algorithm's own state (`AnyAlgorithm` for one chosen at run time).
//!
//! The eviction rule of a key cap (`with_max_keys`) is the keyed map's, per shard: each shard
//! holds at most its share of the cap (rounded up).
//!
//! ```
//! use tollgate::sharded::ShardedLimiter;
//! use tollgate::{Gcra, Nanos, Quota};
//!
//! let limiter = ShardedLimiter::new(Gcra::new(Quota::per_second(2).unwrap()).unwrap());
//! let now = Nanos::from_secs(1);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| limiter.check("user:42", now, 1).unwrap());
//!     }
//! });
//! // Two of the four hits were admitted, whichever threads they came from.
//! assert!(!limiter.check("user:42", now, 1).unwrap().allowed);
//! assert!(limiter.check("user:7", now, 1).unwrap().allowed);
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::borrow::Borrow;
use core::hash::Hash;

use hashbrown::DefaultHashBuilder;

#[cfg(loom)]
use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Mutex, MutexGuard};

use crate::keyed::{hash_of, KeyedLimiter, ToKey};
use crate::{Algorithm, CheckError, Decision, Nanos};

/// One shard: a keyed limiter behind its lock, on cache lines of its own (128 bytes: two
/// lines, as adjacent-line prefetchers pair them), so that threads on different shards do not
/// write to the same line.
#[repr(align(128))]
struct Shard<A: Algorithm, K>(Mutex<KeyedLimiter<A, K>>);

/// A keyed limiter for many threads: see the [module docs](self).
pub struct ShardedLimiter<A: Algorithm, K = Box<str>> {
    shards: Box<[Shard<A, K>]>,
    /// Hashes each key once: its bits 40 and up (below the top seven) pick the key's shard,
    /// and the same hash finds the key in the shard's map, which hashes with a copy of this
    /// hasher. The map reads its hash's low bits (the bucket, fewer than 40 of them below 2^40
    /// buckets) and its top seven (the tag), so the keys of one shard still spread over its table.
    hasher: DefaultHashBuilder,
    /// `shards.len() - 1` (a power of two less one).
    mask: usize,
}

impl<A: Algorithm + Clone> ShardedLimiter<A> {
    /// A limiter applying `algorithm` to string keys, with [`default_shards`] shards.
    pub fn new(algorithm: A) -> ShardedLimiter<A> {
        ShardedLimiter::with_key_type(algorithm)
    }
}

/// Four shards per thread the machine runs at once (`available_parallelism`), as a power of
/// two, at least 4: enough that two threads rarely want the same lock on distinct keys.
pub fn default_shards() -> usize {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    (threads * 4).next_power_of_two().max(4)
}

impl<A: Algorithm + Clone, K: Hash + Eq> ShardedLimiter<A, K> {
    /// A limiter applying `algorithm` to keys of type `K` (e.g. `u64` ids, `IpAddr`), with
    /// [`default_shards`] shards.
    pub fn with_key_type(algorithm: A) -> ShardedLimiter<A, K> {
        ShardedLimiter::with_shards(algorithm, default_shards())
    }

    /// A limiter with `shards` shards (rounded up to a power of two; at least 1).
    pub fn with_shards(algorithm: A, shards: usize) -> ShardedLimiter<A, K> {
        let n = shards.max(1).next_power_of_two();
        let hasher = DefaultHashBuilder::default();
        let shards: Vec<Shard<A, K>> = (0..n)
            .map(|_| Shard(Mutex::new(KeyedLimiter::with_hasher(algorithm.clone(), hasher))))
            .collect();
        ShardedLimiter { shards: shards.into_boxed_slice(), hasher, mask: n - 1 }
    }

    /// Caps the keys held at about `max_keys`: each shard holds at most its share, rounded up,
    /// under the keyed map's eviction rule.
    pub fn with_max_keys(self, max_keys: usize) -> ShardedLimiter<A, K> {
        let share = max_keys.div_ceil(self.shards.len()).max(1);
        let shards = Vec::from(self.shards)
            .into_iter()
            .map(|s| Shard(Mutex::new(into_inner(s.0).with_max_keys(share))))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        ShardedLimiter { shards, ..self }
    }
}

impl<A: Algorithm, K: Hash + Eq> ShardedLimiter<A, K> {
    /// How many shards the keys are split over.
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The shard of `key`, locked. A shard whose lock a panicking thread held is used as it
    /// is: a decision writes a key's state only once it is made, so no state is half written.
    #[inline(always)]
    fn shard<Q: Hash + ?Sized>(&self, key: &Q) -> MutexGuard<'_, KeyedLimiter<A, K>> {
        self.shard_of(self.hash(key))
    }

    /// `key`'s hash, by the hasher every shard's map shares.
    #[inline(always)]
    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        hash_of(&self.hasher, key)
    }

    /// The shard of the key whose hash is `hash`, locked.
    #[inline(always)]
    fn shard_of(&self, hash: u64) -> MutexGuard<'_, KeyedLimiter<A, K>> {
        lock(&self.shards[(hash >> 40) as usize & self.mask].0)
    }

    /// Decides a hit of `cost` for `key` at `now`, counting it if admitted; exact across
    /// threads (the key's shard is locked for the decision). The key is hashed once, for its
    /// shard and its place in the shard's map.
    #[inline]
    pub fn check<Q>(&self, key: &Q, now: Nanos, cost: u64) -> Result<Decision, CheckError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToKey<K> + ?Sized,
    {
        let hash = self.hash(key);
        self.shard_of(hash).check_hashed(hash, key, now, cost)
    }

    /// The decision `check` would make, changing nothing.
    pub fn peek<Q>(&self, key: &Q, now: Nanos, cost: u64) -> Result<Decision, CheckError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shard(key).peek(key, now, cost)
    }

    /// Gives back `cost` units to `key`, never beyond fresh.
    pub fn refund<Q>(&self, key: &Q, now: Nanos, cost: u64)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shard(key).refund(key, now, cost)
    }

    /// Forgets `key`: its next hit finds it fresh.
    pub fn reset<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.shard(key).reset(key)
    }

    /// Drops every key that is fresh at `now`, one shard at a time; returns how many.
    pub fn prune(&self, now: Nanos) -> usize {
        self.shards.iter().map(|s| lock(&s.0).prune(now)).sum()
    }

    /// How many keys hold state (each shard counted under its lock, one after another).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).len()).sum()
    }

    /// Whether no key holds state.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many keys the cap has evicted so far.
    pub fn evictions(&self) -> u64 {
        self.shards.iter().map(|s| lock(&s.0).evictions()).sum()
    }
}

#[inline(always)]
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Every interleaving of threads hitting one key (and two keys of one shard), explored by
/// loom's model of the lock: never more admitted than the limit. Run by scripts/test-loom.sh
/// (`RUSTFLAGS="--cfg loom" cargo test --lib --release sharded::loom_tests`).
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::algorithms::any::{Kind, LimitSpec};
    use crate::{AnyAlgorithm, Quota};
    use alloc::string::String;
    use alloc::sync::Arc;
    use loom::thread;

    /// Three threads, two hits each, on one key whose limit is `limit`, for `algorithm`.
    fn three_threads(algorithm: AnyAlgorithm, limit: u64, keys: &'static [&'static str]) {
        loom::model(move || {
            let limiter: Arc<ShardedLimiter<AnyAlgorithm, String>> =
                Arc::new(ShardedLimiter::with_shards(algorithm.clone(), 1));
            let now = Nanos::from_secs(1);
            let handles: Vec<_> = (0..3)
                .map(|t| {
                    let l = limiter.clone();
                    thread::spawn(move || {
                        (0..2).filter(|i| l.check(keys[(t + i) % keys.len()], now, 1).unwrap().allowed).count() as u64
                    })
                })
                .collect();
            let admitted: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
            assert_eq!(admitted, limit * keys.len() as u64, "exactly the limit of each key, across threads");
        });
    }

    #[test]
    fn every_algorithm_admits_exactly_the_limit_across_threads() {
        for kind in Kind::ALL {
            let mut spec = LimitSpec::new(kind, 2, Nanos::from_secs(1));
            if kind == Kind::SlidingBuckets {
                spec.precision = Some(Nanos::from_millis(100));
            }
            let algorithm = AnyAlgorithm::from_spec(&spec).unwrap();
            three_threads(algorithm, 2, &["k"]);
        }
    }

    #[test]
    fn two_keys_in_one_shard_each_get_their_limit() {
        let q = Quota::per_second(2).unwrap();
        three_threads(AnyAlgorithm::Gcra(crate::Gcra::new(q).unwrap()), 2, &["a", "b"]);
    }
}
