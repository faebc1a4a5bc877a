//! Many keys in memory: the map behind [`KeyedLimiter`] and [`crate::store::MemoryStore`].
//!
//! Idle keys are dropped once their state is fresh again (their longest window has passed):
//! automatically, whenever the map has doubled since the last sweep (amortized O(1) per
//! insert, memory at most about twice the live keys), or on demand with `prune`.
//!
//! An optional key cap bounds memory under a flood of new keys. **Eviction rule**: when a new
//! key arrives at the cap, keys that are already fresh are dropped first; if that frees
//! nothing, the eighth of the keys that will be fresh soonest are evicted and counted in
//! `evictions()`. Those keys carry the least history, and forgetting a key can only make the
//! limiter more permissive for that key, never lock anyone out.
//!
//! Both rules are the provided methods of [`FreshTable`], a table of keys each with the time
//! its state is fresh: stated once, and used by every in-memory key store (the map here, and
//! the npm package's compact store of key records in wasm).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::borrow::Borrow;
use core::hash::{BuildHasher, Hash, Hasher};

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

use crate::algorithm::Algorithm;
use crate::decide::{self, Held, Read};
use crate::decision::Decision;
use crate::error::CheckError;
use crate::time::Nanos;

/// The smallest number of keys at which an automatic sweep of idle keys runs.
pub const FIRST_SWEEP: usize = 1024;

/// Turns a borrowed key into the owned key a map stores (only when a key is inserted).
pub trait ToKey<K> {
    /// The owned key.
    fn to_key(&self) -> K;
}

impl ToKey<Box<str>> for str {
    fn to_key(&self) -> Box<str> {
        self.into()
    }
}

impl ToKey<String> for str {
    fn to_key(&self) -> String {
        self.into()
    }
}

impl<T: Clone> ToKey<T> for T {
    fn to_key(&self) -> T {
        self.clone()
    }
}

/// What the sweep and the key cap remember between inserts: the cap, when the next
/// automatic sweep is due, and how many keys the cap has evicted.
#[derive(Copy, Clone, Debug)]
pub struct KeyRules {
    max_keys: Option<usize>,
    evictions: u64,
    next_sweep: usize,
}

impl KeyRules {
    /// No key cap (`None`), or at most `max_keys` keys (at least 1).
    pub fn new(max_keys: Option<usize>) -> KeyRules {
        KeyRules { max_keys: max_keys.map(|m| m.max(1)), evictions: 0, next_sweep: FIRST_SWEEP }
    }

    /// How many keys the cap has evicted so far.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }
}

/// A table of keys, each with the time from which its state is fresh (decides like no state
/// at all, so it may be dropped): what the rules of the module docs act on. Its provided
/// methods are those rules, stated once for every key store: the map behind the native
/// [`KeyedLimiter`] and [`crate::store::MemoryStore`], and the wasm module's compact store.
///
/// ```
/// use tollgate::keyed::{FreshTable, KeyRules};
/// use tollgate::Nanos;
///
/// /// Keys with the time each is fresh from, at most 8 of them.
/// struct Table {
///     keys: Vec<(u32, Nanos)>,
///     rules: KeyRules,
/// }
///
/// impl FreshTable for Table {
///     fn len(&self) -> usize {
///         self.keys.len()
///     }
///     fn fresh_times(&self) -> Vec<Nanos> {
///         self.keys.iter().map(|&(_, fresh_at)| fresh_at).collect()
///     }
///     fn remove_where(&mut self, mut drop: impl FnMut(Nanos) -> bool) -> usize {
///         let before = self.keys.len();
///         self.keys.retain(|&(_, fresh_at)| !drop(fresh_at));
///         before - self.keys.len()
///     }
///     fn key_rules(&mut self) -> &mut KeyRules {
///         &mut self.rules
///     }
/// }
///
/// let secs = Nanos::from_secs;
/// let mut table = Table { keys: (0..8).map(|k| (k, secs(10 + k as u64))).collect(), rules: KeyRules::new(Some(8)) };
/// // A new key at the cap, none fresh: the eighth that will be fresh soonest (key 0) goes.
/// table.make_room(secs(5));
/// assert_eq!(table.keys[0].0, 1);
/// assert_eq!(table.key_rules().evictions(), 1);
/// table.keys.push((8, secs(30)));
/// // At the cap again, keys 1 and 2 are fresh by 12 s: they are dropped, nothing is evicted.
/// table.make_room(secs(12));
/// assert_eq!((table.len(), table.key_rules().evictions()), (6, 1));
/// ```
pub trait FreshTable {
    /// How many keys the table holds.
    fn len(&self) -> usize;

