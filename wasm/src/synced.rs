//! `Synced`: the core's `SyncedLimiter` (gateway-style sync, notes section 3) for the Redis
//! store's `syncRate` modes. The node decides locally from merged plus unsynced counts; the
//! JavaScript layer (`lib/redis-synced.js`) moves diffs and merged counts to and from Redis.
//! Diffs and merged counts cross the boundary as parallel typed arrays (no per-diff object,
//! no string formatting in wasm): window starts are nanoseconds as `BigUint64Array`, which
//! JavaScript turns into exact decimal field names.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{BigUint64Array, Float64Array, Uint32Array, Uint8Array};
use tollgate::limiter::{validate_keys, LimitError};
use tollgate::sync::{Diff, MergedCount, SyncRate, SyncedLimiter};
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::errors::{check_error, config_error, range_error};
use crate::limiter::key_error;
use crate::out::Out;
use crate::policy::Policy;
use crate::time::{cost_from, now_from_ms};

#[wasm_bindgen]
pub struct Synced {
    inner: SyncedLimiter,
    out: Out,
    /// The diffs of the last `takeDiffs`, until JavaScript has read them.
    diffs: Vec<Diff>,
}

fn refs(keys: &[String]) -> Vec<&str> {
    keys.iter().map(String::as_str).collect()
}

impl Synced {
    fn run(&mut self, keys: &[&str], now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let r = if peek {
            self.inner.peek(keys, now, cost)
        } else {
            self.inner.check(keys, now, cost)
        };
        match r {
            Ok(d) => {
                self.out.write(&d);
                Ok(d.allowed)
            }
            Err(LimitError::Key(k)) => Err(key_error(&k, keys.len() == 1)),
            Err(LimitError::Check(c)) => {
                let policy = self.inner.policy();
                Err(check_error(&c, |i| {
                    policy.limits().get(i).map_or("", |l| l.name()).into()
                }))
            }
            Err(LimitError::Store(never)) => match never {},
        }
    }
}

#[wasm_bindgen]
impl Synced {
    /// A node of `namespace` deciding by `policy` (copied; every limit must be a window
    /// counter). `syncRateMs`: > 0 periodic, < 0 local only (0 is deciding in the store, which
    /// the Redis store does without this class).
    #[wasm_bindgen(constructor)]
    pub fn new(policy: &Policy, namespace: &str, sync_rate_ms: f64) -> Result<Synced, JsValue> {
        if !sync_rate_ms.is_finite() || sync_rate_ms.fract() != 0.0 {
            return Err(range_error("syncRate must be a whole number of milliseconds"));
        }
        let rate = SyncRate::from_millis(sync_rate_ms as i64);
        let inner = SyncedLimiter::new(namespace, policy.inner.clone(), rate)
            .map_err(|e| config_error("", &e))?;
        Ok(Synced {
            inner,
            out: Out::new(),
            diffs: Vec::new(),
        })
    }

    #[wasm_bindgen(getter, js_name = outPtr)]
    pub fn out_ptr(&self) -> u32 {
        self.out.ptr()
    }

