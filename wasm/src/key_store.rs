//! The wasm limiter's key store: compact, because wasm memory only ever grows.
//!
//! The core's `KeyedLimiter<AnyAlgorithm>` (a hashbrown map of `Box<str>` to `AnyState`) costs
//! several times the key's bytes in wasm memory (about 172 bytes per key): a 40-byte bucket (8
//! for the boxed key, 32 for the enum state, whose largest fixed variant is 24 bytes) at up to
//! 2x table slack, plus a separate allocation per key string, plus the old table during each
//! doubling, which wasm memory keeps as high-water mark. Here instead:
//!
//! - each key is one record `[len - 1][key bytes][state words]` in an arena of 64 KiB chunks
//!   (no allocation per key, no doubling of the arena), the state being the algorithm's own
//!   words (1 for GCRA, 2 for token bucket and fixed windows, 3 for the sliding window)
//!   rather than the 32-byte enum;
//! - the hash table (hashbrown's `HashTable`) holds only each record's 4-byte arena offset;
//!   lookups compare the whole key, so two keys never share a state (no fingerprints, no
//!   silent collisions). Removed records are reclaimed by rewriting the arena once their bytes
//!   outweigh the live ones.
//!
//! Policies whose states a record cannot hold (several limits, or the sliding log's and
//! sliding buckets' variable-size states) keep each key's core `PolicyState` in a slab, the
//! record's one word being its index (`policy_states.rs`): the same table, arena, sweeping
//! and eviction for every policy, and no second hash map type in the module. Idle-key
//! sweeping and the `maxKeys` eviction rule are the core's (`tollgate::keyed::FreshTable`,
//! whose provided methods this store uses over its records).
//!
//! Offsets also make key handles cheap: a handle caches its key's offset and the store's
//! `generation`, which changes only when the arena is rewritten (offsets move). A removed
//! record stays in the arena until then, marked dead by its length byte (`len - 1` flipped to
//! `!(len - 1)`, which no record of that key can hold), and offsets are never reused before a
//! rewrite; so a cached offset is the key's record exactly while the generation matches and
//! the byte there is the key's length byte (`holds`). A check by handle then needs no hashing,
//! and removing one key (idle-key sweeps remove many) leaves every other handle's cache valid.

use alloc::string::String;
use alloc::vec::Vec;
use core::hash::BuildHasher;
use hashbrown::{DefaultHashBuilder, HashTable};
use tollgate::algorithms::{
    AnyState, FirstHitState, FixedWindowState, GcraState, SlidingWindowState, TokenBucketState,
};
use tollgate::decide::{self, Held, Read};
use tollgate::keyed::{FreshTable, KeyRules};
use tollgate::policy::{Policy, PolicyState};
use tollgate::{Algorithm, AnyAlgorithm, CheckError, Decision, Kind, Nanos};

use crate::policy_states::Slab;
use crate::record_words::Words;

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