    /// Whether the table holds no key.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When each key becomes fresh, in any order.
    fn fresh_times(&self) -> Vec<Nanos>;

    /// Removes every key for which `drop` (given its fresh time), called once per key in
    /// table order, answers true; returns how many.
    fn remove_where(&mut self, drop: impl FnMut(Nanos) -> bool) -> usize;

    /// The table's sweep and cap state.
    fn key_rules(&mut self) -> &mut KeyRules;

    /// Drops every key that is fresh at `now`; returns how many.
    fn prune(&mut self, now: Nanos) -> usize {
        self.remove_where(|fresh_at| fresh_at <= now)
    }

    /// Before a new key is inserted: the automatic sweep once the table has doubled since the
    /// last one (at [`FIRST_SWEEP`] keys at the earliest), then, at the key cap, the fresh keys
    /// and failing that the eighth that will be fresh soonest.
    fn make_room(&mut self, now: Nanos) {
        if self.len() >= self.key_rules().next_sweep {
            self.prune(now);
            let next = (self.len() * 2).max(FIRST_SWEEP);
            self.key_rules().next_sweep = next;
        }
        if let Some(max) = self.key_rules().max_keys {
            if self.len() >= max && self.prune(now) == 0 {
                self.evict_soonest_fresh(max.div_ceil(8));
            }
        }
    }

    /// Evicts the `count` keys that will be fresh soonest (strictly sooner first, then ties at
    /// the threshold in table order) and counts them.
    fn evict_soonest_fresh(&mut self, count: usize) {
        let mut times = self.fresh_times();
        if times.is_empty() {
            return;
        }
        let count = count.clamp(1, times.len());
        let threshold = kth_smallest(&mut times, count - 1);
        drop(times);
        let mut left = count;
        for strictly in [true, false] {
            self.remove_where(|t| {
                let hit = left > 0 && if strictly { t < threshold } else { t == threshold };
                if hit {
                    left -= 1;
                }
                hit
            });
        }
        self.key_rules().evictions += (count - left) as u64;
    }
}

/// A hash table of key states that sweeps idle keys and enforces an optional key cap.
///
/// A `HashTable` of `(key, state)` pairs with the map's hasher beside it, rather than a
/// `HashMap`: a keyed check probes once, and a new key found absent by that probe is then
/// stored without a second lookup (`insert_new`), even when a sweep ran in between (a sweep
/// only removes keys).
#[derive(Clone, Debug)]
pub(crate) struct KeyMap<K, S> {
    table: HashTable<(K, S)>,
    hasher: DefaultHashBuilder,
    rules: KeyRules,
}

/// A [`KeyMap`] with the function that says when each of its states is fresh: the map as a
/// [`FreshTable`].
struct WithFreshness<'a, K, S, F> {
    keys: &'a mut KeyMap<K, S>,
    fresh_at: F,
}

impl<K, S, F: Fn(&S) -> Nanos> FreshTable for WithFreshness<'_, K, S, F> {
    fn len(&self) -> usize {
        self.keys.table.len()
    }

    fn fresh_times(&self) -> Vec<Nanos> {
        self.keys.table.iter().map(|(_, s)| (self.fresh_at)(s)).collect()
    }

    fn remove_where(&mut self, mut drop: impl FnMut(Nanos) -> bool) -> usize {
        let before = self.keys.table.len();
        let fresh_at = &self.fresh_at;
        self.keys.table.retain(|(_, s)| !drop(fresh_at(s)));
        before - self.keys.table.len()
    }

    fn key_rules(&mut self) -> &mut KeyRules {
        &mut self.keys.rules
    }
}

impl<K: Hash + Eq, S> KeyMap<K, S> {
    pub(crate) fn new() -> KeyMap<K, S> {
        KeyMap::with_hasher(DefaultHashBuilder::default())
    }

    /// A map hashing with `hasher`: a caller holding the same hasher may hash a key once and
    /// hand the hash to [`find_mut`](KeyMap::find_mut) (the sharded limiter's shards).
    pub(crate) fn with_hasher(hasher: DefaultHashBuilder) -> KeyMap<K, S> {
        KeyMap { table: HashTable::new(), hasher, rules: KeyRules::new(None) }
    }

    pub(crate) fn set_max_keys(&mut self, max: Option<usize>) {
        self.rules = KeyRules { max_keys: max.map(|m| m.max(1)), ..self.rules };
    }

