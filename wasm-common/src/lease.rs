//! Concurrency leases at the JavaScript edge (`tollgate::concurrency`, docs/concurrency.md):
//! the lease's errors and figures out, alike in both modules (the in-memory limiter's and the
//! Redis store's).

use alloc::string::String;
use js_sys::Array;
use tollgate::concurrency::LeaseError;
use tollgate::Nanos;
use wasm_bindgen::JsValue;

use crate::errors::{type_error, with_code};
use crate::msg::Msg;

/// A lease error, with its code (`tollgate::concurrency::CODES`) and the field `lease`: a
/// `TypeError` for a token that does not decode, an `Error` for one that is not live.
#[cold]
pub fn lease_error(e: &LeaseError) -> JsValue {
    let err = match e {
        LeaseError::InvalidLease(why) => type_error(&Msg::new("invalid lease: ").s(why).0),
        _ => js_sys::Error::new("the lease is not live: released already, expired, or its key was reset").into(),
    };
    with_code(err, e.code(), "lease")
}

/// An expiry as milliseconds since the epoch, rounded down (a holder that renews by then
/// renews a live lease).
pub fn expiry_ms(t: Nanos) -> f64 {
    (t.as_nanos() / 1_000_000) as f64
}

/// A lease's 64-bit id from the caller's two random 32-bit halves; a draw of 0 (anonymous,
/// which no one can release) becomes 1.
pub fn lease_id(hi: u32, lo: u32) -> u64 {
    ((u64::from(hi) << 32) | u64::from(lo)).max(1)
}

/// `[first, keys]`: an answer's own value, then the keys it was about (their decision is in
/// the output buffer).
pub fn with_keys(first: JsValue, keys: &[String]) -> Array {
    let out = Array::new();
    out.push(&first);
    let names = Array::new();
    for k in keys {
        names.push(&JsValue::from_str(k));
    }
    out.push(&names);
    out
}
