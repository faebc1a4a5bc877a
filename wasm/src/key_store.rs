//! The wasm limiter's key store: compact, because wasm memory only ever grows.
//!
//! Measured with 1,000,000 GCRA keys, the core's `KeyedLimiter<AnyAlgorithm>` (a hashbrown map
//! of `Box<str>` to `AnyState`) cost 172 bytes per key in wasm memory: a 40-byte bucket (8 for
//! the boxed key, 32 for the enum state, whose largest fixed variant is 24 bytes) at up to 2x
//! table slack, plus a separate allocation per key string, plus the old table during each
//! doubling, which wasm memory keeps as high-water mark. Here instead:
//!
//! - the key bytes live in one arena of 64 KiB chunks, `[len - 1][bytes]` per key (no per-key
//!   allocation, no doubling of the arena);
//! - each key is an *entry* number; the entries' arena offsets and fixed-size states are two
//!   dense arrays, a state being the algorithm's own words (1 for GCRA, 2 for token bucket
//!   and fixed windows, 3 for the sliding window) rather than the 32-byte enum;
//! - the hash table (hashbrown's `HashTable`) holds only the 4-byte entry number; lookups
//!   compare the whole key in the arena, so two keys never share a state (no fingerprints,
//!   no silent collisions).
//!
//! The sliding log and sliding buckets have variable-size states: they keep the core's
//! `KeyedLimiter` (see `Single`). Idle-key sweeping and the `maxKeys` eviction rule are the
//! core's `KeyMap` rules (src/keyed.rs), restated here over entries.
//!
//! Entry numbers also make key handles cheap: a handle caches its entry and the store's
//! `generation`, which changes only when an entry is removed (the last entry then moves into
//! the hole); while it matches, a check by handle needs no hashing at all.

use alloc::string::String;
use alloc::vec::Vec;
use core::hash::BuildHasher;
use hashbrown::{DefaultHashBuilder, HashTable};
use tollgate::algorithms::{
    AnyState, FirstHitState, FixedWindowState, GcraState, SlidingWindowState, TokenBucketState,
};
use tollgate::{Algorithm, AnyAlgorithm, CheckError, Decision, KeyedLimiter, Kind, Nanos};

/// The smallest number of keys at which an automatic sweep of idle keys runs (as the core's).
const FIRST_SWEEP: usize = 1024;
/// Arena chunk size: keys never straddle two chunks.
const CHUNK: usize = 1 << 16;

/// State words per key for the algorithms with a fixed-size state; `None` for the others.
fn width(kind: Kind) -> Option<usize> {
    match kind {
        Kind::Gcra => Some(1),
        Kind::TokenBucket | Kind::FixedWindow | Kind::FixedWindowFirstHit => Some(2),
        Kind::SlidingWindow => Some(3),
        _ => None,
    }
}

fn to_words(s: &AnyState, w: &mut [u64]) {
    match s {
        AnyState::Gcra(g) => w[0] = g.tat.as_nanos(),
        AnyState::TokenBucket(t) => {
            w[0] = t.tokens;
            w[1] = t.anchor.as_nanos();
        }
        AnyState::FixedWindow(f) => {
            w[0] = f.start.as_nanos();
            w[1] = f.count;
        }
        AnyState::FixedWindowFirstHit(f) => {
            w[0] = f.start.as_nanos();
            w[1] = f.count;
        }
        AnyState::SlidingWindow(s) => {
            w[0] = s.start.as_nanos();
            w[1] = s.current;
            w[2] = s.previous;
        }
        // Never stored here (`width` is `None` for them).
        AnyState::SlidingLog(_) | AnyState::SlidingBuckets(_) => {}
    }
}

fn from_words(kind: Kind, w: &[u64]) -> AnyState {
    match kind {
        Kind::TokenBucket => AnyState::TokenBucket(TokenBucketState {
            tokens: w[0],
            anchor: Nanos::new(w[1]),
        }),
        Kind::FixedWindow => AnyState::FixedWindow(FixedWindowState {
            start: Nanos::new(w[0]),
            count: w[1],
        }),
        Kind::FixedWindowFirstHit => AnyState::FixedWindowFirstHit(FirstHitState {
            start: Nanos::new(w[0]),
            count: w[1],
        }),
        Kind::SlidingWindow => AnyState::SlidingWindow(SlidingWindowState {
            start: Nanos::new(w[0]),
            current: w[1],
            previous: w[2],
        }),
        _ => AnyState::Gcra(GcraState {
            tat: Nanos::new(w[0]),
        }),
    }
}