    pub(crate) fn evictions(&self) -> u64 {
        self.rules.evictions
    }

    /// How many keys hold state.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// `key`'s hash, for [`find_mut`](KeyMap::find_mut) and [`insert_new`](KeyMap::insert_new).
    #[inline(always)]
    pub(crate) fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        hash_of(&self.hasher, key)
    }

    /// The state of `key`, whose hash is `hash`.
    #[inline(always)]
    pub(crate) fn find_mut<Q>(&mut self, hash: u64, key: &Q) -> Option<&mut S>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.table.find_mut(hash, |(k, _)| k.borrow() == key).map(|(_, s)| s)
    }

    /// The state of `key`.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<&S>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.table.is_empty() {
            return None;
        }
        self.table.find(self.hash(key), |(k, _)| k.borrow() == key).map(|(_, s)| s)
    }

    /// The state of `key`, to change in place.
    pub(crate) fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut S>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        // Nothing to hash for in an empty map (a store that only peeks, or every key pruned).
        if self.table.is_empty() {
            return None;
        }
        self.find_mut(self.hash(key), key)
    }

    /// Forgets `key`.
    pub(crate) fn remove<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.table.is_empty() {
            return;
        }
        if let Ok(entry) = self.table.find_entry(self.hash(key), |(k, _)| k.borrow() == key) {
            entry.remove();
        }
    }

    /// Stores `state` for `key`, replacing any state it had, without a sweep (state import).
    pub(crate) fn set(&mut self, key: K, state: S) {
        let hasher = &self.hasher;
        match self.table.entry(hash_of(hasher, &key), |(k, _)| *k == key, |(k, _)| hash_of(hasher, k)) {
            Entry::Occupied(mut entry) => entry.get_mut().1 = state,
            Entry::Vacant(entry) => {
                entry.insert((key, state));
            }
        }
    }

    /// Every key with its state, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &S)> {
        self.table.iter().map(|(k, s)| (k, s))
    }

    /// Drops every state that is fresh at `now`; returns how many.
    pub(crate) fn prune(&mut self, now: Nanos, fresh_at: impl Fn(&S) -> Nanos) -> usize {
        WithFreshness { keys: self, fresh_at }.prune(now)
    }

    /// Stores a new key's state, sweeping and evicting first as the rules above say (a key
    /// already held has its state replaced).
    pub(crate) fn insert(&mut self, key: K, state: S, now: Nanos, fresh_at: impl Fn(&S) -> Nanos) {
        self.make_room(now, &fresh_at);
        self.set(key, state);
    }

    /// [`insert`](KeyMap::insert) of a key the map does not hold, whose hash the caller has
    /// already computed with [`hash`](KeyMap::hash): no lookup, only the search for a free
    /// slot. Storing a key the map holds would hold it twice.
    pub(crate) fn insert_new(&mut self, hash: u64, key: K, state: S, now: Nanos, fresh_at: impl Fn(&S) -> Nanos) {
        self.make_room(now, &fresh_at);
        let hasher = &self.hasher;
        self.table.insert_unique(hash, (key, state), |(k, _)| hash_of(hasher, k));
    }

    /// The sweep and the key cap ([`FreshTable::make_room`]), before a new key is inserted.
    /// Only ever removes keys.
    fn make_room(&mut self, now: Nanos, fresh_at: impl Fn(&S) -> Nanos) {
        WithFreshness { keys: self, fresh_at }.make_room(now);
    }
}

/// An in-memory limiter over many keys with one algorithm: the fastest path, and the
/// governor-style API for Rust programs.
///
/// Keys are any hashable type (`Box<str>` by default); state per key is the algorithm's own
/// (8 bytes for GCRA, 16 for a token bucket), nothing more.
///
/// ```
/// use tollgate::{Gcra, KeyedLimiter, Nanos, Quota};
/// let mut limiter = KeyedLimiter::new(Gcra::new(Quota::per_second(2).unwrap()).unwrap());
/// let now = Nanos::from_secs(1_000);
/// assert!(limiter.check("user:42", now, 1).unwrap().allowed);
/// assert!(limiter.check("user:42", now, 1).unwrap().allowed);
/// assert!(!limiter.check("user:42", now, 1).unwrap().allowed);
/// assert!(limiter.check("user:7", now, 1).unwrap().allowed); // every key has its own state
/// assert_eq!(limiter.prune(now + Nanos::from_secs(2)), 2); // both are idle again
/// ```
#[derive(Clone, Debug)]
pub struct KeyedLimiter<A: Algorithm, K = Box<str>> {
    algorithm: A,
    keys: KeyMap<K, A::State>,
}

