//! `StorePolicy`: the core's pure decision over encoded states, for stores that keep state
//! elsewhere (the Redis store, through the JS layer's `Policy`). Nothing is kept between calls
//! except the output buffer. It lives in this module, not the limiter's: an in-memory
//! `RateLimiter` never decides over encoded states, so its users do not load this.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, Float64Array, Uint8Array};
use tollgate::guard::{check_guarded, Guard};
use tollgate::policy::Policy as CorePolicy;
use tollgate::store::{cas_step, decode_states};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::errors::{check_error, decode_error, range_error, type_error};
use crate::msg::Msg;
use crate::out::Out;
use crate::spec::build_policy;
use crate::time::{cost_from, now_from_ms};

/// A step's bytes after it per key and when each is fresh again (`tollgate::store::CasStep`).
type Stepped = Vec<Option<(Vec<u8>, tollgate::Nanos)>>;

impl StorePolicy {
    /// `step` over `raw` (one entry per key): the bytes after it and whether they changed.
    fn step_over(
        &mut self,
        raw: &[Option<Vec<u8>>],
        now: f64,
        cost: f64,
        refund: bool,
        join: bool,
    ) -> Result<(Stepped, bool), JsValue> {
        let before = if join { self.guard.take() } else { None };
        self.guard = None;
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let inner = &self.inner;
        let mut guard = None;
        let step = cas_step(inner, raw, &mut |st| {
            if refund {
                inner.refund(st, now, cost);
                return Ok(None);
            }
            let (d, g) = check_guarded(inner, st, now, cost)?;
            guard = g;
            Ok(Some(d))
        })
        .map_err(|(_, e)| decode_error(&e))?;
        match step.result {
            Ok(Some(d)) => self.out.write(&d),
            Ok(None) => {}
            Err(e) => return Err(check_error(&e, &self.inner)),
        }
        if step.changed {
            self.guard = match (join, before) {
                (false, _) => guard,
                (true, Some(b)) => guard.and_then(|g| b.then(&g)),
                (true, None) => None,
            };
        }
        Ok((step.states, step.changed))
    }

    /// The decision `check` would make over `states` (encoded; `null`: fresh) at `now` for
    /// `cost`: `peek`'s, and the figures of the answers of a store that could not decide
    /// (`answer.rs`).
    #[inline(never)]
    pub(crate) fn peek_decision(&self, states: &Array, now: f64, cost: f64) -> Result<tollgate::PolicyDecision, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let st = decode_states(&self.inner, &raw_states(states)?).map_err(|(_, e)| decode_error(&e))?;
        self.inner.peek(&st, now, cost).map_err(|e| check_error(&e, &self.inner))
    }
}

#[wasm_bindgen]
pub struct StorePolicy {
    pub(crate) inner: CorePolicy,
    pub(crate) out: Out,
    expires: Vec<f64>,
    /// The guard of the steps since the last one not joined (`tollgate::guard`).
    guard: Option<Guard>,
    /// What the last `settleStep` did (`store_reserve.rs`).
    pub(crate) settled: Option<Array>,
    /// What the last lease step answered (`store_lease.rs`).
    pub(crate) lease: Option<Array>,
    /// One key's bytes while a batch of its hits is decided (`batchBegin`, `batchStep`), and
    /// when the last step that changed them makes them fresh again (epoch ms; 0: fresh).
    batch: Option<Vec<u8>>,
    batch_expires: f64,
}

impl StorePolicy {
    /// A step's answer: the bytes after it per key (`null`: fresh), or `null` when nothing
    /// `changed`; `lastExpiresAt` then tells when each is fresh again.
    pub(crate) fn written(&mut self, states: &[Option<(Vec<u8>, tollgate::Nanos)>], changed: bool) -> JsValue {
        self.expires.clear();
        let result = Array::new();
        for s in states {
            match s {
                Some((bytes, expires)) => {
                    self.expires.push(expires.as_millis_ceil() as f64);
                    result.push(&Uint8Array::from(bytes.as_slice()));
                }
                None => {
                    self.expires.push(0.0);
                    result.push(&JsValue::NULL);
                }
            }
        }
        if changed {
            result.into()
        } else {
            JsValue::NULL
        }
    }
}

/// The bytes of each key (`null`/`undefined`: absent), not decoded.
pub(crate) fn raw_states(states: &Array) -> Result<Vec<Option<Vec<u8>>>, JsValue> {
    let n = states.length();
    if n == 0 || n as usize > tollgate::limiter::MAX_KEYS_PER_HIT {
        let max = tollgate::limiter::MAX_KEYS_PER_HIT as u64;
        return Err(range_error(&Msg::new("states must hold 1 to ").n(max).s(" entries, got ").n(n as u64).0));
    }
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let v = states.get(i);
        if v.is_null() || v.is_undefined() {
            out.push(None);
            continue;
        }
        let Some(bytes) = v.dyn_ref::<Uint8Array>() else {
            return Err(type_error(&Msg::new("states[").n(i as u64).s("] must be a Uint8Array or null").0));
        };
        out.push(Some(bytes.to_vec()));
    }
    Ok(out)
}