/// Key bytes in 64 KiB chunks; a key is found by its offset (chunk * CHUNK + position).
#[derive(Default)]
struct Arena {
    chunks: Vec<Vec<u8>>,
    /// Bytes of removed keys, reclaimed by `CompactKeyed::compact`.
    dead: usize,
    live: usize,
}

impl Arena {
    fn push(&mut self, key: &[u8]) -> u32 {
        let need = key.len() + 1;
        let room = self.chunks.last().map_or(0, |c| CHUNK - c.len());
        if room < need {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let i = self.chunks.len() - 1;
        let c = &mut self.chunks[i];
        let at = c.len();
        c.push((key.len() - 1) as u8);
        c.extend_from_slice(key);
        self.live += need;
        (i * CHUNK + at) as u32
    }

    fn get(&self, offset: u32) -> &[u8] {
        let (i, at) = (offset as usize / CHUNK, offset as usize % CHUNK);
        let c = &self.chunks[i];
        let len = c[at] as usize + 1;
        &c[at + 1..at + 1 + len]
    }
}

/// A one-algorithm limiter over string keys, with fixed-size states (see the module docs).
pub(crate) struct CompactKeyed {
    algorithm: AnyAlgorithm,
    kind: Kind,
    width: usize,
    hasher: DefaultHashBuilder,
    table: HashTable<u32>,
    arena: Arena,
    offsets: Vec<u32>,
    words: Vec<u64>,
    max_keys: Option<usize>,
    evictions: u64,
    next_sweep: usize,
    /// Changes whenever an entry number stops meaning the key it meant (a removal).
    pub(crate) generation: u32,
}

impl CompactKeyed {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The entry holding `key`, if any.
    pub(crate) fn find(&self, key: &str) -> Option<u32> {
        let k = key.as_bytes();
        let (arena, offsets) = (&self.arena, &self.offsets);
        self.table
            .find(self.hash(k), |&e| arena.get(offsets[e as usize]) == k)
            .copied()
    }

    fn state_at(&self, e: u32) -> AnyState {
        let w = self.width;
        from_words(self.kind, &self.words[e as usize * w..(e as usize + 1) * w])
    }

    fn set_at(&mut self, e: u32, s: &AnyState) {
        let w = self.width;
        to_words(s, &mut self.words[e as usize * w..(e as usize + 1) * w]);
    }

    fn fresh_at(&self, e: u32) -> Nanos {
        self.algorithm.fresh_at(&self.state_at(e))
    }

    /// Appends a new entry (no sweeping; see `insert`).
    fn push(&mut self, key: &str, s: &AnyState) -> u32 {
        let e = self.offsets.len() as u32;
        let offset = self.arena.push(key.as_bytes());
        self.offsets.push(offset);
        self.words.resize(self.words.len() + self.width, 0);
        self.set_at(e, s);
        let hash = self.hash(key.as_bytes());
        let (arena, offsets, hasher) = (&self.arena, &self.offsets, &self.hasher);
        self.table.insert_unique(hash, e, |&x| {
            hasher.hash_one(arena.get(offsets[x as usize]))
        });
        e
    }

    /// Removes entry `e`; the last entry takes its number.
    fn remove(&mut self, e: u32) {
        let key_hash = self.hash(self.arena.get(self.offsets[e as usize]));
        if let Ok(slot) = self.table.find_entry(key_hash, |&x| x == e) {
            slot.remove();
        }
        let len = self.arena.get(self.offsets[e as usize]).len() + 1;
        self.arena.dead += len;
        self.arena.live -= len;
        let last = (self.offsets.len() - 1) as u32;
        if e != last {
            let moved_hash = self.hash(self.arena.get(self.offsets[last as usize]));
            if let Some(x) = self.table.find_mut(moved_hash, |&x| x == last) {
                *x = e;
            }
            self.offsets[e as usize] = self.offsets[last as usize];
            let w = self.width;
            self.words
                .copy_within(last as usize * w..(last as usize + 1) * w, e as usize * w);
        }
        self.offsets.pop();
        self.words.truncate(self.offsets.len() * self.width);
        self.generation = self.generation.wrapping_add(1);
    }

