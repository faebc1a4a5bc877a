//! What the batch calls keep between calls (batch.rs): interned keys with their cached
//! records (`Handles`), and the buffers a batch's summaries are written to (`BatchOut`), read
//! by the JS layer through views.

use alloc::boxed::Box;
use alloc::vec::Vec;
use tollgate::Decision;

use crate::key_store::length_byte;
use crate::time::ms_ceil;

/// No entry cached for a handle.
const NO_ENTRY: u32 = u32::MAX;

/// Interned keys, addressed by a small number. A released number is never given out again, so
/// a stale handle throws instead of reaching another key (a released slot keeps 20 bytes).
/// Each handle caches its key's entry in the compact store and the store's generation then
/// (see `key_store.rs`): while they match and the entry is live, a check by handle needs no
/// hashing.
#[derive(Default)]
pub(crate) struct Handles {
    keys: Vec<Box<str>>,
    /// Per handle: its cached record's offset (`NO_ENTRY`: none, or the handle is released),
    /// the store's generation then, and its key's length byte, side by side, so that
    /// `limitHandle` finds all it checks in one place without reading the key.
    entries: Vec<(u32, u32, u8)>,
}

impl Handles {
    pub(crate) fn intern(&mut self, key: &str) -> u32 {
        self.keys.push(key.into());
        self.entries.push((NO_ENTRY, 0, length_byte(key.as_bytes())));
        (self.keys.len() - 1) as u32
    }

    /// Handle `id`'s cached record if it was cached in this `generation` of the store: its
    /// offset and its key's length byte, which the caller checks with `key_store::holds`
    /// against the store's chunks (the record may have been removed since).
    #[inline(always)]
    pub(crate) fn cached(&self, id: u32, generation: u32) -> Option<(u32, u8)> {
        let (offset, g, length_byte) = self.entries[id as usize];
        (offset != NO_ENTRY && g == generation).then_some((offset, length_byte))
    }

    /// Handle `id`'s cached record as `Limiter::decide_record` takes it (offset, the store's
    /// generation then, its key's length byte), if the handle is live and has one (`release`
    /// drops it).
    #[inline(always)]
    pub(crate) fn record(&self, id: u32) -> Option<(u32, u32, u8)> {
        let &entry = self.entries.get(id as usize)?;
        (entry.0 != NO_ENTRY).then_some(entry)
    }

    /// Caches `offset` (`None`: the key is fresh, nothing to cache) for handle `id`.
    pub(crate) fn cache(&mut self, id: u32, offset: Option<u32>, generation: u32) {
        let e = &mut self.entries[id as usize];
        (e.0, e.1) = (offset.unwrap_or(NO_ENTRY), generation);
    }

    /// The key of a live handle (a released one is the empty string, never a valid key).
    pub(crate) fn get(&self, id: u32) -> Option<&str> {
        self.keys.get(id as usize).map(|k| &**k).filter(|k| !k.is_empty())
    }

    pub(crate) fn release(&mut self, id: u32) {
        if self.get(id).is_some() {
            self.keys[id as usize] = Box::default();
            self.entries[id as usize].0 = NO_ENTRY;
        }
    }
}

/// Where a batch's summaries go: `allowed` as bytes, then (when the caller asked for them)
/// `remaining`, `resetAt`, `retryAfter` as three runs of `n` numbers (epoch ms and ms, as in a
/// decision).
///
/// A caller that reads only `allowed` says so (`numbers: false`): the numbers are then neither
/// converted nor written, and in the cached loop (`cached_run.rs`) the division behind a GCRA
/// `remaining` goes with them, since the algorithm's `check` is inlined there and its unused
/// results are dead code: a one-key batch check takes about half the time
/// (docs/benchmarks.md).
#[derive(Default)]
pub(crate) struct BatchOut {
    pub(crate) allowed: Vec<u8>,
    pub(crate) numbers: Vec<f64>,
    /// Whether this batch writes `numbers`.
    pub(crate) with_numbers: bool,
}

impl BatchOut {
    /// Room for `n` summaries.
    pub(crate) fn reset(&mut self, n: usize, with_numbers: bool) {
        self.allowed.clear();
        self.allowed.resize(n, 0);
        self.with_numbers = with_numbers;
        if with_numbers {
            self.numbers.clear();
            self.numbers.resize(3 * n, 0.0);
        }
    }

    /// Entry `i`'s summary, of a batch of `n`.
    #[inline(always)]
    pub(crate) fn write(&mut self, i: usize, n: usize, d: &Decision) {
        self.allowed[i] = d.allowed as u8;
        if self.with_numbers {
            self.write_numbers(i, n, d);
        }
    }

    /// Entry `i`'s numbers, of a batch of `n` (only when `with_numbers`).
    #[inline(always)]
    pub(crate) fn write_numbers(&mut self, i: usize, n: usize, d: &Decision) {
        self.numbers[i] = d.remaining as f64;
        self.numbers[n + i] = ms_ceil(d.reset_at);
        self.numbers[2 * n + i] = ms_ceil(d.retry_after);
    }

    /// The columns of entries `from..to` of a batch of `n` (the numbers empty without them).
    pub(crate) fn columns(&mut self, from: usize, to: usize, n: usize) -> Columns<'_> {
        let allowed = &mut self.allowed[from..to];
        if !self.with_numbers {
            return Columns { allowed, remaining: &mut [], reset_at: &mut [], retry_after: &mut [] };
        }
        let (remaining, rest) = self.numbers.split_at_mut(n);
        let (reset_at, retry_after) = rest.split_at_mut(n);
        Columns {
            allowed,
            remaining: &mut remaining[from..to],
            reset_at: &mut reset_at[from..to],
            retry_after: &mut retry_after[from..to],
        }
    }

    /// How many of the first `n` entries were admitted.
    pub(crate) fn admitted(&self, n: usize) -> u32 {
        self.allowed[..n].iter().map(|&a| a as u32).sum()
    }
}

/// A batch's output columns for a run of entries: `allowed`, and with numbers `remaining`,
/// `resetAt` and `retryAfter` (empty without).
pub(crate) struct Columns<'a> {
    pub allowed: &'a mut [u8],
    pub remaining: &'a mut [f64],
    pub reset_at: &'a mut [f64],
    pub retry_after: &'a mut [f64],
}