#[wasm_bindgen]
impl StorePolicy {
    /// The policy the options describe (see `wasm-common/src/spec.rs`), as the limiter's module's `Policy`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue, fields: Vec<String>) -> Result<StorePolicy, JsValue> {
        let inner = build_policy(options, &fields)?;
        Ok(StorePolicy { inner, out: Out::new(), expires: Vec::new(), guard: None, settled: None, lease: None, batch: None, batch_expires: 0.0 })
    }

    /// Where the last decision was written (see `wasm-common/src/out.rs`).
    #[wasm_bindgen(getter, js_name = outPtr)]
    pub fn out_ptr(&self) -> u32 {
        self.out.ptr()
    }

    /// The core's compare-and-swap step (`tollgate::store::cas_step`) for one hit over the
    /// bytes a store holds (`null`: absent): decides it (or, with `refund`, gives `cost` back),
    /// writes the decision to the output buffer (not for a refund) and returns the bytes after
    /// it per key (`null`: fresh, delete the key), or `null` when they are the bytes given, so
    /// there is nothing to write. `lastExpiresAt` then tells when each state is fresh again,
    /// and `lastGuard` the guard of the write (`tollgate::guard`): of this step alone, or with
    /// `join`, of every step since the last one not joined, each over the bytes the one before
    /// returned (one key's batch of hits).
    pub fn step(&mut self, states: &Array, now: f64, cost: f64, refund: bool, join: bool) -> Result<JsValue, JsValue> {
        let raw = raw_states(states)?;
        let (states, changed) = self.step_over(&raw, now, cost, refund, join)?;
        Ok(self.written(&states, changed))
    }

    /// Starts a batch of one key's hits over `state`, the bytes the store holds (absent:
    /// fresh): `batchStep` then decides them one after another, each over the bytes the one
    /// before left, as `step` with those bytes would, without passing them back and forth.
    #[wasm_bindgen(js_name = batchBegin)]
    pub fn batch_begin(&mut self, state: Option<Vec<u8>>) {
        self.batch = state;
        self.batch_expires = 0.0;
        self.guard = None;
    }

    /// `step` of one hit over the batch's bytes (`join`: its guard joins the steps' before
    /// it): writes the decision to the output buffer and answers whether the bytes changed.
    /// Throws as `step` does, changing nothing.
    #[wasm_bindgen(js_name = batchStep)]
    pub fn batch_step(&mut self, now: f64, cost: f64, join: bool) -> Result<bool, JsValue> {
        let raw = [self.batch.take()];
        let result = self.step_over(&raw, now, cost, false, join);
        let [old] = raw;
        match result {
            Ok((mut states, true)) => {
                let new = states.pop().flatten();
                self.batch_expires = new.as_ref().map_or(0.0, |(_, e)| e.as_millis_ceil() as f64);
                self.batch = new.map(|(bytes, _)| bytes);
                Ok(true)
            }
            Ok((_, false)) => {
                self.batch = old;
                Ok(false)
            }
            Err(e) => {
                self.batch = old;
                Err(e)
            }
        }
    }

    /// The batch's bytes now (`undefined`: fresh, delete the key).
    #[wasm_bindgen(js_name = batchBytes)]
    pub fn batch_bytes(&self) -> Option<Vec<u8>> {
        self.batch.clone()
    }

    /// When the batch's bytes are fresh again, as of the last step that changed them (epoch ms; 0: fresh).
    #[wasm_bindgen(getter, js_name = batchExpiresAt)]
    pub fn batch_expires_at(&self) -> f64 {
        self.batch_expires
    }

    /// The guard of the last `step`'s write, `[fields, lo, hi, knee]` (the fields a bit set;
    /// every number within 2^50, so exact), or `null` when it has none: a compare-and-swap
    /// that finds other bytes is then a plain conflict.
    #[wasm_bindgen(js_name = lastGuard)]
    pub fn last_guard(&self) -> Option<Float64Array> {
        let g = self.guard?;
        Some(Float64Array::from(&[f64::from(g.fields), g.lo as f64, g.hi as f64, g.knee as f64][..]))
    }

    /// When each state of the last `step` is fresh again (epoch ms; 0 for a fresh key).
    #[wasm_bindgen(js_name = lastExpiresAt)]
    pub fn last_expires_at(&self) -> Float64Array {
        Float64Array::from(self.expires.as_slice())
    }

    /// The decision `check` would make; writes it to the output buffer.
    pub fn peek(&mut self, states: &Array, now: f64, cost: f64) -> Result<(), JsValue> {
        let d = self.peek_decision(states, now, cost)?;
        self.out.write(&d);
        Ok(())
    }

    /// When `state` (a state of this policy) decides like a fresh key, epoch ms rounded up: a
    /// store that is given a state (an import) keeps it that long. Throws like `validateState`.
    #[wasm_bindgen(js_name = stateExpiresAt)]
    pub fn state_expires_at(&self, state: &[u8]) -> Result<f64, JsValue> {
        let s = self.inner.decode_state(state).map_err(|e| decode_error(&e))?;
        Ok(s.expires_at().as_millis_ceil() as f64)
    }

    /// Throws a `TypeError` when `state` is not a state of this policy.
    #[wasm_bindgen(js_name = validateState)]
    pub fn validate_state(&self, state: &[u8]) -> Result<(), JsValue> {
        self.inner.decode_state(state).map(|_| ()).map_err(|e| decode_error(&e))
    }
}