    /// Removes one entry.
    fn remove_one(&mut self, e: u32) {
        self.remove(e);
        self.compact();
    }

    /// Removes every entry for which `drop` says so; returns how many.
    fn remove_where(&mut self, mut drop: impl FnMut(&Self, u32) -> bool) -> usize {
        let mut removed = 0;
        let mut e = 0;
        while (e as usize) < self.offsets.len() {
            if drop(self, e) {
                self.remove(e);
                removed += 1;
            } else {
                e += 1;
            }
        }
        if removed > 0 {
            self.compact();
        }
        removed
    }

    /// Rewrites the arena without the removed keys once they outweigh the live ones.
    fn compact(&mut self) {
        if self.arena.dead < CHUNK || self.arena.dead < self.arena.live {
            return;
        }
        let mut fresh = Arena::default();
        for o in self.offsets.iter_mut() {
            *o = fresh.push(self.arena.get(*o));
        }
        self.arena = fresh;
        let (arena, offsets, hasher) = (&self.arena, &self.offsets, &self.hasher);
        self.table
            .shrink_to_fit(|&x| hasher.hash_one(arena.get(offsets[x as usize])));
        self.offsets.shrink_to_fit();
        self.words.shrink_to_fit();
    }

    /// Inserts a new key's state after the core's sweeping and eviction rules (src/keyed.rs).
    fn insert(&mut self, key: &str, s: &AnyState, now: Nanos) -> u32 {
        if self.len() >= self.next_sweep {
            self.prune(now);
            self.next_sweep = (self.len() * 2).max(FIRST_SWEEP);
        }
        if let Some(max) = self.max_keys {
            if self.len() >= max && self.prune(now) == 0 {
                self.evict_soonest_fresh(max.div_ceil(8));
            }
        }
        self.push(key, s)
    }

    /// Evicts the `count` keys that will be fresh soonest (strictly sooner first, then ties).
    fn evict_soonest_fresh(&mut self, count: usize) {
        let mut times: Vec<Nanos> = (0..self.len() as u32).map(|e| self.fresh_at(e)).collect();
        if times.is_empty() {
            return;
        }
        let count = count.clamp(1, times.len());
        let (_, &mut threshold, _) = times.select_nth_unstable(count - 1);
        drop(times);
        let mut left = count;
        for strictly in [true, false] {
            self.remove_where(|me, e| {
                let t = me.fresh_at(e);
                let hit = left > 0
                    && if strictly {
                        t < threshold
                    } else {
                        t == threshold
                    };
                if hit {
                    left -= 1;
                }
                hit
            });
        }
        self.evictions += (count - left) as u64;
    }

    fn len(&self) -> usize {
        self.offsets.len()
    }

    fn prune(&mut self, now: Nanos) -> usize {
        self.remove_where(|me, e| me.fresh_at(e) <= now)
    }

    /// Decides a hit for entry `e` in place.
    pub(crate) fn check_entry(
        &mut self,
        e: u32,
        now: Nanos,
        cost: u64,
    ) -> Result<Decision, CheckError> {
        let mut s = self.state_at(e);
        let d = self.algorithm.check_in_place(&mut s, now, cost)?;
        self.set_at(e, &s);
        Ok(d)
    }