pub(crate) fn to_words(s: &AnyState, w: &mut [u64; 3]) {
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

/// The core's count of a hit (`tollgate::decide::count`) for one concrete algorithm, over the
/// state in a record's `words`.
#[inline(always)]
fn check_words<A: Algorithm<State = S>, S: Words>(
    a: &A,
    words: &mut [u8],
    now: Nanos,
    cost: u64,
) -> Result<Decision, CheckError> {
    let mut s = S::read(words);
    let d = decide::count(|_| a, &mut Held(&mut s), now, cost, |_, _| {})?;
    s.write(words);
    Ok(d)
}

fn from_words(kind: Kind, w: &[u64]) -> AnyState {
    match kind {
        Kind::TokenBucket => AnyState::TokenBucket(TokenBucketState { tokens: w[0], anchor: Nanos::new(w[1]) }),
        Kind::FixedWindow => AnyState::FixedWindow(FixedWindowState { start: Nanos::new(w[0]), count: w[1] }),
        Kind::FixedWindowFirstHit => {
            AnyState::FixedWindowFirstHit(FirstHitState { start: Nanos::new(w[0]), count: w[1] })
        }
        Kind::SlidingWindow => {
            AnyState::SlidingWindow(SlidingWindowState { start: Nanos::new(w[0]), current: w[1], previous: w[2] })
        }
        _ => AnyState::Gcra(GcraState { tat: Nanos::new(w[0]) }),
    }
}

/// A limiter's keys and their states (see the module docs): the states themselves for a
/// one-limit policy with a fixed-size state, slab indices for the others.
pub(crate) struct CompactKeyed {
    pub(crate) algorithm: AnyAlgorithm,
    kind: Kind,
    pub(crate) width: usize,
    hasher: DefaultHashBuilder,
    /// The arena offsets of the live records.
    table: HashTable<u32>,
    /// Records `[key length - 1][key bytes][state words, little-endian]`, never straddling
    /// two chunks; an offset is `chunk * CHUNK + position`.
    pub(crate) chunks: Vec<Vec<u8>>,
    live: usize,
    /// Bytes of removed records, reclaimed by `compact` once they outweigh the live ones.
    dead: usize,
    /// The core's sweep and key-cap state.
    rules: KeyRules,
    /// Changes whenever offsets move (a compaction); a removal marks its own record instead.
    pub(crate) generation: u32,
    /// `Some` when the records hold slab indices rather than states.
    pub(crate) slab: Option<Slab>,
}

fn key_at(chunks: &[Vec<u8>], offset: u32) -> &[u8] {
    let (c, at) = (&chunks[offset as usize / CHUNK], offset as usize % CHUNK);
    &c[at + 1..at + 2 + c[at] as usize]
}

/// A record's first byte for `key` while it is live: the key's length - 1 (keys are 1 to 256
/// bytes). `remove` flips it, so no dead record has it.
#[inline(always)]
pub(crate) fn length_byte(key: &[u8]) -> u8 {
    key.len().wrapping_sub(1) as u8
}

/// Whether the record at `offset` (an offset this generation gave out) is live with a key of
/// `length_byte`: what a handle's cached offset is checked with before use.
#[inline(always)]
pub(crate) fn holds(chunks: &[Vec<u8>], offset: u32, length_byte: u8) -> bool {
    chunks.get(offset as usize / CHUNK).and_then(|c| c.get(offset as usize % CHUNK)) == Some(&length_byte)
}

/// Where the state words of the record at `offset` start: (chunk, position).
#[inline(always)]
pub(crate) fn words_at(chunks: &[Vec<u8>], offset: u32) -> (usize, usize) {
    let (c, at) = (offset as usize / CHUNK, offset as usize % CHUNK);
    (c, at + 2 + chunks[c][at] as usize)
}

impl CompactKeyed {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn record_len(&self, offset: u32) -> usize {
        1 + key_at(&self.chunks, offset).len() + 8 * self.width
    }

    /// The record holding `key`, if any.
    pub(crate) fn find(&self, key: &str) -> Option<u32> {
        let k = key.as_bytes();
        let chunks = &self.chunks;
        self.table.find(self.hash(k), |&o| key_at(chunks, o) == k).copied()
    }

    /// Where the state words of the record at `offset` start: (chunk, position).
    fn words_at(&self, offset: u32) -> (usize, usize) {
        words_at(&self.chunks, offset)
    }

    /// Word `i` of the record at `offset`.
    pub(crate) fn word(&self, offset: u32, i: usize) -> u64 {
        let (c, at) = self.words_at(offset);
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.chunks[c][at + 8 * i..at + 8 * i + 8]);
        u64::from_le_bytes(b)
    }

    pub(crate) fn state_at(&self, offset: u32) -> AnyState {
        let (c, at) = self.words_at(offset);
        let bytes = &self.chunks[c][at..at + 8 * self.width];
        let mut w = [0u64; 3];
        for (i, word) in w.iter_mut().take(self.width).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            *word = u64::from_le_bytes(b);
        }
        from_words(self.kind, &w)
    }

    pub(crate) fn set_at(&mut self, offset: u32, s: &AnyState) {
        let mut w = [0u64; 3];
        to_words(s, &mut w);
        self.set_words(offset, &w);
    }

    fn set_words(&mut self, offset: u32, w: &[u64; 3]) {
        let (c, at) = self.words_at(offset);
        let bytes = &mut self.chunks[c][at..at + 8 * self.width];
        for (i, word) in w.iter().take(self.width).enumerate() {
            bytes[8 * i..8 * i + 8].copy_from_slice(&word.to_le_bytes());
        }
    }

    fn fresh_at(&self, offset: u32) -> Nanos {
        match &self.slab {
            Some(slab) => slab.get(self.word(offset, 0)).map_or(Nanos::ZERO, PolicyState::expires_at),
            None => self.algorithm.fresh_at(&self.state_at(offset)),
        }
    }

    /// Appends a record to the arena; returns its offset (not yet in the table).
    fn append(chunks: &mut Vec<Vec<u8>>, key: &[u8], words: usize) -> u32 {
        let need = 1 + key.len() + 8 * words;
        if chunks.last().map_or(0, |c| CHUNK - c.len()) < need {
            chunks.push(Vec::with_capacity(CHUNK));
        }
        let i = chunks.len() - 1;
        let c = &mut chunks[i];
        let at = c.len();
        c.push(length_byte(key));
        c.extend_from_slice(key);
        c.resize(at + need, 0);
        (i * CHUNK + at) as u32
    }

    /// Adds a new record (no sweeping; see `insert_words`).
    pub(crate) fn push_words(&mut self, key: &str, w: &[u64; 3]) -> u32 {
        let offset = CompactKeyed::append(&mut self.chunks, key.as_bytes(), self.width);
        self.live += self.record_len(offset);
        self.set_words(offset, w);
        let hash = self.hash(key.as_bytes());
        let (chunks, hasher) = (&self.chunks, &self.hasher);
        self.table.insert_unique(hash, offset, |&o| hasher.hash_one(key_at(chunks, o)));
        offset
    }

    /// Removes one record: its bytes stay until `compact`, marked dead by a flipped length
    /// byte (see the module docs), so cached offsets of other keys stay valid.
    pub(crate) fn remove(&mut self, offset: u32) {
        if self.slab.is_some() {
            let i = self.word(offset, 0);
            if let Some(slab) = self.slab.as_mut() {
                slab.free(i);
            }
        }
        let hash = self.hash(key_at(&self.chunks, offset));
        if let Ok(slot) = self.table.find_entry(hash, |&o| o == offset) {
            slot.remove();
            let len = self.record_len(offset);
            self.live -= len;
            self.dead += len;
            let (c, at) = (offset as usize / CHUNK, offset as usize % CHUNK);
            self.chunks[c][at] = !self.chunks[c][at];
        }
    }

    fn remove_one(&mut self, offset: u32) {
        self.remove(offset);
        self.compact();
    }

    /// Rewrites the arena without the removed records once they outweigh the live ones.
    pub(crate) fn compact(&mut self) {
        if self.dead < CHUNK || self.dead < self.live {
            return;
        }
        let old = core::mem::take(&mut self.chunks);
        let n = 1 + 8 * self.width;
        for o in self.table.iter_mut() {
            let key = key_at(&old, *o);
            let fresh = CompactKeyed::append(&mut self.chunks, key, self.width);
            let (c, at) = (*o as usize / CHUNK, *o as usize % CHUNK);
            let (fc, fat) = (fresh as usize / CHUNK, fresh as usize % CHUNK);
            let len = n + key.len();
            self.chunks[fc][fat..fat + len].copy_from_slice(&old[c][at..at + len]);
            *o = fresh;
        }
        self.dead = 0;
        self.generation = self.generation.wrapping_add(1);
        let (chunks, hasher) = (&self.chunks, &self.hasher);
        self.table.shrink_to_fit(|&o| hasher.hash_one(key_at(chunks, o)));
    }

    /// Inserts a new key's state after the core's sweeping and eviction rules (src/keyed.rs).
    fn insert(&mut self, key: &str, s: &AnyState, now: Nanos) -> u32 {
        let mut w = [0u64; 3];
        to_words(s, &mut w);
        self.insert_words(key, &w, now)
    }

    pub(crate) fn insert_words(&mut self, key: &str, w: &[u64; 3], now: Nanos) -> u32 {
        self.make_room(now);
        self.push_words(key, w)
    }

    /// Decides a hit for the record at `offset` in place, through the core's `decide::count`.
    /// GCRA (the default algorithm) is counted over its own state read from the record's word
    /// (`record_words.rs`) rather than over an `AnyState` built and taken apart around
    /// `AnyAlgorithm` (the same decision: that is the variant's); the others go the general
    /// way, which costs no code per algorithm twice.
    pub(crate) fn check_entry(&mut self, offset: u32, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        let (c, at) = words_at(&self.chunks, offset);
        let words = &mut self.chunks[c][at..at + 8 * self.width];
        if let AnyAlgorithm::Gcra(a) = &self.algorithm {
            return check_words::<_, GcraState>(a, words, now, cost);
        }
        let mut s = self.state_at(offset);
        let d = decide::count(|_| &self.algorithm, &mut Held(&mut s), now, cost, |_, _| {})?;
        self.set_at(offset, &s);
        Ok(d)
    }

    /// `check_entry` with GCRA's path inline, for the per-request hot path
    /// (`Limiter::decide_record`): its decision then stays in registers on its way to the
    /// output buffer rather than coming back as a `Result` in memory. The other algorithms
    /// call `check_entry`.
    #[inline(always)]
    pub(crate) fn check_entry_inline(&mut self, offset: u32, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        if let AnyAlgorithm::Gcra(a) = &self.algorithm {
            let (c, at) = words_at(&self.chunks, offset);
            return check_words::<_, GcraState>(a, &mut self.chunks[c][at..at + 8], now, cost);
        }
        self.check_entry(offset, now, cost)
    }

    /// Decides a hit for `key`; returns the decision and the key's record (`None`: fresh).
    pub(crate) fn check_key(
        &mut self,
        key: &str,
        now: Nanos,
        cost: u64,
    ) -> Result<(Decision, Option<u32>), CheckError> {
        if let Some(o) = self.find(key) {
            return self.check_entry(o, now, cost).map(|d| (d, Some(o)));
        }
        let mut slot = None;
        let d = decide::count(|_| &self.algorithm, &mut slot, now, cost, |_, _| {})?;
        let o = slot.map(|s| self.insert(key, &s, now));
        Ok((d, o))
    }
}