impl<A: Algorithm> KeyedLimiter<A> {
    /// A limiter applying `algorithm` to string keys.
    pub fn new(algorithm: A) -> KeyedLimiter<A> {
        KeyedLimiter::with_key_type(algorithm)
    }
}

impl<A: Algorithm, K: Hash + Eq> KeyedLimiter<A, K> {
    /// A limiter applying `algorithm` to keys of type `K` (e.g. `u64` ids, `IpAddr`):
    /// `KeyedLimiter::<_, u64>::with_key_type(gcra)`.
    pub fn with_key_type(algorithm: A) -> KeyedLimiter<A, K> {
        KeyedLimiter { algorithm, keys: KeyMap::new() }
    }

    /// A limiter whose map hashes keys with `hasher`, for a caller that hashes each key once
    /// with the same hasher and passes the hash to [`check_hashed`](KeyedLimiter::check_hashed).
    #[cfg(feature = "std")]
    pub(crate) fn with_hasher(algorithm: A, hasher: DefaultHashBuilder) -> KeyedLimiter<A, K> {
        KeyedLimiter { algorithm, keys: KeyMap::with_hasher(hasher) }
    }

    /// Caps the number of keys held (see the module docs for the eviction rule).
    pub fn with_max_keys(mut self, max_keys: usize) -> KeyedLimiter<A, K> {
        self.keys.set_max_keys(Some(max_keys));
        self
    }

    /// The algorithm.
    pub fn algorithm(&self) -> &A {
        &self.algorithm
    }

    /// Decides a hit of `cost` for `key` at `now`, counting it if admitted.
    ///
    /// One hash and one probe of the table. Inlined into the caller, so that the lookup and
    /// the algorithm's arithmetic are one piece of code and the decision stays in registers;
    /// only the insertion of a new key (allocation, sweep, eviction) is a call, which hashes
    /// the key again rather than keep its hash live through every hit's probe.
    #[inline(always)]
    pub fn check<Q>(&mut self, key: &Q, now: Nanos, cost: u64) -> Result<Decision, CheckError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToKey<K> + ?Sized,
    {
        self.check_hashed(self.keys.hash(key), key, now, cost)
    }

    /// [`check`](KeyedLimiter::check) of a key whose hash by this map's hasher the caller has
    /// computed (the sharded limiter, which chose the key's shard by the same hash). A hash of
    /// another hasher finds nothing and would store the key twice.
    #[inline(always)]
    pub(crate) fn check_hashed<Q>(&mut self, hash: u64, key: &Q, now: Nanos, cost: u64) -> Result<Decision, CheckError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToKey<K> + ?Sized,
    {
        match self.keys.find_mut(hash, key) {
            Some(state) => decide::count(|_| &self.algorithm, &mut Held(state), now, cost, |_, _| {}),
            None => {
                let mut slot = None;
                let answer = decide::count(|_| &self.algorithm, &mut slot, now, cost, |_, _| {});
                if let Some(state) = slot {
                    self.insert_new_key(key, state, now);
                }
                answer
            }
        }
    }

    /// Stores the state of a key the map does not hold, sweeping or evicting first as the
    /// module docs say.
    #[inline(never)]
    fn insert_new_key<Q>(&mut self, key: &Q, state: A::State, now: Nanos)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToKey<K> + ?Sized,
    {
        let algorithm = &self.algorithm;
        let hash = self.keys.hash(key);
        self.keys.insert_new(hash, key.to_key(), state, now, |s| algorithm.fresh_at(s));
    }

