//! `Pacer`: the core's client-side pacer behind the package's `Pacer`.
//!
//! Every schedule decision is the core's; this adapter only converts time (epoch ms at the
//! edge, nanoseconds inside) and turns errors into `TypeError`/`RangeError` naming the field.
//! The JavaScript layer (`pkg-template/lib/client/pacer.js`) normalises `{ rate, grain }` into the
//! strings taken here and owns the queue, the sleeping and the AbortSignals.

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::pacer::{Pacer as CorePacer, Signal};
use tollgate::quota::parse_duration;
use tollgate::{CheckError, Nanos, Quota};
use wasm_bindgen::prelude::*;

use tollgate::messages::check_message;
use crate::errors::{config_error, number_error, range_error};
use crate::msg::Msg;
use crate::time::{cost_from, ms_ceil, now_from_ms};

/// The grain used when none is given: 200 ms, or the whole window if shorter.
const DEFAULT_GRAIN: Nanos = Nanos::from_millis(200);

#[wasm_bindgen]
pub struct Pacer {
    inner: CorePacer,
}

fn parse_rate(rate: &str) -> Result<Quota, JsValue> {
    rate.parse::<Quota>().map_err(|e| config_error("rate", &e))
}

fn cost_error(e: &CheckError, per_grain: u64) -> JsValue {
    match e {
        // A distinct message (and, in lib/client/pacer.js, a distinct code): waiting never helps.
        CheckError::CostExceedsCapacity { cost, .. } => range_error(
            &Msg::new("cost ")
                .n(*cost)
                .s(" can never be paced: at most ")
                .n(per_grain)
                .s(" units are released per grain")
                .0,
        ),
        other => range_error(&Msg::new("cost: ").s(&check_message(other)).0),
    }
}

#[wasm_bindgen]
impl Pacer {
    /// `rate` as `"<limit>/<window>"` (e.g. `"100/s"`, `"500/5s"`); `grain` a duration such
    /// as `"200ms"`, or `""` for the default (200 ms, at most the window).
    #[wasm_bindgen(constructor)]
    pub fn new(rate: &str, grain_str: &str) -> Result<Pacer, JsValue> {
        let quota = parse_rate(rate)?;
        let grain = if grain_str.is_empty() {
            DEFAULT_GRAIN.min(quota.window())
        } else {
            parse_duration(grain_str).map_err(|e| config_error("grain", &e))?
        };
        if grain > quota.window() {
            return Err(range_error(
                &Msg::new("grain must be at most the rate's window (")
                    .n(quota.window().as_millis_ceil())
                    .s(" ms), got ")
                    .q(grain_str)
                    .s(" (")
                    .n(grain.as_millis_ceil())
                    .s(" ms)")
                    .0,
            ));
        }
        let inner = CorePacer::new(quota, grain).map_err(|e| config_error("grain", &e))?;
        Ok(Pacer { inner })
    }

    /// Reserves the earliest start for work of `cost` at `now` or later, on a whole epoch
    /// millisecond: JavaScript timers and clocks count milliseconds, so the start is recorded
    /// at the millisecond the work can actually begin. Recording the exact nanosecond and
    /// starting up to a millisecond later would let two starts one window apart in the core
    /// land less than a window apart at the service.
    pub fn reserve(&mut self, now: f64, cost: f64) -> Result<f64, JsValue> {
        let (now, cost) = (now_from_ms(now)?, cost_from(cost)?);
        let per_grain = self.inner.per_grain();
        let earliest = self.inner.peek(now, cost).map_err(|e| cost_error(&e, per_grain))?;
        // Sliding logs only free up as time passes, so what is admitted at `earliest` is
        // admitted on the millisecond after it too.
        let on_ms = Nanos::from_millis(earliest.as_millis_ceil());
        self.inner.reserve(on_ms, cost).map(ms_ceil).map_err(|e| cost_error(&e, per_grain))
    }

    /// When work of `cost` could start (epoch ms), reserving nothing.
    pub fn peek(&self, now: f64, cost: f64) -> Result<f64, JsValue> {
        let (now, cost) = (now_from_ms(now)?, cost_from(cost)?);
        self.inner.peek(now, cost).map(ms_ceil).map_err(|e| cost_error(&e, self.inner.per_grain()))
    }

    /// Gives back a reservation of `cost` that was never used.
    pub fn cancel(&mut self, now: f64, cost: f64) -> Result<(), JsValue> {
        let (now, cost) = (now_from_ms(now)?, cost_from(cost)?);
        self.inner.cancel(now, cost);
        Ok(())
    }

    /// Nothing starts before `until` (epoch ms).
    #[wasm_bindgen(js_name = pauseUntil)]
    pub fn pause_until(&mut self, until: f64) -> Result<(), JsValue> {
        let until = now_from_ms(until).map_err(|_| number_error("until must be epoch milliseconds, got ", until))?;
        self.inner.pause_until(until);
        Ok(())
    }

    /// Reads a service's response headers, flattened as `[name0, value0, name1, value1, ...]`
    /// (lib/client/pacer.js flattens `Headers`, records and pairs). Returns the epoch ms before which
    /// nothing starts when they asked for a pause, else 0.
    #[wasm_bindgen(js_name = observeHeaders)]
    pub fn observe_headers(&mut self, now: f64, flat: Vec<String>) -> Result<f64, JsValue> {
        let now = now_from_ms(now)?;
        let pairs = flat.chunks_exact(2).map(|p| (p[0].as_str(), p[1].as_str()));
        Ok(match self.inner.observe_headers(now, pairs) {
            Signal::PauseUntil(t) => ms_ceil(t),
            Signal::None => 0.0,
        })
    }

    /// Follows a new rate (e.g. the sum of leased partitions); what was scheduled still counts.
    #[wasm_bindgen(js_name = setRate)]
    pub fn set_rate(&mut self, rate: &str) -> Result<(), JsValue> {
        let quota = parse_rate(rate)?;
        self.inner.set_rate(quota).map_err(|e| config_error("rate", &e))
    }

    /// The rate being paced to, as `"<limit>/<window>"`.
    #[wasm_bindgen(getter)]
    pub fn rate(&self) -> String {
        let q = self.inner.quota();
        Msg::new("").n(q.limit()).s("/").n(q.window().as_nanos()).s("ns").0
    }

    /// Units released per grain: the largest cost one unit of work may have.
    #[wasm_bindgen(getter, js_name = maxCost)]
    pub fn max_cost(&self) -> f64 {
        self.inner.max_cost() as f64
    }
}
