//! `durationMs`: a duration option around a limit, written as a string, read by the core's
//! grammar (`wasm-common`'s `duration_text_ms`). In the limiter's module (and so the lite
//! module) because every limiter's `waitFor` reads `maxWait` with it, and the Redis and Worker
//! stores, which import this module for `validateKeys` too, read `syncRate` and `blockedCache`.

use wasm_bindgen::prelude::*;

/// `holder[field]`, a string such as `"250ms"` or `"1s"`, in whole milliseconds, rounded up;
/// throws the core's spec error (`code`, `field`) for a string that is not a duration, zero,
/// or above 366 days.
#[wasm_bindgen(js_name = durationMs)]
pub fn duration_ms(holder: JsValue, field: &str) -> Result<f64, JsValue> {
    crate::spec::duration_text_ms(holder, field)
}
