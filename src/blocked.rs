//! The blocked-key cache: the state a shared store (a Durable Object, Redis) last confirmed for
//! each key, so that a hit on a key known to be blocked is denied without asking the store.
//!
//! It keeps *states*, never decisions. A denial is decided by the policy's
//! [`peek`](crate::Policy::peek) over the cached state at the hit's own `now` and `cost`, so a
//! heavier hit gets its own wait and the state's real `remaining`, exactly as the store would
//! answer if nothing else had happened to the key since the state was confirmed.
//!
//! Why a cached denial is safe and exact: every algorithm only gets more permissive as time
//! passes without hits, so a state that admits no hit at all (not one of cost 1) at `now`
//! admitted none since it was confirmed: no other writer can have added a hit, and a denial
//! over it has the store's own figures (`remaining`, `retryAfter`) for any cost. A state that
//! still admits a lighter hit may have taken other writers' hits, which it does not hold (its
//! `remaining` would be too high and its wait too short): a denial over it asks the store.
//! What remains is a reset or refund by another writer, which bounds how long an entry is
//! trusted: at most `trust` after the store confirmed it; after that the caller asks the store
//! again and remembers what it answers.
//!
//! Bounded: at most `max_entries` keys; remembering one more drops the entry confirmed
//! longest ago. No clock: every function takes the time it is asked about.

use alloc::boxed::Box;
use alloc::vec::Vec;
use hashbrown::HashMap;

use crate::{CheckError, Nanos, Policy, PolicyDecision, PolicyState};

#[derive(Clone, Debug)]
struct Entry<S> {
    state: S,
    confirmed_at: Nanos,
    /// Position in the confirmation order (the oldest is dropped first).
    seq: u64,
}

/// What a store last confirmed per key, bounded, generic over how a caller holds a state
/// (decoded [`PolicyState`]s in the Worker, encoded bytes in the npm Redis store).
///
/// ```
/// use tollgate::blocked::BlockedCache;
/// use tollgate::{AnyAlgorithm, Gcra, Nanos, Policy, Quota};
///
/// // GCRA of 100/s, burst 20: 20 hits empty the burst.
/// let gcra = Gcra::new(Quota::per_second(100).unwrap().with_burst(20).unwrap()).unwrap();
/// let policy = Policy::single(AnyAlgorithm::Gcra(gcra));
/// let t = Nanos::from_secs(1_000);
/// let mut states = [None];
/// policy.check(&mut states, t, 20).unwrap();
/// // The store denied a hit of cost 1 and answered its state: remember it.
/// let mut cache = BlockedCache::new(10_000, Nanos::from_secs(1));
/// cache.remember("api/user:42", states[0].clone(), t);
/// // A hit of cost 4 is denied from the cache with its own wait, not the lighter hit's.
/// let d = cache.denial(&policy, "api/user:42", t, 4).unwrap().unwrap();
/// assert_eq!(d.decision.retry_after, Nanos::from_millis(40));
/// assert_eq!(d, policy.peek(&states, t, 4).unwrap());
/// ```
#[derive(Clone, Debug)]
pub struct BlockedCache<S> {
    entries: HashMap<Box<str>, Entry<S>>,
    /// (seq, key) in confirmation order from `head` on, oldest first. An entry confirmed again
    /// leaves its old pair behind (skipped when it comes up: its seq no longer matches), so
    /// remembering is amortized O(1); the queue is compacted once it holds more than twice as
    /// many pairs as there are entries.
    order: Vec<(u64, Box<str>)>,
    head: usize,
    next_seq: u64,
    max_entries: usize,
    trust: Nanos,
}

impl<S> BlockedCache<S> {
    /// A cache of at most `max_entries` keys (0: remembers nothing), whose entries are trusted
    /// for `trust` after their confirmation (`Nanos::ZERO`: never trusted, so never used).
    pub fn new(max_entries: usize, trust: Nanos) -> BlockedCache<S> {
        BlockedCache { entries: HashMap::new(), order: Vec::new(), head: 0, next_seq: 0, max_entries, trust }
    }

