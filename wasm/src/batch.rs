//! Key handles and batch calls: the hot paths without a string crossing the boundary per call.
//!
//! Profiling `limit(key)` showed about half of each call spent marshalling the key string into
//! wasm memory (allocate, copy, free) and building the decision object. A *handle* interns a key
//! once (`intern`) and later calls pass only numbers (`limitHandle`). A *batch* decides many
//! hits in one call (`limitBatch`; `limitBatchKeys` with every key string UTF-8 encoded by the
//! JS layer into one buffer): the inputs arrive as typed arrays and the
//! summaries are written to buffers inside wasm memory, read by the JS layer through views.
//!
//! A batch is validated entirely before any hit is counted, so bad input throws and changes
//! nothing; its decisions are exactly those of `limit()` called once per entry, in order.

use alloc::boxed::Box;
use alloc::vec::Vec;
use tollgate::limiter::{validate_key, validate_keys};
use tollgate::{Decision, Nanos};
use wasm_bindgen::prelude::*;

use crate::cached_run::Run;
use crate::errors::{at_index, range_error};
use crate::key_store::{holds, length_byte};
use crate::limiter::{key_error, Decided, Limiter};
use crate::time::{cost_from, ms_ceil, nanos_of_valid_ms, now_from_ms, now_in_range};

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
    fn intern(&mut self, key: &str) -> u32 {
        self.keys.push(key.into());
        self.entries.push((NO_ENTRY, 0, length_byte(key.as_bytes())));
        (self.keys.len() - 1) as u32
    }

    /// Handle `id`'s cached record if it was cached in this `generation` of the store: its
    /// offset and its key's length byte, which the caller checks with `key_store::holds`
    /// against the store's chunks (the record may have been removed since).
    #[inline(always)]
    fn cached(&self, id: u32, generation: u32) -> Option<(u32, u8)> {
        let (offset, g, length_byte) = self.entries[id as usize];
        (offset != NO_ENTRY && g == generation).then_some((offset, length_byte))
    }

    /// Handle `id`'s cached record as `Limiter::decide_record` takes it (offset, the store's
    /// generation then, its key's length byte), if the handle is live and has one (`release`
    /// drops it).
    #[inline(always)]
    fn record(&self, id: u32) -> Option<(u32, u32, u8)> {
        let &entry = self.entries.get(id as usize)?;
        (entry.0 != NO_ENTRY).then_some(entry)
    }

    /// Caches `offset` (`None`: the key is fresh, nothing to cache) for handle `id`.
    fn cache(&mut self, id: u32, offset: Option<u32>, generation: u32) {
        let e = &mut self.entries[id as usize];
        (e.0, e.1) = (offset.unwrap_or(NO_ENTRY), generation);
    }

    /// The key of a live handle (a released one is the empty string, never a valid key).
    fn get(&self, id: u32) -> Option<&str> {
        self.keys.get(id as usize).map(|k| &**k).filter(|k| !k.is_empty())
    }

    fn release(&mut self, id: u32) {
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
    allowed: Vec<u8>,
    numbers: Vec<f64>,
    /// Whether this batch writes `numbers`.
    pub(crate) with_numbers: bool,
}

impl BatchOut {
    /// Room for `n` summaries.
    fn reset(&mut self, n: usize, with_numbers: bool) {
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
    pub(crate) fn columns(&mut self, from: usize, to: usize, n: usize) -> crate::cached_run::Columns<'_> {
        let allowed = &mut self.allowed[from..to];
        if !self.with_numbers {
            return crate::cached_run::Columns { allowed, remaining: &mut [], reset_at: &mut [], retry_after: &mut [] };
        }
        let (remaining, rest) = self.numbers.split_at_mut(n);
        let (reset_at, retry_after) = rest.split_at_mut(n);
        crate::cached_run::Columns {
            allowed,
            remaining: &mut remaining[from..to],
            reset_at: &mut reset_at[from..to],
            retry_after: &mut retry_after[from..to],
        }
    }

    /// How many of the first `n` entries were admitted.
    fn admitted(&self, n: usize) -> u32 {
        self.allowed[..n].iter().map(|&a| a as u32).sum()
    }
}

/// The first `now` of `nows` that is not in range, as the error `now_from_ms` gives. Batches
/// check every time with this first and convert each one where it is decided: one pass over
/// the times and no second array to convert them into, a visible share of a one-key check.
fn check_nows(nows: &[f64]) -> Result<(), JsValue> {
    match nows.iter().find(|&&ms| !now_in_range(ms)) {
        Some(&ms) => now_from_ms(ms).map(|_| ()),
        None => Ok(()),
    }
}

fn unknown_handle(id: u32) -> JsValue {
    at_index("key handle ", id as f64, " is not a live key of this limiter")
}

