//! `LeaseHolder`: the core's holder-side lease rules (`tollgate::lease_holder`) behind the
//! package's `LeasedPacer`. Which partitions count, from when and until when, is decided
//! here by the core; `pkg-template/lib/client/lease.js` owns the HTTP calls, timers and the queue.
//! Times are epoch ms at this edge (fractions allowed), nanoseconds inside.

use alloc::vec::Vec;
use tollgate::lease_holder::LeaseHolder as CoreHolder;
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::errors::{config_error, push_number, range_error};
use crate::msg::Msg;
use crate::time::now_from_ms;

#[wasm_bindgen]
pub struct LeaseHolder {
    inner: CoreHolder,
}

/// `RangeError` "<field><what><value>", the value as JavaScript shows it (no float formatting).
fn must_be(field: &str, what: &str, v: f64) -> JsValue {
    let mut msg = Msg::new(field).s(what).0;
    push_number(&mut msg, v);
    range_error(&msg)
}

fn duration_ms(field: &str, ms: f64) -> Result<Nanos, JsValue> {
    now_from_ms(ms).map_err(|_| must_be(field, " must be milliseconds of at least 0, got ", ms))
}

fn whole(field: &str, v: f64) -> Result<u64, JsValue> {
    if !(0.0..=9_007_199_254_740_991.0).contains(&v) || !crate::time::is_whole(v) {
        return Err(must_be(field, " must be a whole number of at least 0, got ", v));
    }
    Ok(v as u64)
}

#[wasm_bindgen]
impl LeaseHolder {
    /// A holder holding nothing; nothing starts later than `marginMs` before a lease's end.
    #[wasm_bindgen(constructor)]
    pub fn new(margin_ms: f64) -> Result<LeaseHolder, JsValue> {
        Ok(LeaseHolder { inner: CoreHolder::new(duration_ms("renewMargin", margin_ms)?) })
    }

    /// An answer to a grant sent at `sentMs`, received at `receivedMs`: `partitions` held,
    /// together `rate` units per `windowMs`, for `ttlMs`.
    pub fn granted(
        &mut self,
        sent_ms: f64,
        received_ms: f64,
        partitions: Vec<u32>,
        rate: f64,
        window_ms: f64,
        ttl_ms: f64,
    ) -> Result<(), JsValue> {
        let (sent, received) = (now_from_ms(sent_ms)?, now_from_ms(received_ms)?);
        let (window, ttl) = (duration_ms("window", window_ms)?, duration_ms("ttlMs", ttl_ms)?);
        let rate = whole("rate", rate)?;
        self.inner.granted(sent, received, &partitions, rate, window, ttl).map_err(|e| config_error("lease answer", &e))
    }

    /// The holder holds nothing any more.
    pub fn lost(&mut self) {
        self.inner.lost();
    }

    /// The rate a start at `atMs` may be paced to (0: none).
    #[wasm_bindgen(js_name = rateAt)]
    pub fn rate_at(&self, at_ms: f64) -> Result<f64, JsValue> {
        Ok(self.inner.rate_at(now_from_ms(at_ms)?) as f64)
    }

    /// The rate of every partition held, counted yet or not.
    #[wasm_bindgen(getter, js_name = heldRate)]
    pub fn held_rate(&self) -> f64 {
        self.inner.held_rate() as f64
    }

    /// Epoch ms (exclusive) from which nothing starts unless renewed; 0 when nothing is held.
    #[wasm_bindgen(getter, js_name = usableUntil)]
    pub fn usable_until(&self) -> f64 {
        self.inner.usable_until().as_millis_f64()
    }

    /// The lease's end on the holder's clock (request sent + TTL), epoch ms.
    #[wasm_bindgen(getter, js_name = leaseEnd)]
    pub fn lease_end(&self) -> f64 {
        self.inner.lease_end().as_millis_f64()
    }

    /// The next epoch ms after `nowMs` at which the usable rate changes by itself; 0 if none.
    #[wasm_bindgen(js_name = nextChange)]
    pub fn next_change(&self, now_ms: f64) -> Result<f64, JsValue> {
        Ok(self.inner.next_change(now_from_ms(now_ms)?).map_or(0.0, Nanos::as_millis_f64))
    }

    /// The partitions held (indices).
    #[wasm_bindgen(getter)]
    pub fn partitions(&self) -> Vec<u32> {
        self.inner.partitions()
    }

    /// The window the rates are per, ms (0 before the first grant).
    #[wasm_bindgen(getter, js_name = windowMs)]
    pub fn window_ms(&self) -> f64 {
        self.inner.window().as_millis_f64()
    }
}
