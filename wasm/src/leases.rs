//! Concurrency leases (`tollgate::concurrency`, docs/concurrency.md) on the in-memory limiter:
//! acquire, release and renew run the core's over the keys' whole states, as reserve and
//! settle do (`reservations.rs`, `Limiter::with_ledgers`), so the decisions and the bytes
//! `exportState` gives are those a store of whole states (Redis) has. A concurrency limit's
//! state varies in size, so its keys live in the store's slab (`policy_states.rs`).

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use tollgate::concurrency::LeaseToken;
use tollgate::limiter::{key_refs, validate_keys};
use wasm_bindgen::prelude::*;

use crate::errors::key_error;
use crate::limiter::Limiter;
use crate::time::{cost_from, now_from_ms};
use tollgate_wasm_common::lease::{expiry_ms, lease_error, lease_id, with_keys};

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
        validate_keys(&key_refs(&keys)).map_err(|e| key_error(&e, keys.len() == 1))?;
        self.validate_cost(cost)?;
        let id = lease_id(id_hi, id_lo);
        let (d, expires) = self.with_ledgers(&key_refs(&keys), now, |policy, states| {
            let d = policy.acquire(states, now, cost, id);
            (d, policy.lease_expires_at(states, id))
        })?;
        let d = d.map_err(|e| self.error(e.into(), false))?;
        self.out.write(&d);
        Ok(match (d.allowed, expires) {
            (true, Some(at)) => {
                let token = LeaseToken { id, policy: String::new(), keys }.to_token();
                let out = Array::new();
                out.push(&JsValue::from_str(&token));
                out.push(&JsValue::from_f64(expiry_ms(at)));
                Some(out)
            }
            _ => None,
        })
    }

    /// Releases the lease `token` at `now`: `[released, keys]`, the keys' figures after it in
    /// the output buffer. A lease no longer live is a no-op (`released` false); a token that
    /// does not decode throws `invalid_lease`.
    #[wasm_bindgen(js_name = releaseLease)]
    pub fn release_lease(&mut self, token: &str, now: f64) -> Result<Array, JsValue> {
        let now = now_from_ms(now)?;
        let l = LeaseToken::from_token(token).map_err(|e| lease_error(&e))?;
        let keys = key_refs(&l.keys);
        validate_keys(&keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        let r = self.with_ledgers(&keys, now, |policy, states| policy.release(states, now, l.id))?;
        self.out.write(&r.decision);
        Ok(with_keys(JsValue::from_bool(r.released), &l.keys))
    }

    /// Renews the lease `token` at `now`: `[expiresAt, keys]`, the keys' figures after it in
    /// the output buffer. Throws `unknown_lease` (changing nothing) when the lease is not live
    /// on every key, `invalid_lease` for a token that does not decode.
    #[wasm_bindgen(js_name = renewLease)]
    pub fn renew_lease(&mut self, token: &str, now: f64) -> Result<Array, JsValue> {
        let now = now_from_ms(now)?;
        let l = LeaseToken::from_token(token).map_err(|e| lease_error(&e))?;
        let keys = key_refs(&l.keys);
        validate_keys(&keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        let r = self
            .with_ledgers(&keys, now, |policy, states| policy.renew(states, now, l.id))?
            .map_err(|e| lease_error(&e))?;
        self.out.write(&r.decision);
        Ok(with_keys(JsValue::from_f64(expiry_ms(r.expires_at)), &l.keys))
    }
}