    /// The decision `check` would make, changing nothing.
    pub fn peek<Q>(&self, key: &Q, now: Nanos, cost: u64) -> Result<Decision, CheckError>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        decide::peek(|_| &self.algorithm, &Read(self.keys.get(key)), now, cost, |_, _| {})
    }

    /// Gives back `cost` units to `key`, never beyond fresh.
    pub fn refund<Q>(&mut self, key: &Q, now: Nanos, cost: u64)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(state) = self.keys.get_mut(key) {
            match self.algorithm.refund(state, now, cost) {
                Some(new) => *state = new,
                None => {
                    self.keys.remove(key);
                }
            }
        }
    }

    /// Forgets `key`: its next hit finds it fresh.
    pub fn reset<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.keys.remove(key);
    }

    /// The stored state of `key` (`None`: fresh).
    pub fn state<Q>(&self, key: &Q) -> Option<&A::State>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.keys.get(key)
    }

    /// Replaces the stored state of `key` (state import).
    pub fn set_state(&mut self, key: K, state: Option<A::State>) {
        match state {
            Some(s) => {
                self.keys.set(key, s);
            }
            None => {
                self.keys.remove(&key);
            }
        }
    }

    /// Drops every key that is fresh at `now`; returns how many.
    pub fn prune(&mut self, now: Nanos) -> usize {
        let algorithm = &self.algorithm;
        self.keys.prune(now, |s| algorithm.fresh_at(s))
    }

    /// How many keys hold state.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Every key holding state, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.keys.iter().map(|(k, _)| k)
    }

    /// Whether no key holds state.
    pub fn is_empty(&self) -> bool {
        self.keys.len() == 0
    }

    /// How many keys the cap has evicted so far.
    pub fn evictions(&self) -> u64 {
        self.keys.evictions()
    }
}

/// `key`'s hash by the map's hasher, as the map computes it (`BuildHasher::hash_one`, which
/// the compiler may leave as a call: here every step is inlined into the check).
#[allow(clippy::manual_hash_one)]
#[inline(always)]
pub(crate) fn hash_of<Q: Hash + ?Sized>(hasher: &impl BuildHasher, key: &Q) -> u64 {
    let mut state = hasher.build_hasher();
    key.hash(&mut state);
    state.finish()
}

/// The `k`-th smallest (0-based) of `times` (`k` past the end means the largest): the
/// eviction threshold of the key cap ([`FreshTable::evict_soonest_fresh`]). Reorders `times`.
///
/// A radix select over the offsets from the smallest value, a byte at a time from the highest
/// byte in which they differ, keeping only the candidates whose bytes so far match, instead of
/// `select_nth_unstable`: no worst case on any input, and a few hundred bytes of code where
/// the standard library's introselect is kilobytes of the npm package's wasm (about 5 KB).
/// Slower than `select_nth_unstable` natively, but paid only once per eighth of
/// the cap's new keys.
pub fn kth_smallest(times: &mut [Nanos], k: usize) -> Nanos {
    let Some(&first) = times.first() else {
        return Nanos::ZERO;
    };
    let mut k = k.min(times.len() - 1);
    let (mut lo, mut hi) = (first.as_nanos(), first.as_nanos());
    for t in times.iter() {
        lo = lo.min(t.as_nanos());
        hi = hi.max(t.as_nanos());
    }
    if lo == hi {
        return Nanos::new(lo);
    }
    let digit_of = |t: &Nanos, shift: u32| ((t.as_nanos() - lo) >> shift) as usize & 0xff;
    let mut shift = (63 - (hi - lo).leading_zeros()) / 8 * 8;
    let mut chosen = 0u64;
    let mut n = times.len();
    loop {
        let mut counts = [0usize; 256];
        for t in &times[..n] {
            counts[digit_of(t, shift)] += 1;
        }
        let mut digit = 0;
        for (d, &c) in counts.iter().enumerate() {
            digit = d;
            if k < c {
                break;
            }
            k -= c;
        }
        chosen |= (digit as u64) << shift;
        if shift == 0 {
            return Nanos::new(lo + chosen);
        }
        // The candidates with this byte to the front; the rest are out.
        let mut m = 0;
        for i in 0..n {
            if digit_of(&times[i], shift) == digit {
                times.swap(m, i);
                m += 1;
            }
        }
        n = m;
        shift -= 8;
    }
}

#[cfg(test)]
mod kth_smallest_tests {
    use super::*;

    /// Same answer as sorting, for every `k`, over values with many ties, spread over all 64
    /// bits, and clustered (today's epoch in ns).
    #[test]
    fn is_the_sorted_kth() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for shape in 0..4 {
            for n in [1usize, 2, 3, 17, 300] {
                let v: Vec<Nanos> = (0..n)
                    .map(|_| {
                        let r = next();
                        Nanos::new(match shape {
                            0 => r % 5,
                            1 => r,
                            2 => 1_700_000_000_000_000_000 + r % 1_000_000_000,
                            _ => [0, u64::MAX, 1 << 63, 255, 256][(r % 5) as usize],
                        })
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort_unstable();
                for (k, want) in sorted.iter().enumerate() {
                    assert_eq!(kth_smallest(&mut v.clone(), k), *want, "shape {shape}, n {n}, k {k}");
                }
            }
        }
    }
}
