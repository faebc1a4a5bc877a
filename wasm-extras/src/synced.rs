//! `Synced`: the core's `SyncedLimiter` (gateway-style sync) for the Redis
//! store's `syncRate` modes. The node decides locally from merged plus unsynced counts; the
//! JavaScript layer (`lib/stores/redis/redis-synced.js`) moves diffs and merged counts to and from Redis.
//! Diffs and merged counts cross the boundary as one flat `Float64Array` each (no object per
//! diff, no string formatting in wasm, few exports: each costs module size). A window start
//! in nanoseconds does not fit a double exactly, so it travels as two 32-bit halves, which
//! JavaScript joins into a `BigInt` for the exact decimal field name.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Float64Array;
use tollgate::limiter::key_refs;
use tollgate::sync::{MergedCount, SyncRate, SyncedLimiter};
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::errors::{config_error, limit_error, range_error};
use crate::out::Out;
use crate::spec::build_policy;
use crate::time::{cost_from, now_from_ms};

#[wasm_bindgen]
pub struct Synced {
    inner: SyncedLimiter,
    out: Out,
    /// The keys the diffs of the last `takeDiffs` name (`diffKeys`).
    diff_keys: Vec<String>,
}

impl Synced {
    fn run(&mut self, keys: &[&str], now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let r = if peek { self.inner.peek(keys, now, cost) } else { self.inner.check(keys, now, cost) };
        let d = r.map_err(|e| limit_error(e, self.inner.policy(), keys.len() == 1))?;
        self.out.write(&d);
        Ok(d.allowed)
    }
}

#[wasm_bindgen]
impl Synced {
    /// A node of `namespace` deciding by the policy the options describe (as the limiter
    /// module's `Policy` takes them; this module builds its own copy, as a class of one wasm
    /// module cannot be passed to the other). Every limit must be a window counter.
    /// `syncRateMs`: > 0 periodic, < 0 local only (0 is deciding in the store, which the Redis
    /// store does without this class).
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue, fields: Vec<String>, namespace: &str, sync_rate_ms: f64) -> Result<Synced, JsValue> {
        if !crate::time::is_whole(sync_rate_ms) {
            return Err(range_error("syncRate must be a whole number of milliseconds"));
        }
        let policy = build_policy(options, &fields)?;
        let rate = SyncRate::from_millis(sync_rate_ms as i64);
        let inner = SyncedLimiter::new(namespace, policy, rate).map_err(|e| config_error("", &e))?;
        Ok(Synced { inner, out: Out::new(), diff_keys: Vec::new() })
    }

    #[wasm_bindgen(getter, js_name = outPtr)]
    pub fn out_ptr(&self) -> u32 {
        self.out.ptr()
    }

    /// Decides a hit for the keys (all or nothing) from what this node knows, and counts it
    /// if allowed; with `peek`, counts nothing.
    pub fn decide(&mut self, keys: Vec<String>, now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        self.run(&key_refs(&keys), now, cost, peek)
    }

    /// Moves the pending counts to in flight and returns them to push, the core's `SYNC_DIFF`
    /// per diff: `[key index into diffKeys(), limit, start high 32 bits, start low 32 bits,
    /// delta, epoch ms after which the window no longer matters]`.
    #[wasm_bindgen(js_name = takeDiffs)]
    pub fn take_diffs(&mut self, now: f64) -> Result<Float64Array, JsValue> {
        let now = now_from_ms(now)?;
        let diffs = self.inner.take_diffs(now);
        self.diff_keys.clear();
        let mut out = Vec::with_capacity(diffs.len() * tollgate::layout::SYNC_DIFF.len());
        for d in &diffs {
            let k = match self.diff_keys.iter().position(|k| **k == *d.key) {
                Some(k) => k,
                None => {
                    self.diff_keys.push(String::from(&*d.key));
                    self.diff_keys.len() - 1
                }
            };
            let start = d.window_start.as_nanos();
            out.extend_from_slice(&[
                k as f64,
                d.limit as f64,
                (start >> 32) as f64,
                (start & 0xffff_ffff) as f64,
                d.delta as f64,
                d.expires_at.as_millis_ceil() as f64,
            ]);
        }
        Ok(Float64Array::from(out.as_slice()))
    }

    /// The keys the last `takeDiffs` named.
    #[wasm_bindgen(js_name = diffKeys)]
    pub fn diff_keys(&self) -> Vec<String> {
        self.diff_keys.clone()
    }

    /// The push failed: the in-flight counts count as pending again.
    pub fn restore(&mut self) {
        self.inner.restore();
    }

    /// The keys this node holds counts for (the keys to read back).
    pub fn keys(&self) -> Vec<String> {
        self.inner.keys().map(String::from).collect()
    }

    /// Replaces the merged counts of `keys` with what the store holds: five numbers per entry,
    /// `[key index into keys, limit, start high 32 bits, start low 32 bits, count]`. Returns,
    /// per entry, 1 when its window no longer matters at `now` (the store may drop it), else 0.
    #[wasm_bindgen(js_name = applyMerged)]
    pub fn apply_merged(&mut self, keys: Vec<String>, entries: &[f64], now: f64) -> Result<Vec<u8>, JsValue> {
        let now = now_from_ms(now)?;
        let mut merged = Vec::with_capacity(entries.len() / 5);
        let mut stale = Vec::with_capacity(entries.len() / 5);
        for e in entries.chunks_exact(5) {
            let limit = e[1] as usize;
            let start = Nanos::new(((e[2] as u64) << 32) | (e[3] as u64 & 0xffff_ffff));
            let live = self.inner.window_expires_at(limit, start).is_some_and(|end| end > now);
            let key = keys.get(e[0] as usize);
            stale.push(u8::from(!live || key.is_none()));
            if let (true, Some(key)) = (live, key) {
                merged.push(MergedCount { key: key.as_str().into(), limit, window_start: start, count: e[4] as u64 });
            }
        }
        self.inner.apply_merged_for(&key_refs(&keys), &merged, now);
        Ok(stale)
    }
}
