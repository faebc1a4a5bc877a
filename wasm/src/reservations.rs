//! Reserve and settle (`tollgate::reserve`, docs/reserve.md) on the in-memory limiter.
//!
//! The compact key store keeps a key's limits in a few words, with no room for its ledger of
//! open reservations; the ledgers live here instead, beside the store, keyed by key. Every
//! reserve and settle runs the core's over the key's whole state: the ledger is attached
//! before and detached after (`Policy::attach_ledger`, `detach_ledger`), so the decisions and
//! the bytes `exportState` gives are those a store of whole states (Redis) has. A ledger
//! outlives its key's record when the record is pruned or evicted (its reservations can still
//! be settled, on fresh limits), and goes with `resetKeys` and once its reservations' settling
//! time has passed (`prune`).

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use tollgate::limiter::{key_refs, validate_keys};
use tollgate::policy::{Policy as CorePolicy, PolicyState};
use tollgate::reserve::Reservation;
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::errors::{decode_error, key_error};
use crate::limiter::Limiter;
use crate::time::{cost_from, now_from_ms};
use tollgate_wasm_common::reserve::{actual_from, settle_error, settled_figures};

impl Limiter {
    /// Runs `f` over the keys' whole states (ledgers attached), taken out of the store and put
    /// back as `PolicyStore::update` does (a generic `f`, not a `dyn` one: no function table).
    pub(crate) fn with_ledgers<R>(
        &mut self,
        keys: &[&str],
        now: Nanos,
        f: impl FnOnce(&CorePolicy, &mut [Option<PolicyState>]) -> R,
    ) -> Result<R, JsValue> {
        let policy = &self.policy;
        let mut states: Vec<Option<PolicyState>> = Vec::with_capacity(keys.len());
        for k in keys {
            match self.store.take(policy, k) {
                Ok(s) => states.push(s),
                Err(e) => {
                    let n = states.len();
                    self.store.put_states(&keys[..n], states, now);
                    return Err(decode_error(&e));
                }
            }
        }
        for (k, s) in keys.iter().zip(states.iter_mut()) {
            policy.attach_ledger(s, self.ledgers.take(k));
        }
        let out = f(policy, &mut states);
        for (k, s) in keys.iter().zip(states.iter_mut()) {
            let open = policy.detach_ledger(s);
            self.ledgers.put(k, open);
        }
        self.store.put_states(keys, states, now);
        Ok(out)
    }
}

#[wasm_bindgen]
impl Limiter {
    /// Decides a hit of `cost` (the estimate) for the keys, all or nothing, like `limitKeys`;
    /// when admitted, opens reservation `idHi * 2^32 + idLo` (the caller's random draw) on
    /// every key and returns its token (`undefined` when denied). The decision is in the
    /// output buffer.
    #[wasm_bindgen(js_name = reserveKeys)]
    pub fn reserve_keys(
        &mut self,
        keys: Vec<String>,
        now: f64,
        cost: f64,
        id_hi: u32,
        id_lo: u32,
    ) -> Result<Option<String>, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        validate_keys(&key_refs(&keys)).map_err(|e| key_error(&e, keys.len() == 1))?;
        self.validate_cost(cost)?;
        let id = (u64::from(id_hi) << 32) | u64::from(id_lo);
        let d = self.with_ledgers(&key_refs(&keys), now, |policy, states| policy.reserve(states, now, cost, id))?;
        let d = d.map_err(|e| self.error(e.into(), false))?;
        self.out.write(&d);
        Ok(d.allowed.then(|| Reservation { id, estimate: cost, policy: String::new(), keys }.to_token()))
    }

    /// Settles the reservation `token` with the `actual` cost at `now`: the keys' figures after
    /// it in the output buffer, and `[refunded, charged, forgiven, keys]`. Throws
    /// `invalid_reservation` or `unknown_reservation` (changing nothing).
    #[wasm_bindgen(js_name = settleReservation)]
    pub fn settle_reservation(&mut self, token: &str, now: f64, actual: f64) -> Result<Array, JsValue> {
        let now = now_from_ms(now)?;
        let actual = actual_from(actual)?;
        let r = Reservation::from_token(token).map_err(|e| settle_error(&e))?;
        let keys = key_refs(&r.keys);
        validate_keys(&keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        let s = self
            .with_ledgers(&keys, now, |policy, states| policy.settle(states, now, r.id, r.estimate, actual))?
            .map_err(|e| settle_error(&e))?;
        self.out.write(&s.decision);
        Ok(settled_figures(&s, &r.keys))
    }
}