impl Limiter {
    /// Every entry's key count, time and cost, validated before anything is decided: `keys`
    /// (how many keys were given), `nows` and `costs` each hold one value for all `n` entries
    /// or one per entry; the times stay epoch ms (each is converted where it is decided), the
    /// costs are returned as units.
    fn batch_inputs(&self, n: usize, keys: usize, nows: &[f64], costs: &[f64]) -> Result<Vec<u64>, JsValue> {
        if keys != 1 && keys != n {
            return Err(range_error("keys must be one key or hold one key per entry"));
        }
        if nows.len() != 1 && nows.len() != n {
            return Err(range_error("now must be one number or hold one time per entry"));
        }
        if costs.len() != 1 && costs.len() != n {
            return Err(range_error("costs must be one number or hold one cost per entry"));
        }
        check_nows(nows)?;
        let mut cs = Vec::with_capacity(costs.len());
        for &c in costs {
            let c = cost_from(c)?;
            self.validate_cost(c)?;
            cs.push(c);
        }
        Ok(cs)
    }

    /// Decides the `n` validated entries in order and writes their summaries: `step(self, i,
    /// out)` decides entry `i` (or a run of entries from it), writes to `out` and answers the
    /// next entry to decide.
    fn run_batch(
        &mut self,
        n: usize,
        with_numbers: bool,
        mut step: impl FnMut(&mut Self, usize, &mut BatchOut) -> Result<usize, JsValue>,
    ) -> Result<u32, JsValue> {
        let mut out = core::mem::take(&mut self.batch);
        out.reset(n, with_numbers);
        let mut result = Ok(());
        let mut i = 0;
        while i < n {
            match step(self, i, &mut out) {
                Ok(next) => i = next,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let admitted = out.admitted(n);
        self.batch = out;
        result.map(|()| admitted)
    }

    /// `run_batch` over handles (`ids` one per entry, or one for all `n`). When the records
    /// hold the states, runs of entries whose handle has a valid cached record go through
    /// `check_cached` (the concrete algorithm, no `AnyAlgorithm` per check, see
    /// `cached_run.rs`); any other entry goes through `decide_handle`, which finds or inserts
    /// its record and caches it for the next entries.
    fn run_handles(
        &mut self,
        handles: &mut Handles,
        ids: &[u32],
        n: usize,
        nows: &[f64],
        costs: &[u64],
        with_numbers: bool,
    ) -> Result<u32, JsValue> {
        let id_at = |i: usize| ids[if ids.len() == 1 { 0 } else { i }];
        self.run_batch(n, with_numbers, |me, i, out| {
            let c = &mut me.store;
            if c.holds_words() {
                let generation = c.generation;
                let cached = |j: usize| handles.cached(id_at(j), generation);
                match c.check_cached(Run { from: i, n, nows, costs }, id_at, cached, out) {
                    Ok(next) if next > i => return Ok(next),
                    Ok(_) => {}
                    Err((_, e)) => return Err(me.error(e.into(), true)),
                }
            }
            let (now, cost) = entry(nows, costs, i);
            out.write(i, n, &me.decide_handle(handles, id_at(i), now, cost)?.summary());
            Ok(i + 1)
        })
    }

    /// A handle's decision, inputs already validated: by its cached record while that record
    /// is still the key's (same generation, not removed: `key_store::holds`), which is cached
    /// again after.
    fn decide_handle(&mut self, handles: &mut Handles, id: u32, now: Nanos, cost: u64) -> Result<Decided, JsValue> {
        let Some(key) = handles.get(id) else {
            return Err(unknown_handle(id));
        };
        let c = &self.store;
        let at = handles.cached(id, c.generation).filter(|&(o, len)| holds(&c.chunks, o, len));
        let (d, at) = self.decide(&[key], at.map(|(o, _)| o), now, cost, false)?;
        handles.cache(id, at, self.store.generation);
        Ok(d)
    }

    /// `limitHandle` where `decide_record` decided nothing (the first hit of a handle, a
    /// record gone, an error): out of line, so that the export itself stays the short path
    /// the JIT calls on every request.
    #[cold]
    #[inline(never)]
    fn limit_handle_slow(&mut self, id: u32, now: f64, cost: f64) -> u32 {
        let mut handles = core::mem::take(&mut self.handles);
        let r = self.limit_by_handle(&mut handles, id, now, cost);
        self.handles = handles;
        self.status(r)
    }

    fn limit_by_handle(&mut self, handles: &mut Handles, id: u32, now: f64, cost: f64) -> Result<bool, JsValue> {
        if handles.get(id).is_none() {
            return Err(unknown_handle(id));
        }
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        self.validate_cost(cost)?;
        let d = self.decide_handle(handles, id, now, cost)?;
        Ok(self.write(d))
    }
}

/// Entry `i`'s time (checked with `check_nows`) and cost, of one for all or one per entry.
#[inline(always)]
fn entry(nows: &[f64], costs: &[u64], i: usize) -> (Nanos, u64) {
    let now = nanos_of_valid_ms(if nows.len() == 1 { nows[0] } else { nows[i] });
    (now, if costs.len() == 1 { costs[0] } else { costs[i] })
}

#[wasm_bindgen]
impl Limiter {
    /// Interns `key` and returns its handle (a small number) for `limitHandle`/`limitBatch`.
    pub fn intern(&mut self, key: &str) -> Result<u32, JsValue> {
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        Ok(self.handles.intern(key))
    }

    /// Forgets a handle (not the key's state); using it afterwards throws.
    pub fn release(&mut self, id: u32) {
        self.handles.release(id);
    }

    /// `limit` for an interned key: no string crosses the boundary. Answers 0, 1 or `FAILED`
    /// as `limitKey` does.
    #[wasm_bindgen(js_name = limitHandle)]
    pub fn limit_handle(&mut self, id: u32, now: f64, cost: f64) -> u32 {
        // A live handle whose key's record is cached (every call after its first): decided
        // there; anything else (and every error) by the general path below.
        if let Some((offset, generation, length_byte)) = self.handles.record(id) {
            if let Some(allowed) = self.decide_record(offset, generation, length_byte, now, cost) {
                return allowed as u32;
            }
        }
        self.limit_handle_slow(id, now, cost)
    }

    /// `peek` for an interned key.
    #[wasm_bindgen(js_name = peekHandle)]
    pub fn peek_handle(&mut self, id: u32, now: f64, cost: f64) -> Result<bool, JsValue> {
        let handles = core::mem::take(&mut self.handles);
        let r = match handles.get(id) {
            Some(key) => self.peek(key, now, cost),
            None => Err(unknown_handle(id)),
        };
        self.handles = handles;
        r
    }

    /// `n` `limit`s by handle, in order; `ids`, `nows` and `costs` each hold one value for
    /// all entries or one per entry. Returns how many were admitted; the summaries are at
    /// `batchAllowedPtr` and (with `withNumbers`) `batchNumbersPtr`. Throws before counting
    /// anything when any input is bad.
    #[wasm_bindgen(js_name = limitBatch)]
    pub fn limit_batch(
        &mut self,
        ids: &[u32],
        n: u32,
        nows: &[f64],
        costs: &[f64],
        with_numbers: bool,
    ) -> Result<u32, JsValue> {
        let n = n as usize;
        let cs = self.batch_inputs(n, ids.len(), nows, costs)?;
        // (An id repeated from the previous entry, a burst of one key, was checked there.)
        let mut last = None;
        for &id in ids {
            if last != Some(id) {
                if self.handles.get(id).is_none() {
                    return Err(unknown_handle(id));
                }
                last = Some(id);
            }
        }
        let mut handles = core::mem::take(&mut self.handles);
        let r = self.run_handles(&mut handles, ids, n, nows, &cs, with_numbers);
        self.handles = handles;
        r
    }

    /// `limitBatch` with the keys as strings, all UTF-8 encoded by the JS layer into one
    /// buffer: key `i` is `bytes[ends[i - 1]..ends[i]]` (one copy for the whole batch, rather
    /// than one marshalled string per key); one key (`ends.len() == 1`) is every entry's.
    #[wasm_bindgen(js_name = limitBatchKeys)]
    pub fn limit_batch_keys(
        &mut self,
        bytes: &[u8],
        ends: &[u32],
        n: u32,
        nows: &[f64],
        costs: &[f64],
        with_numbers: bool,
    ) -> Result<u32, JsValue> {
        let n = n as usize;
        let cs = self.batch_inputs(n, ends.len(), nows, costs)?;
        let mut refs = Vec::with_capacity(ends.len());
        let mut start = 0usize;
        for (i, &end) in ends.iter().enumerate() {
            let end = end as usize;
            let key = bytes
                .get(start..end)
                .and_then(|b| core::str::from_utf8(b).ok())
                .ok_or_else(|| at_index("keys[", i as f64, "] is not a UTF-8 string"))?;
            validate_key(key, i).map_err(|e| key_error(&e, false))?;
            refs.push(key);
            start = end;
        }
        let one = refs.len() == 1;
        self.run_batch(n, with_numbers, |me, i, out| {
            let (now, cost) = entry(nows, &cs, i);
            let (d, _) = me.decide(&[refs[if one { 0 } else { i }]], None, now, cost, false)?;
            out.write(i, n, &d.summary());
            Ok(i + 1)
        })
    }

    #[wasm_bindgen(getter, js_name = batchAllowedPtr)]
    pub fn batch_allowed_ptr(&self) -> u32 {
        self.batch.allowed.as_ptr() as u32
    }

    #[wasm_bindgen(getter, js_name = batchNumbersPtr)]
    pub fn batch_numbers_ptr(&self) -> u32 {
        self.batch.numbers.as_ptr() as u32
    }
}
