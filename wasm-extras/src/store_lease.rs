//! Concurrency leases (`tollgate::concurrency`, docs/concurrency.md) over the bytes a store
//! holds: the Redis store's compare-and-swap steps of acquire, release and renew, as
//! `StorePolicy.step` is a hit's and `reserveStep` a reservation's. The leases are in the
//! state bytes, so the store keeps them with nothing beside: one round trip to acquire, one
//! to release (none for a release that changes nothing).

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use tollgate::concurrency::queue::{QueueArgs, QueueStatus};
use tollgate::concurrency::LeaseToken;
use tollgate::store::cas_step;
use wasm_bindgen::prelude::*;

use crate::errors::{check_error, decode_error};
use crate::store_policy::{raw_states, StorePolicy};
use crate::time::{cost_from, now_from_ms};
use tollgate_wasm_common::lease::{expiry_ms, lease_error, lease_id, with_keys};

#[wasm_bindgen]
impl StorePolicy {
    /// Whether the policy has a concurrency limit (its hits take leases).
    #[wasm_bindgen(js_name = hasConcurrency)]
    pub fn has_concurrency(&self) -> bool {
        self.inner.has_concurrency()
    }

    /// The compare-and-swap step of acquiring a hit of `cost` for `keys` over their bytes
    /// `states`, lease id `idHi * 2^32 + idLo` (the caller's random draw): decides it as `step`
    /// does a hit (the decision in the output buffer) and answers as `step` does. `lastLease`
    /// then gives `[token, expiresAt]`, or `undefined` when nothing was acquired.
    #[wasm_bindgen(js_name = acquireStep)]
    pub fn acquire_step(
        &mut self,
        states: &Array,
        keys: Vec<String>,
        now: f64,
        cost: f64,
        id_hi: u32,
        id_lo: u32,
    ) -> Result<JsValue, JsValue> {
        // An acquisition that never waits: a line of 0 and a deadline of now (one compare-and-
        // swap path for both, so the module holds one copy of it).
        let written = self.acquire_queued_step(states, keys, now, cost, id_hi, id_lo, 0.0, now)?;
        self.lease = self.lease.take().and_then(|a| {
            let admitted = a.get(2).as_string().is_some_and(|s| s == QueueStatus::Admitted.name());
            admitted.then(|| Array::of2(&a.get(0), &a.get(1)))
        });
        Ok(written)
    }

    /// The compare-and-swap step of acquiring waiting in line (`tollgate::concurrency::queue`):
    /// as `acquireStep`, for the waiter `idHi * 2^32 + idLo`, joining the line only while fewer
    /// than `maxQueue` wait, giving up at `deadline` (ms since the epoch; a waiter's ticket keeps
    /// the deadline of its arrival). `lastLease` then gives `[token, expiresAt, status,
    /// position, pollAfter]`: the waiter's token (a lease when admitted; its release takes a
    /// waiter out of the line), the lease's expiry (`null` unless admitted), the status's name
    /// (`admitted`, `waiting`, `full`, `timed_out`), the tickets ahead and when to poll again
    /// (ms).
    #[wasm_bindgen(js_name = acquireQueuedStep)]
    #[allow(clippy::too_many_arguments)]
    pub fn acquire_queued_step(
        &mut self,
        states: &Array,
        keys: Vec<String>,
        now: f64,
        cost: f64,
        id_hi: u32,
        id_lo: u32,
        max_queue: f64,
        deadline: f64,
    ) -> Result<JsValue, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let deadline = now_from_ms(deadline)?;
        let raw = raw_states(states)?;
        let id = lease_id(id_hi, id_lo);
        let args = QueueArgs::new(max_queue.max(0.0) as u64, deadline);
        let inner = &self.inner;
        let step = cas_step(inner, &raw, &mut |st| inner.acquire_queued(st, now, cost, id, args))
            .map_err(|(_, e)| decode_error(&e))?;
        let q = step.result.map_err(|e| check_error(&e, &self.inner))?;
        self.out.write(&q.decision);
        let out = Array::new();
        out.push(&JsValue::from_str(&LeaseToken { id, policy: String::new(), keys }.to_token()));
        match q.expires_at.filter(|_| q.status == QueueStatus::Admitted) {
            Some(at) => out.push(&JsValue::from_f64(expiry_ms(at))),
            None => out.push(&JsValue::NULL),
        };
        out.push(&JsValue::from_str(q.status.name()));
        out.push(&JsValue::from_f64(match q.status {
            QueueStatus::Waiting { position } => position as f64,
            _ => 0.0,
        }));
        out.push(&JsValue::from_f64(q.poll_after.as_nanos().div_ceil(1_000_000) as f64));
        self.lease = Some(out);
        Ok(self.written(&step.states, step.changed))
    }

    /// The keys a lease token names (throws `invalid_lease`): the keys to read.
    #[wasm_bindgen(js_name = leaseKeys)]
    pub fn lease_keys(&self, token: &str) -> Result<Vec<String>, JsValue> {
        Ok(LeaseToken::from_token(token).map_err(|e| lease_error(&e))?.keys)
    }

    /// The compare-and-swap step of releasing `token` over the keys' bytes: the keys' figures
    /// after it in the output buffer, `[released, keys]` from `lastLease`, and the bytes as
    /// `step` answers them (`null` when nothing changed: a replay writes nothing).
    #[wasm_bindgen(js_name = releaseStep)]
    pub fn release_step(&mut self, states: &Array, now: f64, token: &str) -> Result<JsValue, JsValue> {
        let now = now_from_ms(now)?;
        let l = LeaseToken::from_token(token).map_err(|e| lease_error(&e))?;
        let raw = raw_states(states)?;
        let inner = &self.inner;
        let step = cas_step(inner, &raw, &mut |st| inner.release(st, now, l.id)).map_err(|(_, e)| decode_error(&e))?;
        self.out.write(&step.result.decision);
        self.lease = Some(with_keys(JsValue::from_bool(step.result.released), &l.keys));
        Ok(self.written(&step.states, step.changed))
    }

    /// The compare-and-swap step of renewing `token` over the keys' bytes: the keys' figures
    /// after it in the output buffer, `[expiresAt, keys]` from `lastLease`, and the bytes as
    /// `step` answers them. Throws `unknown_lease` (over these bytes) or `invalid_lease`,
    /// changing nothing.
    #[wasm_bindgen(js_name = renewStep)]
    pub fn renew_step(&mut self, states: &Array, now: f64, token: &str) -> Result<JsValue, JsValue> {
        let now = now_from_ms(now)?;
        let l = LeaseToken::from_token(token).map_err(|e| lease_error(&e))?;
        let raw = raw_states(states)?;
        let inner = &self.inner;
        let step = cas_step(inner, &raw, &mut |st| inner.renew(st, now, l.id)).map_err(|(_, e)| decode_error(&e))?;
        let r = step.result.map_err(|e| lease_error(&e))?;
        self.out.write(&r.decision);
        self.lease = Some(with_keys(JsValue::from_f64(expiry_ms(r.expires_at)), &l.keys));
        Ok(self.written(&step.states, step.changed))
    }

    /// What the last `acquireStep`, `releaseStep` or `renewStep` answered beside the figures.
    #[wasm_bindgen(js_name = lastLease)]
    pub fn last_lease(&self) -> Option<Array> {
        self.lease.clone()
    }
}
