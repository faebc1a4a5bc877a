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
//! The store keeps; it does not decide: the limiter decides over a record's words
//! (`limiter.rs`, through the core's `decide::count`), over a slab state or over the store as
//! the core's `Store` (`policy_states.rs`).
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
use tollgate::algorithms::AnyState;
use tollgate::keyed::{FreshTable, KeyRules};
use tollgate::policy::{Policy, PolicyState};
use tollgate::{Algorithm, AnyAlgorithm, Kind, Nanos};

use crate::slab::Slab;
use crate::record_words::{read_any, width, word, write_any};

/// Arena chunk size: keys never straddle two chunks.
const CHUNK: usize = 1 << 16;

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

    /// Whether the records hold the states themselves (the fast paths).
    #[inline(always)]
    pub(crate) fn holds_words(&self) -> bool {
        self.slab.is_none()
    }

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

    /// The state words of the record at `offset`.
    fn words(&self, offset: u32) -> &[u8] {
        let (c, at) = words_at(&self.chunks, offset);
        &self.chunks[c][at..at + 8 * self.width]
    }

    /// The state words of the record at `offset`, beside the algorithm that decides them.
    #[inline(always)]
    pub(crate) fn record_mut(&mut self, offset: u32) -> (&AnyAlgorithm, &mut [u8]) {
        let (c, at) = words_at(&self.chunks, offset);
        (&self.algorithm, &mut self.chunks[c][at..at + 8 * self.width])
    }

    /// The slab index the record at `offset` holds (records of slab states).
    pub(crate) fn index_at(&self, offset: u32) -> u64 {
        word(self.words(offset), 0)
    }

    /// The state the record at `offset` holds (records of states).
    pub(crate) fn state_at(&self, offset: u32) -> AnyState {
        read_any(self.kind, self.words(offset))
    }

    pub(crate) fn set_at(&mut self, offset: u32, s: &AnyState) {
        write_any(s, self.record_mut(offset).1);
    }

    fn fresh_at(&self, offset: u32) -> Nanos {
        match &self.slab {
            Some(slab) => slab.get(self.index_at(offset)).map_or(Nanos::ZERO, PolicyState::expires_at),
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

    /// Adds a record for a new key, its words zero for the caller to write; with `now`, after
    /// the core's sweeping and eviction rules (src/keyed.rs), without (a state import) as is.
    pub(crate) fn insert(&mut self, key: &str, now: Option<Nanos>) -> u32 {
        if let Some(now) = now {
            self.make_room(now);
        }
        let offset = CompactKeyed::append(&mut self.chunks, key.as_bytes(), self.width);
        self.live += self.record_len(offset);
        let hash = self.hash(key.as_bytes());
        let (chunks, hasher) = (&self.chunks, &self.hasher);
        self.table.insert_unique(hash, offset, |&o| hasher.hash_one(key_at(chunks, o)));
        offset
    }

    /// Removes one record: its bytes stay until `compact`, marked dead by a flipped length
    /// byte (see the module docs), so cached offsets of other keys stay valid.
    pub(crate) fn remove(&mut self, offset: u32) {
        if self.slab.is_some() {
            let i = self.index_at(offset);
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

    pub(crate) fn reset(&mut self, key: &str) {
        if let Some(e) = self.find(key) {
            self.remove(e);
            self.compact();
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
