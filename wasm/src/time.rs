//! Time and costs at the JavaScript edge: epoch milliseconds (fractions allowed) in, the
//! core's nanoseconds inside, milliseconds rounded up out (waiting `retryAfter` ms is enough).

use tollgate::quota::MAX_LIMIT;
use tollgate::Nanos;
use wasm_bindgen::JsValue;

use crate::errors::number_error;

/// The latest `now` accepted: year 2500 in epoch ms, far inside u64 nanoseconds (the error
/// message spells it out: no float formatting in the module, see docs/benchmarks.md).
const MAX_NOW_MS: f64 = 16_725_225_600_000.0;

pub fn now_from_ms(ms: f64) -> Result<Nanos, JsValue> {
    if !(0.0..=MAX_NOW_MS).contains(&ms) {
        return Err(number_error(
            "now must be epoch milliseconds between 0 and 16725225600000, got ",
            ms,
        ));
    }
    // Whole milliseconds exactly (ms * 1e6 as one f64 would lose ~256 ns at today's epoch),
    // then the fraction to the nearest nanosecond.
    let whole = ms.trunc();
    let frac = ((ms - whole) * 1e6).round() as u64;
    Ok(Nanos::new(whole as u64 * 1_000_000 + frac))
}

pub fn cost_from(cost: f64) -> Result<u64, JsValue> {
    if !(1.0..=MAX_LIMIT as f64).contains(&cost) || cost.fract() != 0.0 {
        return Err(number_error(
            "cost must be a whole number of at least 1, got ",
            cost,
        ));
    }
    Ok(cost as u64)
}

pub fn ms_ceil(t: Nanos) -> f64 {
    t.as_millis_ceil() as f64
}
