//! Core errors as JavaScript exceptions: `TypeError` for a value of the wrong kind (an unknown
//! name, a string that does not parse), `RangeError` for a number out of range. Messages are
//! built without `core::fmt` (`msg.rs`, the core's `tollgate::messages`): it cost the modules kilobytes.
//! Every function here is `#[cold]`: an error path, kept out of the callers' hot code.

use alloc::string::String;
use core::convert::Infallible;
use js_sys::{RangeError, TypeError};
use tollgate::limiter::{KeyError, LimitError};
use tollgate::policy::Policy;
use tollgate::{CheckError, ConfigError, DecodeError};
use wasm_bindgen::JsValue;

use crate::msg::{push_u64, Msg};
use tollgate::messages::{check_message, config_message, decode_message, key_field, key_message};

#[cold]
pub fn type_error(msg: &str) -> JsValue {
    TypeError::new(msg).into()
}

#[cold]
pub fn range_error(msg: &str) -> JsValue {
    RangeError::new(msg).into()
}

/// A spec error (`tollgate::spec`) as a JavaScript error: `RangeError` for a value out of
/// range, `TypeError` otherwise, with the core's `code` and `field` as properties, so a
/// program branches on the same code the Worker answers for the same mistake.
#[cold]
pub fn spec_error(e: &tollgate::spec::SpecError) -> JsValue {
    let err =
        if e.code == tollgate::spec::code::OUT_OF_RANGE { range_error(&e.message) } else { type_error(&e.message) };
    with_code(err, e.code, &e.field)
}

/// `err` with the `code` and `field` the Worker answers for the same mistake (docs/vocabulary.md).
#[cold]
pub fn with_code(err: JsValue, code: &str, field: &str) -> JsValue {
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(code));
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("field"), &JsValue::from_str(field));
    err
}

/// A configuration error, prefixed with where it happened (e.g. `limits[1]`). Options are the
/// spec parser's (`spec_error`); this is for the core's own errors past it, which only the
/// extras module meets (`Synced`, the pacer), so the limiter's module does not call it.
#[cold]
#[allow(dead_code)]
pub fn config_error(at: &str, e: &ConfigError) -> JsValue {
    let text = config_message(e);
    let msg = if at.is_empty() { text } else { Msg::new(at).s(": ").s(&text).0 };
    match e {
        ConfigError::InvalidQuota { .. }
        | ConfigError::UnknownAlgorithm { .. }
        | ConfigError::UnsupportedOption { .. }
        | ConfigError::InvalidLimitName { .. }
        | ConfigError::DuplicateLimitName { .. } => type_error(&msg),
        _ => range_error(&msg),
    }
}

/// A cost that can never be decided, naming the limit of `policy` it does not fit.
#[cold]
pub fn check_error(e: &CheckError, policy: &Policy) -> JsValue {
    let message = match e {
        CheckError::CostExceedsCapacity { cost, capacity, limit } => {
            let name = policy.limits().get(*limit).map_or("", |l| l.name());
            Msg::new("cost ").n(*cost).s(" can never fit: the capacity of limit ").q(name).s(" is ").n(*capacity).0
        }
        other => check_message(other),
    };
    with_code(range_error(&message), "invalid_cost", "cost")
}

/// A limiter call's error over `policy`: its keys (`single`: one key was given) or its cost.
#[cold]
pub fn limit_error(e: LimitError<Infallible>, policy: &Policy, single: bool) -> JsValue {
    match e {
        LimitError::Key(k) => key_error(&k, single),
        LimitError::Check(c) => check_error(&c, policy),
        LimitError::Store(never) => match never {},
    }
}

/// State bytes that are not this policy's state.
#[cold]
pub fn decode_error(e: &DecodeError) -> JsValue {
    // The code and field the Worker's `PUT /v1/keys/{policy}/{key}/state` answers for the same bytes.
    with_code(type_error(&Msg::new("state: ").s(&decode_message(e)).0), "invalid_state", "state")
}

/// The core's key error (`tollgate::messages::key_message`, its code and field) as a `RangeError`.
#[cold]
pub fn key_error(e: &KeyError, single: bool) -> JsValue {
    with_code(range_error(&key_message(e, single)), e.code(), &key_field(e, single))
}

/// `RangeError` "<message><number>". Numbers from JavaScript are shown without Rust's float
/// formatting, which alone would be a large part of the module (docs/benchmarks.md, wasm size).
#[cold]
pub fn number_error(message: &str, n: f64) -> JsValue {
    at_index(message, n, "")
}

/// `RangeError` "<before><number><after>", without `format!`.
#[cold]
pub fn at_index(before: &str, n: f64, after: &str) -> JsValue {
    let mut msg = String::from(before);
    push_number(&mut msg, n);
    msg.push_str(after);
    range_error(&msg)
}

/// Appends a whole number (or `NaN`/a fraction, as JavaScript would show it, via js-sys).
#[cold]
pub fn push_number(msg: &mut String, n: f64) {
    // Below 1e15 (and not NaN) the conversion to i64 is exact for whole numbers only.
    if n.abs() < 1e15 && n == n as i64 as f64 {
        if n < 0.0 {
            msg.push('-');
        }
        push_u64(msg, n.abs() as u64);
    } else {
        let s: String = js_sys::Number::from(n).to_string_with_radix(10).map(String::from).unwrap_or_default();
        msg.push_str(&s);
    }
}
