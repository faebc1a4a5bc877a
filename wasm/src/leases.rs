//! Concurrency leases (`tollgate::concurrency`, docs/concurrency.md) on the in-memory limiter:
//! acquire, release and renew run the core's over the keys' whole states, as reserve and
//! settle do (`reservations.rs`, `Limiter::with_ledgers`), so the decisions and the bytes
//! `exportState` gives are those a store of whole states (Redis) has. A concurrency limit's
//! state varies in size, so its keys live in the store's slab (`policy_states.rs`). The three
//! calls share one run over the states (`Limiter::lease`), for the module's size.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use tollgate::concurrency::LeaseToken;
use tollgate::limiter::{key_refs, validate_keys};
use tollgate::{Nanos, PolicyDecision};
use wasm_bindgen::prelude::*;

use crate::errors::key_error;
use crate::limiter::Limiter;
use crate::time::{cost_from, now_from_ms};
use tollgate_wasm_common::lease::{expiry_ms, lease_error, lease_id, with_keys};

/// What one lease call does to the keys' states.
#[derive(Clone, Copy)]
enum Op {
    Acquire(u64),
    Release,
    Renew,
}

impl Limiter {
    /// Runs `op` for lease `id` over `keys` at `now`: the figures (written to the output
    /// buffer) and the call's own answer (the lease's expiry in ms, 0 for none; for a release
    /// 1 when it freed the lease).
    fn lease(&mut self, keys: &[&str], now: Nanos, id: u64, op: Op) -> Result<(PolicyDecision, f64), JsValue> {
        validate_keys(keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        let out = self.with_ledgers(keys, now, |policy, states| match op {
            Op::Acquire(cost) => policy
                .acquire(states, now, cost, id)
                .map(|d| {
                    let at = if d.allowed { policy.lease_expires_at(states, id).map_or(0.0, expiry_ms) } else { 0.0 };
                    (d, at)
                })
                .map_err(Ok),
            Op::Release => {
                let r = policy.release(states, now, id);
                Ok((r.decision, f64::from(u8::from(r.released))))
            }
            Op::Renew => policy.renew(states, now, id).map(|r| (r.decision, expiry_ms(r.expires_at))).map_err(Err),
        })?;
        let (d, answer) = out.map_err(|e| match e {
            Ok(check) => self.error(check.into(), false),
            Err(lease) => lease_error(&lease),
        })?;
        self.out.write(&d);
        Ok((d, answer))
    }
}

#[wasm_bindgen]
impl Limiter {
    /// Whether the policy has a concurrency limit (its hits take leases: `limit` acquires).
    #[wasm_bindgen(js_name = hasConcurrency)]
    pub fn has_concurrency(&self) -> bool {
        self.policy.has_concurrency()
    }

    /// Decides a hit of `cost` for the keys, all or nothing, like `limitKeys`; when admitted,
    /// every concurrency limit's slot is lease `idHi * 2^32 + idLo` (the caller's random draw)
    /// and the answer is `[token, expiresAt]` (ms since the epoch); `undefined` when denied or
    /// when the policy has no concurrency limit. The decision is in the output buffer.
    #[wasm_bindgen(js_name = acquireKeys)]
    pub fn acquire_keys(
        &mut self,
        keys: Vec<String>,
        now: f64,
        cost: f64,
        id_hi: u32,
        id_lo: u32,
    ) -> Result<Option<Array>, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        self.validate_cost(cost)?;
        let id = lease_id(id_hi, id_lo);
        let (d, expires) = self.lease(&key_refs(&keys), now, id, Op::Acquire(cost))?;
        if !d.allowed || expires == 0.0 {
            return Ok(None);
        }
        let token = LeaseToken { id, policy: String::new(), keys }.to_token();
        let out = Array::new();
        out.push(&JsValue::from_str(&token));
        out.push(&JsValue::from_f64(expires));
        Ok(Some(out))
    }

    /// Releases the lease `token` at `now`: `[released, keys]`, the keys' figures after it in
    /// the output buffer. A lease no longer live is a no-op (`released` false); a token that
    /// does not decode throws `invalid_lease`.
    #[wasm_bindgen(js_name = releaseLease)]
    pub fn release_lease(&mut self, token: &str, now: f64) -> Result<Array, JsValue> {
        self.lease_call(token, now, Op::Release)
    }

    /// Renews the lease `token` at `now`: `[expiresAt, keys]`, the keys' figures after it in
    /// the output buffer. Throws `unknown_lease` (changing nothing) when the lease is not live
    /// on every key, `invalid_lease` for a token that does not decode.
    #[wasm_bindgen(js_name = renewLease)]
    pub fn renew_lease(&mut self, token: &str, now: f64) -> Result<Array, JsValue> {
        self.lease_call(token, now, Op::Renew)
    }
}

impl Limiter {
    /// `releaseLease` and `renewLease`: the token read, `op` run, `[answer, keys]`.
    fn lease_call(&mut self, token: &str, now: f64, op: Op) -> Result<Array, JsValue> {
        let now = now_from_ms(now)?;
        let l = LeaseToken::from_token(token).map_err(|e| lease_error(&e))?;
        let (_, answer) = self.lease(&key_refs(&l.keys), now, l.id, op)?;
        let first = match op {
            Op::Release => JsValue::from_bool(answer != 0.0),
            _ => JsValue::from_f64(answer),
        };
        Ok(with_keys(first, &l.keys))
    }
}
