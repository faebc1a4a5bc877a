//! Reserve and settle at the JavaScript edge (`tollgate::reserve`, docs/reserve.md): the
//! actual cost in, the settlement's errors and figures out, alike in both modules (the
//! in-memory limiter's and the Redis store's).

use js_sys::Array;
use tollgate::reserve::{SettleError, Settled};
use wasm_bindgen::JsValue;

use crate::errors::{type_error, with_code};
use crate::msg::Msg;
use crate::time::{is_whole, num};

/// A settlement's actual cost: a whole number from 0 (`invalid_cost`, field `actual`).
pub fn actual_from(actual: f64) -> Result<u64, JsValue> {
    if !((0.0..=tollgate::quota::MAX_LIMIT as f64).contains(&actual) && is_whole(actual)) {
        let err = crate::errors::number_error("actual must be a whole number from 0 to 9007199254740991, got ", actual);
        return Err(with_code(err, "invalid_cost", "actual"));
    }
    Ok(actual as u64)
}

/// A settlement's error, with its code (`tollgate::reserve::CODES`) and the field `reservation`:
/// a `TypeError` for a token that does not decode, an `Error` for one that is not open.
#[cold]
pub fn settle_error(e: &SettleError) -> JsValue {
    let err = match e {
        SettleError::InvalidReservation(why) => type_error(&Msg::new("invalid reservation: ").s(why).0),
        _ => js_sys::Error::new(
            "the reservation is not open: settled already, or its key was reset, expired or dropped it",
        )
        .into(),
    };
    with_code(err, e.code(), "reservation")
}

/// `[refunded, charged, forgiven]` of a settlement, then the keys it settled (their decision is
/// in the output buffer).
pub fn settled_figures(s: &Settled, keys: &[alloc::string::String]) -> Array {
    let out = Array::new();
    for n in [s.refunded, s.charged, s.forgiven] {
        out.push(&JsValue::from_f64(num(n)));
    }
    let names = Array::new();
    for k in keys {
        names.push(&JsValue::from_str(k));
    }
    out.push(&names);
    out
}
