//! Reserve and settle (`tollgate::reserve`, docs/reserve.md) over the bytes a store holds:
//! the Redis store's compare-and-swap steps, as `StorePolicy.step` is a hit's. The ledger of
//! open reservations is in the state bytes, so the store keeps them with nothing beside.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Array;
use tollgate::reserve::{Reservation, Settled};
use tollgate::store::cas_step;
use wasm_bindgen::prelude::*;

use crate::errors::{check_error, decode_error};
use crate::store_policy::{raw_states, StorePolicy};
use crate::time::{cost_from, now_from_ms};
use tollgate_wasm_common::reserve::{actual_from, settle_error, settled_figures};

#[wasm_bindgen]
impl StorePolicy {
    /// The compare-and-swap step of a reservation of `cost` (the estimate) for `keys` over
    /// their bytes `states`, id `idHi * 2^32 + idLo` (the caller's random draw): decides it
    /// as `step` does a hit (the decision in the output buffer) and answers as `step` does.
    /// `reservationOf` then gives the reservation's token, or `undefined` when denied.
    #[wasm_bindgen(js_name = reserveStep)]
    pub fn reserve_step(
        &mut self,
        states: &Array,
        now: f64,
        cost: f64,
        id_hi: u32,
        id_lo: u32,
    ) -> Result<JsValue, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let raw = raw_states(states)?;
        let id = (u64::from(id_hi) << 32) | u64::from(id_lo);
        let inner = &self.inner;
        let step =
            cas_step(inner, &raw, &mut |st| inner.reserve(st, now, cost, id)).map_err(|(_, e)| decode_error(&e))?;
        let d = step.result.map_err(|e| check_error(&e, &self.inner))?;
        self.out.write(&d);
        Ok(self.written(&step.states, step.changed))
    }

    /// The token of the reservation a `reserveStep` that admitted made for `keys` (`idHi`,
    /// `idLo` and `cost` as given to it).
    #[wasm_bindgen(js_name = reservationOf)]
    pub fn reservation_of(&self, keys: Vec<String>, cost: f64, id_hi: u32, id_lo: u32) -> Result<String, JsValue> {
        let estimate = cost_from(cost)?;
        let id = (u64::from(id_hi) << 32) | u64::from(id_lo);
        Ok(Reservation { id, estimate, policy: String::new(), keys }.to_token())
    }

    /// The keys a reservation token names (throws `invalid_reservation`): the keys to read.
    #[wasm_bindgen(js_name = reservationKeys)]
    pub fn reservation_keys(&self, token: &str) -> Result<Vec<String>, JsValue> {
        Ok(Reservation::from_token(token).map_err(|e| settle_error(&e))?.keys)
    }

    /// The compare-and-swap step of settling `token` with the `actual` cost over the keys'
    /// bytes: the keys' figures after it in the output buffer, `[refunded, charged, forgiven,
    /// keys]` from `lastSettled`, and the bytes as `step` answers them. Throws
    /// `unknown_reservation` (over these bytes) or `invalid_reservation`, changing nothing.
    #[wasm_bindgen(js_name = settleStep)]
    pub fn settle_step(&mut self, states: &Array, now: f64, token: &str, actual: f64) -> Result<JsValue, JsValue> {
        let now = now_from_ms(now)?;
        let actual = actual_from(actual)?;
        let r = Reservation::from_token(token).map_err(|e| settle_error(&e))?;
        let raw = raw_states(states)?;
        let inner = &self.inner;
        let step = cas_step(inner, &raw, &mut |st| inner.settle(st, now, r.id, r.estimate, actual))
            .map_err(|(_, e)| decode_error(&e))?;
        let s: Settled = step.result.map_err(|e| settle_error(&e))?;
        self.out.write(&s.decision);
        self.settled = Some(settled_figures(&s, &r.keys));
        Ok(self.written(&step.states, step.changed))
    }

    /// `[refunded, charged, forgiven, keys]` of the last `settleStep`.
    #[wasm_bindgen(js_name = lastSettled)]
    pub fn last_settled(&self) -> Option<Array> {
        self.settled.clone()
    }
}