impl CompactKeyed {
    /// The store of `policy`'s keys, holding at most `max_keys` keys (`None`: no cap): states
    /// in the records for one limit with a fixed-size state, in the slab for the others.
    pub(crate) fn for_policy(policy: &Policy, max_keys: Option<usize>) -> CompactKeyed {
        // A policy has at least one limit (the core refuses an empty one).
        let algorithm = *policy.limits()[0].algorithm();
        let kind = algorithm.kind();
        // A penalty's block is part of the key's state: such keys keep whole states in the slab.
        let plain = policy.limits().len() == 1 && policy.block_duration() == Nanos::ZERO;
        let width = if plain { width(kind) } else { None };
        CompactKeyed {
            algorithm,
            kind,
            width: width.unwrap_or(1),
            hasher: DefaultHashBuilder::default(),
            table: HashTable::new(),
            chunks: Vec::new(),
            live: 0,
            dead: 0,
            rules: KeyRules::new(max_keys),
            generation: 0,
            slab: width.is_none().then(Slab::default),
        }
    }

    /// This store, when its records hold the states themselves (the fast paths).
    pub(crate) fn words_mut(&mut self) -> Option<&mut CompactKeyed> {
        if self.slab.is_none() {
            Some(self)
        } else {
            None
        }
    }