    /// How long an entry is trusted after its confirmation.
    pub fn trust(&self) -> Nanos {
        self.trust
    }

    /// The most keys kept.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// Remembers that the store holds `state` for `key`, as confirmed at `at` (it answered it,
    /// or accepted it as a write). The entry becomes the newest; beyond `max_entries`, the one
    /// confirmed longest ago is dropped.
    pub fn remember(&mut self, key: &str, state: S, at: Nanos) {
        if self.max_entries == 0 {
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.entries.insert(Box::from(key), Entry { state, confirmed_at: at, seq });
        self.order.push((seq, Box::from(key)));
        while self.entries.len() > self.max_entries && self.head < self.order.len() {
            let (seq, oldest) = &self.order[self.head];
            self.head += 1;
            if self.entry(oldest).is_some_and(|e| e.seq == *seq) {
                let oldest = oldest.clone();
                self.forget(&oldest);
            }
        }
        // Compacted once the queue is mostly dead: popped pairs, or pairs of keys confirmed again.
        if self.order.len() > 2 * self.entries.len() + 64 {
            let mut order = core::mem::take(&mut self.order);
            let head = core::mem::take(&mut self.head);
            order.drain(..head);
            order.retain(|(seq, key)| self.entry(key).is_some_and(|e| e.seq == *seq));
            self.order = order;
        }
    }

    /// The state last confirmed for `key`, trusted or not (a compare-and-swap starts from it).
    pub fn state(&self, key: &str) -> Option<&S> {
        self.entry(key).map(|e| &e.state)
    }

    /// Whether `key`'s entry may still decide a denial at `now`: confirmed no longer than
    /// `trust` ago. A clock that went back before the confirmation is not trusted.
    pub fn trusted(&self, key: &str, now: Nanos) -> bool {
        self.entry(key)
            .is_some_and(|e| now >= e.confirmed_at && now - e.confirmed_at <= self.trust && self.trust > Nanos::ZERO)
    }

    /// Forgets `key` (reset, refund, a failed write whose outcome is unknown, or a hit the
    /// store admitted since). Its pair in the order queue goes stale.
    #[inline(never)]
    pub fn forget(&mut self, key: &str) {
        self.entries.remove(key);
    }

    /// The one lookup every reader goes through (not inlined: one copy of the probe loop keeps
    /// the npm package's wasm module small).
    #[inline(never)]
    fn entry(&self, key: &str) -> Option<&Entry<S>> {
        self.entries.get(key)
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl BlockedCache<Option<PolicyState>> {
    /// The denial of a hit of `cost` on `key` at `now`, decided by `policy` over the trusted
    /// cached state: `Ok(None)` when the key has no trusted entry or the hit would be admitted
    /// (ask the store), `Err` when the cost is invalid for the policy. A policy whose blocks
    /// escalate ([`Policy::escalates`]) is never denied from the cache: each denial renews or
    /// doubles the block in the store, which must see it.
    pub fn denial(
        &self,
        policy: &Policy,
        key: &str,
        now: Nanos,
        cost: u64,
    ) -> Result<Option<PolicyDecision>, CheckError> {
        if !self.trusted(key, now) || policy.escalates() {
            return Ok(None);
        }
        // Other writers' releases free a concurrency limit's slots at any time: the normal
        // path there, not a rare reset, so its denials always ask the store.
        #[cfg(feature = "concurrency")]
        if policy.has_concurrency() {
            return Ok(None);
        }
        let Some(state) = self.state(key) else { return Ok(None) };
        let states = core::slice::from_ref(state);
        let d = policy.peek(states, now, cost)?;
        // A state that still admits a hit of cost 1 may have taken other writers' hits since it
        // was confirmed (its figures would be stale): ask the store (module docs).
        if d.allowed || (cost != 1 && policy.peek(states, now, 1)?.allowed) {
            return Ok(None);
        }
        Ok(Some(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnyAlgorithm, Gcra, Quota, SlidingLog};

    fn gcra() -> Policy {
        Policy::single(AnyAlgorithm::Gcra(Gcra::new(Quota::per_second(100).unwrap().with_burst(20).unwrap()).unwrap()))
    }

    #[test]
    fn a_heavier_hit_gets_its_own_wait_and_the_state_s_remaining() {
        let policy = gcra();
        let t = Nanos::from_secs(1_000);
        let mut states = [None];
        policy.check(&mut states, t, 20).unwrap();
        let light = policy.check(&mut states, t + Nanos::from_millis(7), 1).unwrap();
        assert!(!light.allowed);
        let mut cache = BlockedCache::new(8, Nanos::from_secs(1));
        cache.remember("k", states[0].clone(), t + Nanos::from_millis(7));
        for (dt, cost) in [(7, 1), (7, 4), (8, 4), (20, 9), (30, 2)] {
            let now = t + Nanos::from_millis(dt);
            let want = policy.peek(&states, now, cost).unwrap();
            let shut = !policy.peek(&states, now, 1).unwrap().allowed;
            let got = cache.denial(&policy, "k", now, cost).unwrap();
            assert_eq!(got, (!want.allowed && shut).then_some(want), "dt {dt} cost {cost}");
        }
        // cost 4 after a denial of cost 1 waits 30 ms more than cost 1 would (10 ms per unit).
        let heavy = cache.denial(&policy, "k", t + Nanos::from_millis(7), 4).unwrap().unwrap();
        assert_eq!(heavy.decision.retry_after, light.decision.retry_after + Nanos::from_millis(30));
    }

    #[test]
    fn a_state_that_admits_a_lighter_hit_asks_the_store_for_a_heavier_one() {
        // Two writers, sliding log 4 per 10 s, costs 1, 2, 1, 2: the first writer's cached state
        // holds 3 hits (its own and the second's, answered on its lost race); the second writer
        // then adds 1. A denial of cost 2 over the cached 3 would say remaining 1 and the wait
        // of the oldest hit; the store holds 4: remaining 0 and the wait of the second-oldest.
        let policy = Policy::single(AnyAlgorithm::SlidingLog(SlidingLog::new(Quota::new(4, Nanos::from_secs(10)).unwrap()).unwrap()));
        let t = Nanos::from_secs(100);
        let mut store = [None];
        policy.check(&mut store, t, 1).unwrap();
        policy.check(&mut store, t + Nanos::from_millis(700), 2).unwrap();
        let cached = store.clone();
        policy.check(&mut store, t + Nanos::from_millis(1400), 1).unwrap();
        let mut cache = BlockedCache::new(8, Nanos::from_secs(1));
        let now = t + Nanos::from_millis(2099);
        cache.remember("k", cached[0].clone(), now);
        let stale = policy.peek(&cached, now, 2).unwrap();
        assert!(!stale.allowed && stale.decision.remaining == 1);
        assert!(policy.peek(&cached, now, 1).unwrap().allowed);
        assert_eq!(cache.denial(&policy, "k", now, 2).unwrap(), None, "asks the store");
        let truth = policy.peek(&store, now, 2).unwrap();
        assert_eq!((truth.decision.remaining, truth.decision.retry_after), (0, Nanos::from_millis(8601) + Nanos::new(1)), "free 1 ns after the window");
        assert_eq!(stale.decision.retry_after, Nanos::from_millis(7901) + Nanos::new(1));
        // Once the cached state admits nothing, its denial is the store's, for any cost.
        cache.remember("k", store[0].clone(), now);
        assert_eq!(cache.denial(&policy, "k", now, 2).unwrap(), Some(truth));
        assert_eq!(cache.denial(&policy, "k", now, 1).unwrap(), Some(policy.peek(&store, now, 1).unwrap()));
    }

    #[test]
    fn entries_are_trusted_for_the_bound_only_and_not_when_the_clock_went_back() {
        let mut cache: BlockedCache<u8> = BlockedCache::new(8, Nanos::from_millis(1000));
        let t = Nanos::from_secs(50);
        cache.remember("k", 1, t);
        assert!(cache.trusted("k", t));
        assert!(cache.trusted("k", t + Nanos::from_millis(1000)));
        assert!(!cache.trusted("k", t + Nanos::from_millis(1001)));
        assert!(!cache.trusted("k", t - Nanos::new(1)));
        assert_eq!(cache.state("k"), Some(&1), "an untrusted entry still gives its state");
        let mut never: BlockedCache<u8> = BlockedCache::new(8, Nanos::ZERO);
        never.remember("k", 1, t);
        assert!(!never.trusted("k", t));
    }

    #[test]
    fn the_oldest_confirmation_goes_first_and_the_bound_holds() {
        let mut cache: BlockedCache<u32> = BlockedCache::new(3, Nanos::from_secs(1));
        let t = Nanos::from_secs(1);
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            cache.remember(k, i as u32, t);
        }
        cache.remember("a", 9, t); // confirmed again: now the newest
        cache.remember("d", 3, t);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.state("b"), None);
        assert_eq!(cache.state("a"), Some(&9));
        cache.forget("a");
        cache.forget("missing");
        assert_eq!(cache.len(), 2);
        for i in 0..100u32 {
            cache.remember(&alloc::format!("x{i}"), i, t);
            assert!(cache.len() <= 3);
        }
        assert!(cache.order.len() <= 2 * cache.len() + 64, "dead pairs are compacted");
        for _ in 0..1000 {
            cache.remember("hot", 1, t);
        }
        assert!(cache.order.len() <= 2 * cache.len() + 64);
        assert_eq!(cache.len(), 3);
        let mut none: BlockedCache<u32> = BlockedCache::new(0, Nanos::from_secs(1));
        none.remember("a", 1, t);
        assert!(none.is_empty());
    }

    #[test]
    fn it_keeps_exactly_the_most_recently_confirmed_keys_of_a_naive_model() {
        // The model: keys in confirmation order, newest last, the oldest dropped beyond 5.
        let mut model: alloc::vec::Vec<(alloc::string::String, u64)> = alloc::vec::Vec::new();
        let mut cache: BlockedCache<u64> = BlockedCache::new(5, Nanos::from_secs(1));
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for i in 0..20_000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = alloc::format!("k{}", seed % 9);
            model.retain(|(k, _)| *k != key);
            if seed % 5 == 0 {
                cache.forget(&key);
            } else {
                cache.remember(&key, i, Nanos::new(i));
                model.push((key, i));
                if model.len() > 5 {
                    model.remove(0);
                }
                assert!(cache.order.len() <= 2 * cache.len() + 64, "the queue stays bounded");
            }
            assert_eq!(cache.len(), model.len(), "op {i}");
            for (k, v) in &model {
                assert_eq!(cache.state(k), Some(v), "op {i}: {k}");
            }
        }
    }

    #[test]
    fn an_admitted_hit_or_an_untrusted_entry_goes_to_the_store_and_a_bad_cost_is_an_error() {
        let policy = Policy::single(AnyAlgorithm::SlidingLog(SlidingLog::new(Quota::per_second(3).unwrap()).unwrap()));
        let t = Nanos::from_secs(10);
        let mut states = [None];
        policy.check(&mut states, t, 3).unwrap();
        let mut cache = BlockedCache::new(8, Nanos::from_secs(5));
        cache.remember("k", states[0].clone(), t);
        assert!(cache.denial(&policy, "k", t + Nanos::from_millis(500), 1).unwrap().is_some());
        let later = t + Nanos::from_secs(2);
        assert!(policy.peek(&states, later, 1).unwrap().allowed);
        assert!(cache.denial(&policy, "k", later, 1).unwrap().is_none(), "admitted: ask the store");
        assert!(cache.denial(&policy, "other", t, 1).unwrap().is_none());
        assert!(cache.denial(&policy, "k", t, 4).is_err());
        cache.remember("k", states[0].clone(), t - Nanos::from_secs(6));
        assert!(cache.denial(&policy, "k", t, 1).unwrap().is_none(), "confirmed too long ago");
    }
}
