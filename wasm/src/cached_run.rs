//! `limitBatch`'s hot loop: entries whose handle has a cached record, decided by the concrete
//! algorithm rather than through `AnyAlgorithm`.
//!
//! Profiling W1 (one key, limitBatch over handles) showed most of a check's ~100 ns in the
//! general path: `AnyState` built from the record's words and back, `AnyAlgorithm`'s `match`
//! per check, `Result<Decision, JsValue>` moved through closures that opt-level "s" did not
//! inline. Here the `match` on the algorithm happens once per run of entries, and each entry
//! calls the concrete algorithm's own `Algorithm::check` (the core's, the only implementation
//! of it) on its state read straight from the record. Nothing about the decision changes:
//! `check_in_place` of `AnyAlgorithm` is exactly `check` of the variant plus the state write
//! on admission, which is what this does.

use tollgate::algorithms::{FirstHitState, FixedWindowState, GcraState, TokenBucketState};
use tollgate::{Algorithm, AnyAlgorithm, CheckError, Nanos, SlidingWindowState};

use crate::batch::BatchOut;
use crate::key_store::CompactKeyed;

/// A fixed-size state as the little-endian words of its record (the layout of `to_words`).
pub(crate) trait Words: Sized {
    fn read(w: &[u8]) -> Self;
    fn write(&self, w: &mut [u8]);
}

#[inline(always)]
fn word(w: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&w[8 * i..8 * i + 8]);
    u64::from_le_bytes(b)
}

#[inline(always)]
fn put(w: &mut [u8], i: usize, v: u64) {
    w[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
}

impl Words for GcraState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        GcraState { tat: Nanos::new(word(w, 0)) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.tat.as_nanos());
    }
}

impl Words for TokenBucketState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        TokenBucketState { tokens: word(w, 0), anchor: Nanos::new(word(w, 1)) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.tokens);
        put(w, 1, self.anchor.as_nanos());
    }
}

impl Words for FixedWindowState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        FixedWindowState { start: Nanos::new(word(w, 0)), count: word(w, 1) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.start.as_nanos());
        put(w, 1, self.count);
    }
}

impl Words for FirstHitState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        FirstHitState { start: Nanos::new(word(w, 0)), count: word(w, 1) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.start.as_nanos());
        put(w, 1, self.count);
    }
}

impl Words for SlidingWindowState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        SlidingWindowState { start: Nanos::new(word(w, 0)), current: word(w, 1), previous: word(w, 2) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.start.as_nanos());
        put(w, 1, self.current);
        put(w, 2, self.previous);
    }
}

/// One run of a batch: entries `from..n`, entry `i` at `nows[i]` (or `nows[0]`) with
/// `costs[i]` (or `costs[0]`).
pub(crate) struct Run<'a> {
    pub from: usize,
    pub n: usize,
    pub nows: &'a [Nanos],
    pub costs: &'a [u64],
}

impl CompactKeyed {
    /// Decides entries from `run.from` on while `record(i)` gives a cached record, writing
    /// each summary to `out` (a `BatchOut`, not a callback, which opt-level 3 left
    /// un-inlined). Returns the first entry not decided (`run.n` when all were), or the entry
    /// and error of a failed check.
    pub(crate) fn check_cached(
        &mut self,
        run: Run<'_>,
        record: impl Fn(usize) -> Option<u32>,
        out: &mut BatchOut,
    ) -> Result<usize, (usize, CheckError)> {
        let words = self.width;
        let chunks = &mut self.chunks;
        match &self.algorithm {
            AnyAlgorithm::Gcra(a) => each::<_, GcraState>(a, chunks, words, run, record, out),
            AnyAlgorithm::TokenBucket(a) => each::<_, TokenBucketState>(a, chunks, words, run, record, out),
            AnyAlgorithm::FixedWindow(a) => each::<_, FixedWindowState>(a, chunks, words, run, record, out),
            AnyAlgorithm::FixedWindowFirstHit(a) => each::<_, FirstHitState>(a, chunks, words, run, record, out),
            AnyAlgorithm::SlidingWindow(a) => each::<_, SlidingWindowState>(a, chunks, words, run, record, out),
            // Not kept in the compact store.
            AnyAlgorithm::SlidingLog(_) | AnyAlgorithm::SlidingBuckets(_) => Ok(run.from),
        }
    }
}

/// The loop of `check_cached` for one concrete algorithm.
#[inline(always)]
fn each<A: Algorithm<State = S>, S: Words>(
    a: &A,
    chunks: &mut [alloc::vec::Vec<u8>],
    words: usize,
    run: Run<'_>,
    record: impl Fn(usize) -> Option<u32>,
    out: &mut BatchOut,
) -> Result<usize, (usize, CheckError)> {
    let one_now = run.nows.len() == 1;
    let one_cost = run.costs.len() == 1;
    for i in run.from..run.n {
        let Some(offset) = record(i) else {
            return Ok(i);
        };
        let now = run.nows[if one_now { 0 } else { i }];
        let cost = run.costs[if one_cost { 0 } else { i }];
        let (w, at) = crate::key_store::words_at(chunks, offset);
        let bytes = &mut chunks[w][at..at + 8 * words];
        let state = S::read(bytes);
        let outcome = a.check(Some(&state), now, cost).map_err(|e| (i, e))?;
        if let Some(s) = outcome.state {
            s.write(bytes);
        }
        out.write(i, run.n, &outcome.decision);
    }
    Ok(run.n)
}