    /// Decides and counts a hit for one key from what this node knows.
    pub fn limit(&mut self, key: &str, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&[key], now, cost, false)
    }

    #[wasm_bindgen(js_name = limitKeys)]
    pub fn limit_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&refs(&keys), now, cost, false)
    }

    #[wasm_bindgen(js_name = peekKeys)]
    pub fn peek_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&refs(&keys), now, cost, true)
    }

    /// Moves the pending counts to in flight; returns how many diffs there are to push
    /// (read them with `diffKeys`, `diffLimits`, `diffStarts`, `diffDeltas`, `diffExpiresAt`).
    #[wasm_bindgen(js_name = takeDiffs)]
    pub fn take_diffs(&mut self, now: f64) -> Result<u32, JsValue> {
        let now = now_from_ms(now)?;
        self.diffs = self.inner.take_diffs(now);
        Ok(self.diffs.len() as u32)
    }

    #[wasm_bindgen(js_name = diffKeys)]
    pub fn diff_keys(&self) -> Vec<String> {
        self.diffs.iter().map(|d| String::from(&*d.key)).collect()
    }

    #[wasm_bindgen(js_name = diffLimits)]
    pub fn diff_limits(&self) -> Uint32Array {
        let v: Vec<u32> = self.diffs.iter().map(|d| d.limit as u32).collect();
        Uint32Array::from(v.as_slice())
    }

    #[wasm_bindgen(js_name = diffStarts)]
    pub fn diff_starts(&self) -> BigUint64Array {
        let v: Vec<u64> = self.diffs.iter().map(|d| d.window_start.as_nanos()).collect();
        BigUint64Array::from(v.as_slice())
    }

    #[wasm_bindgen(js_name = diffDeltas)]
    pub fn diff_deltas(&self) -> Float64Array {
        let v: Vec<f64> = self.diffs.iter().map(|d| d.delta as f64).collect();
        Float64Array::from(v.as_slice())
    }

    /// Epoch ms after which each diff's window no longer matters (the Redis expiry).
    #[wasm_bindgen(js_name = diffExpiresAt)]
    pub fn diff_expires_at(&self) -> Float64Array {
        let v: Vec<f64> = self
            .diffs
            .iter()
            .map(|d| d.expires_at.as_millis_ceil() as f64)
            .collect();
        Float64Array::from(v.as_slice())
    }

    /// The push failed: the in-flight counts count as pending again.
    pub fn restore(&mut self) {
        self.diffs.clear();
        self.inner.restore();
    }

    /// The keys this node holds counts for (the keys to read back).
    pub fn keys(&self) -> Vec<String> {
        self.inner.keys().map(String::from).collect()
    }

    /// Replaces the merged counts of `keys` with the entries (`keyIndex` into `keys`, limit,
    /// window start in ns, count) read back from the store. Returns, per entry, 1 when its
    /// window no longer matters at `now` (so the store can drop it), else 0.
    #[wasm_bindgen(js_name = applyMerged)]
    pub fn apply_merged(
        &mut self,
        keys: Vec<String>,
        key_index: &[u32],
        limits: &[u32],
        starts: &[u64],
        counts: &[f64],
        now: f64,
    ) -> Result<Uint8Array, JsValue> {
        let now = now_from_ms(now)?;
        let n = key_index.len().min(limits.len()).min(starts.len()).min(counts.len());
        let policy = self.inner.policy();
        let mut merged = Vec::with_capacity(n);
        let mut stale = Vec::with_capacity(n);
        for i in 0..n {
            let limit = limits[i] as usize;
            let start = Nanos::new(starts[i]);
            let alg = policy.limits().get(limit).map(|l| l.algorithm());
            let live = alg.is_some_and(|a| {
                let g = a.granularity().unwrap_or(Nanos::ZERO);
                start + g.saturating_mul(a.span().unwrap_or(1) + 1) > now
            });
            let Some(key) = keys.get(key_index[i] as usize) else {
                stale.push(1);
                continue;
            };
            stale.push(u8::from(!live));
            if live && counts[i] >= 0.0 {
                merged.push(MergedCount {
                    key: key.as_str().into(),
                    limit,
                    window_start: start,
                    count: counts[i] as u64,
                });
            }
        }
        self.diffs.clear();
        self.inner.apply_merged_for(&refs(&keys), &merged, now);
        Ok(Uint8Array::from(stale.as_slice()))
    }
}

/// Throws the same `RangeError` the in-memory limiter gives for keys that cannot be decided
/// (empty, longer than 256 bytes, more than 8, repeated), for stores that decide elsewhere.
#[wasm_bindgen(js_name = validateKeys)]
pub fn validate_keys_js(keys: Vec<String>) -> Result<(), JsValue> {
    validate_keys(&refs(&keys)).map_err(|e| key_error(&e, keys.len() == 1))
}