    /// Whether the records hold the states themselves.
    pub(crate) fn holds_words(&self) -> bool {
        self.slab.is_none()
    }

    pub(crate) fn check(&mut self, key: &str, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        self.check_key(key, now, cost).map(|(d, _)| d)
    }

    pub(crate) fn peek(&self, key: &str, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        let s = self.find(key).map(|e| self.state_at(e));
        decide::peek(|_| &self.algorithm, &Read(s.as_ref()), now, cost, |_, _| {})
    }

    pub(crate) fn reset(&mut self, key: &str) {
        if let Some(e) = self.find(key) {
            self.remove_one(e);
        }
    }

    pub(crate) fn evictions(&self) -> u64 {
        self.rules.evictions()
    }

    /// Every key, in table order. Records hold the bytes of a `&str`, so they are UTF-8.
    pub(crate) fn keys(&self) -> Vec<String> {
        self.table
            .iter()
            .map(|&o| core::str::from_utf8(key_at(&self.chunks, o)).map(String::from).unwrap_or_default())
            .collect()
    }
}

/// The records as the core's table of keys with a fresh time, for its sweep and eviction rules.
impl FreshTable for CompactKeyed {
    fn len(&self) -> usize {
        self.table.len()
    }

    fn fresh_times(&self) -> Vec<Nanos> {
        self.table.iter().map(|&o| self.fresh_at(o)).collect()
    }

    /// Marks the records dead, then rewrites the arena if they now outweigh the live ones.
    fn remove_where(&mut self, mut drop: impl FnMut(Nanos) -> bool) -> usize {
        let gone: Vec<u32> = self.table.iter().copied().filter(|&o| drop(self.fresh_at(o))).collect();
        for &o in &gone {
            self.remove(o);
        }
        if !gone.is_empty() {
            self.compact();
        }
        gone.len()
    }

    fn key_rules(&mut self) -> &mut KeyRules {
        &mut self.rules
    }
}
