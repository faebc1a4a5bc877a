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

use alloc::vec::Vec;
use tollgate::limiter::{validate_key, validate_keys};
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::batch_out::{BatchOut, Handles};
use crate::cached_run::Run;
use crate::errors::{at_index, range_error};
use crate::key_store::holds;
use crate::limiter::{key_error, Decided, Limiter};
use crate::time::{cost_from, nanos_of_valid_ms, now_from_ms, now_in_range};

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
