//! `validateKeys`: the in-memory limiter's key checks for stores that decide elsewhere (the
//! Redis store, in both of its modes). In the limiter's module because the Redis store's
//! default mode needs nothing else from the extras module (`wasm-extras/`).

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::limiter::validate_keys;
use wasm_bindgen::prelude::*;

use crate::errors::key_error;

/// Throws the same `RangeError` the in-memory limiter gives for keys that cannot be decided
/// (empty, longer than 256 bytes, more than 8, repeated).
#[wasm_bindgen(js_name = validateKeys)]
pub fn validate_keys_js(keys: Vec<String>) -> Result<(), JsValue> {
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    validate_keys(&refs).map_err(|e| key_error(&e, keys.len() == 1))
}
