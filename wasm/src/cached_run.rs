//! `limitBatch`'s hot loop: entries whose handle has a cached record, decided by the concrete
//! algorithm rather than through `AnyAlgorithm`.
//!
//! In the general path most of a one-key batch check's time goes around the decision, not
//! into it: `AnyState` built from the record's words and back, `AnyAlgorithm`'s `match` per
//! check, `Result<Decision, JsValue>` moved through closures that opt-level "s" does not
//! inline (docs/benchmarks.md, "Where a W1 check's time goes"). Here the `match` on the
//! algorithm happens once per run of entries, and each entry is counted by the core's one
//! decision path (`tollgate::decide::count`) for the concrete algorithm, over its state read
//! straight from the record: the store is specialised, the decision is not. Nothing about the
//! decision changes: `AnyAlgorithm`'s decision is exactly its variant's.

use tollgate::algorithms::{FirstHitState, FixedWindowState, GcraState, TokenBucketState};
use tollgate::decide::{self, Held};
use tollgate::{Algorithm, AnyAlgorithm, CheckError, SlidingWindowState};

use crate::batch_out::{BatchOut, Columns};
use crate::key_store::CompactKeyed;
use crate::record_words::Words;
use crate::time::{ms_ceil, nanos_of_valid_ms};

/// One run of a batch: entries `from..n`, entry `i` at `nows[i]` (or `nows[0]`; epoch ms,
/// already checked with `now_in_range`) with `costs[i]` (or `costs[0]`).
pub(crate) struct Run<'a> {
    pub from: usize,
    pub n: usize,
    pub nows: &'a [f64],
    pub costs: &'a [u64],
}

impl CompactKeyed {
    /// Decides entries from `run.from` on while `record(i)` gives a cached record that is
    /// still live (its offset and its key's length byte, see `key_store::holds`), writing
    /// each summary to `out`. `key(i)` is entry `i`'s key handle: consecutive entries with the
    /// same one share a record. Returns the first entry not decided (`run.n` when all were),
    /// or the entry and error of a failed check.
    pub(crate) fn check_cached(
        &mut self,
        run: Run<'_>,
        key: impl Fn(usize) -> u32,
        record: impl Fn(usize) -> Option<(u32, u8)>,
        out: &mut BatchOut,
    ) -> Result<usize, (usize, CheckError)> {
        let words = self.width;
        let chunks = &mut self.chunks;
        let numbers = out.with_numbers;
        macro_rules! each {
            ($a:expr, $S:ty) => {
                if numbers {
                    each::<_, $S, true>($a, chunks, words, run, key, record, out)
                } else {
                    each::<_, $S, false>($a, chunks, words, run, key, record, out)
                }
            };
        }
        match &self.algorithm {
            AnyAlgorithm::Gcra(a) => each!(a, GcraState),
            AnyAlgorithm::TokenBucket(a) => each!(a, TokenBucketState),
            AnyAlgorithm::FixedWindow(a) => each!(a, FixedWindowState),
            AnyAlgorithm::FixedWindowFirstHit(a) => each!(a, FirstHitState),
            AnyAlgorithm::SlidingWindow(a) => each!(a, SlidingWindowState),
            // Not kept in the compact store.
            AnyAlgorithm::SlidingLog(_) | AnyAlgorithm::SlidingBuckets(_) | AnyAlgorithm::Concurrency(_) => Ok(run.from),
        }
    }
}

/// The loop of `check_cached` for one concrete algorithm: cuts the entries into runs of one
/// record (consecutive entries with the same key; a batch given one key for all is one run)
/// and decides each run with `decide_run`, the state read from the record before and written
/// back after. Between two entries of a run nobody else looks at the record, so the decisions
/// are those of one `limit()` per entry.
#[inline(always)]
fn each<A: Algorithm<State = S>, S: Words + Copy, const NUMBERS: bool>(
    a: &A,
    chunks: &mut [alloc::vec::Vec<u8>],
    words: usize,
    run: Run<'_>,
    key: impl Fn(usize) -> u32,
    record: impl Fn(usize) -> Option<(u32, u8)>,
    out: &mut BatchOut,
) -> Result<usize, (usize, CheckError)> {
    let n = run.n;
    let mut i = run.from;
    while i < n {
        // A cached offset, used only while its record is still the key's (not removed).
        let Some((offset, _)) = record(i).filter(|&(o, len)| crate::key_store::holds(chunks, o, len)) else {
            return Ok(i);
        };
        let k = key(i);
        let mut end = i + 1;
        while end < n && key(end) == k {
            end += 1;
        }
        let (w, at) = crate::key_store::words_at(chunks, offset);
        let bytes = &mut chunks[w][at..at + 8 * words];
        let mut state = S::read(bytes);
        let nows = if run.nows.len() == 1 { run.nows } else { &run.nows[i..end] };
        let costs = if run.costs.len() == 1 { run.costs } else { &run.costs[i..end] };
        let (done, changed) = decide_run::<A, S, NUMBERS>(a, &mut state, nows, costs, out.columns(i, end, n));
        if changed {
            state.write(bytes);
        }
        if let Err(e) = done {
            return Err((i + e.0, e.1));
        }
        i = end;
    }
    Ok(n)
}

/// Decides a run of entries of one key whose state is `state`: the hot loop of a batch.
///
/// Not inlined on purpose: as a function of its own its slices are distinct arguments, which
/// tells the compiler that writing a result cannot change a time, a cost or the state, so
/// these stay in registers (inlined into the batch code, every result byte written would make
/// it reload them). Without `NUMBERS` only `allowed` is written and the
/// rest of each decision (e.g. GCRA's division for `remaining`) is never computed. Returns
/// the error of a failed check with its entry in the run, and whether `state` changed.
#[inline(never)]
fn decide_run<A: Algorithm<State = S>, S: Copy, const NUMBERS: bool>(
    a: &A,
    state: &mut S,
    nows: &[f64],
    costs: &[u64],
    out: Columns<'_>,
) -> (Result<(), (usize, CheckError)>, bool) {
    let mut s = *state;
    let mut changed = false;
    let one_now = nows.len() == 1;
    let one_cost = costs.len() == 1;
    let mut result = Ok(());
    for (i, allowed) in out.allowed.iter_mut().enumerate() {
        let now = nanos_of_valid_ms(nows[if one_now { 0 } else { i }]);
        let cost = costs[if one_cost { 0 } else { i }];
        let d = match decide::count(|_| a, &mut Held(&mut s), now, cost, |_, _| {}) {
            Ok(d) => d,
            Err(e) => {
                result = Err((i, e));
                break;
            }
        };
        // A check writes the state only when it admits the hit.
        changed |= d.allowed;
        *allowed = d.allowed as u8;
        if NUMBERS {
            out.remaining[i] = d.remaining as f64;
            out.reset_at[i] = ms_ceil(d.reset_at);
            out.retry_after[i] = ms_ceil(d.retry_after);
        }
    }
    *state = s;
    (result, changed)
}