    /// Decides a hit for `key`; returns the decision and the key's entry (`None`: still fresh).
    pub(crate) fn check_key(
        &mut self,
        key: &str,
        now: Nanos,
        cost: u64,
    ) -> Result<(Decision, Option<u32>), CheckError> {
        if let Some(e) = self.find(key) {
            return self.check_entry(e, now, cost).map(|d| (d, Some(e)));
        }
        let outcome = self.algorithm.check(None, now, cost)?;
        let e = outcome.state.map(|s| self.insert(key, &s, now));
        Ok((outcome.decision, e))
    }
}

/// The states of a one-limit policy: compact when the algorithm's state has a fixed size.
pub(crate) enum Single {
    Compact(CompactKeyed),
    Keyed(KeyedLimiter<AnyAlgorithm>),
}

impl Single {
    pub(crate) fn new(algorithm: AnyAlgorithm, max_keys: Option<usize>) -> Single {
        let kind = algorithm.kind();
        match width(kind) {
            Some(width) => Single::Compact(CompactKeyed {
                algorithm,
                kind,
                width,
                hasher: DefaultHashBuilder::default(),
                table: HashTable::new(),
                arena: Arena::default(),
                offsets: Vec::new(),
                words: Vec::new(),
                max_keys: max_keys.map(|m| m.max(1)),
                evictions: 0,
                next_sweep: FIRST_SWEEP,
                generation: 0,
            }),
            None => {
                let keyed = KeyedLimiter::new(algorithm);
                Single::Keyed(match max_keys {
                    Some(m) => keyed.with_max_keys(m),
                    None => keyed,
                })
            }
        }
    }

    pub(crate) fn check(
        &mut self,
        key: &str,
        now: Nanos,
        cost: u64,
    ) -> Result<Decision, CheckError> {
        match self {
            Single::Compact(c) => c.check_key(key, now, cost).map(|(d, _)| d),
            Single::Keyed(k) => k.check(key, now, cost),
        }
    }

    pub(crate) fn peek(&self, key: &str, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        match self {
            Single::Compact(c) => {
                let s = c.find(key).map(|e| c.state_at(e));
                c.algorithm.peek(s.as_ref(), now, cost)
            }
            Single::Keyed(k) => k.peek(key, now, cost),
        }
    }

    pub(crate) fn refund(&mut self, key: &str, now: Nanos, cost: u64) {
        match self {
            Single::Compact(c) => {
                if let Some(e) = c.find(key) {
                    match c.algorithm.refund(&c.state_at(e), now, cost) {
                        Some(s) => c.set_at(e, &s),
                        None => {
                            c.remove_one(e);
                        }
                    }
                }
            }
            Single::Keyed(k) => k.refund(key, now, cost),
        }
    }

    pub(crate) fn reset(&mut self, key: &str) {
        match self {
            Single::Compact(c) => {
                if let Some(e) = c.find(key) {
                    c.remove_one(e);
                }
            }
            Single::Keyed(k) => k.reset(key),
        }
    }

    /// The key's state (`None`: fresh).
    pub(crate) fn state(&self, key: &str) -> Option<AnyState> {
        match self {
            Single::Compact(c) => c.find(key).map(|e| c.state_at(e)),
            Single::Keyed(k) => k.state(key).cloned(),
        }
    }

    /// Replaces the key's state (state import; no sweeping or eviction, as in the core).
    pub(crate) fn set_state(&mut self, key: &str, state: Option<AnyState>) {
        match self {
            Single::Compact(c) => match (c.find(key), state) {
                (Some(e), Some(s)) => c.set_at(e, &s),
                (Some(e), None) => {
                    c.remove_one(e);
                }
                (None, Some(s)) => {
                    c.push(key, &s);
                }
                (None, None) => {}
            },
            Single::Keyed(k) => k.set_state(key.into(), state),
        }
    }

    pub(crate) fn prune(&mut self, now: Nanos) -> usize {
        match self {
            Single::Compact(c) => c.prune(now),
            Single::Keyed(k) => k.prune(now),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Single::Compact(c) => c.len(),
            Single::Keyed(k) => k.len(),
        }
    }

    pub(crate) fn evictions(&self) -> u64 {
        match self {
            Single::Compact(c) => c.evictions,
            Single::Keyed(k) => k.evictions(),
        }
    }

    pub(crate) fn keys(&self) -> Vec<String> {
        match self {
            Single::Compact(c) => c
                .offsets
                .iter()
                .map(|&o| String::from_utf8_lossy(c.arena.get(o)).into_owned())
                .collect(),
            Single::Keyed(k) => k.keys().map(|k| String::from(&**k)).collect(),
        }
    }
}
