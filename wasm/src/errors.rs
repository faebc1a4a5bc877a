//! Core errors as JavaScript exceptions: `TypeError` for a value of the wrong kind (an unknown
//! name, a string that does not parse), `RangeError` for a number out of range.

use alloc::format;
use alloc::string::{String, ToString};
use js_sys::{RangeError, TypeError};
use tollgate::limiter::{KeyError, MAX_KEYS_PER_HIT, MAX_KEY_LEN};
use tollgate::{CheckError, ConfigError, DecodeError};
use wasm_bindgen::JsValue;

pub fn type_error(msg: &str) -> JsValue {
    TypeError::new(msg).into()
}

pub fn range_error(msg: &str) -> JsValue {
    RangeError::new(msg).into()
}

/// A configuration error, prefixed with where it happened (e.g. `limits[1]`).
pub fn config_error(at: &str, e: &ConfigError) -> JsValue {
    let msg = if at.is_empty() { e.to_string() } else { format!("{at}: {e}") };
    match e {
        ConfigError::InvalidQuota { .. }
        | ConfigError::UnknownAlgorithm { .. }
        | ConfigError::UnsupportedOption { .. }
        | ConfigError::InvalidLimitName { .. }
        | ConfigError::DuplicateLimitName { .. } => type_error(&msg),
        _ => range_error(&msg),
    }
}

/// A cost that can never be decided, naming the limit it does not fit.
pub fn check_error(e: &CheckError, limit_name: impl Fn(usize) -> String) -> JsValue {
    match e {
        CheckError::CostExceedsCapacity { cost, capacity, limit } => range_error(&format!(
            "cost {cost} can never fit: the capacity of limit \"{}\" is {capacity}",
            limit_name(*limit)
        )),
        other => range_error(&other.to_string()),
    }
}

/// State bytes that are not this policy's state.
pub fn decode_error(e: &DecodeError) -> JsValue {
    type_error(&format!("state: {e}"))
}

/// Reads naturally for one key ("key ...") and for a list ("keys[2] ...").
pub(crate) fn key_error(e: &KeyError, single: bool) -> JsValue {
    let name = |i: &usize| {
        if single {
            String::from("key")
        } else {
            format!("keys[{i}]")
        }
    };
    range_error(&match e {
        KeyError::NoKeys => String::from("keys must hold at least one key"),
        KeyError::TooManyKeys { count } => {
            format!("keys holds {count} keys; at most {MAX_KEYS_PER_HIT} are allowed")
        }
        KeyError::Empty { index } => format!("{} must not be empty", name(index)),
        KeyError::TooLong { index, len } => {
            format!("{} is {len} bytes long; at most {MAX_KEY_LEN} are allowed", name(index))
        }
        KeyError::Duplicate { index } => format!("{} repeats an earlier key", name(index)),
    })
}

/// `RangeError` "<message><number>". Numbers from JavaScript are shown without Rust's float
/// formatting, which alone was 14 KB of the module (docs/benchmarks.md, wasm size).
pub fn number_error(message: &str, n: f64) -> JsValue {
    at_index(message, n, "")
}

/// `RangeError` "<before><number><after>", without `format!`.
pub fn at_index(before: &str, n: f64, after: &str) -> JsValue {
    let mut msg = String::from(before);
    push_number(&mut msg, n);
    msg.push_str(after);
    range_error(&msg)
}

/// Appends a whole number (or `NaN`/a fraction, as JavaScript would show it, via js-sys).
pub fn push_number(msg: &mut String, n: f64) {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        let mut v = n.abs() as u64;
        if n < 0.0 {
            msg.push('-');
        }
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        msg.push_str(core::str::from_utf8(&digits[i..]).unwrap_or(""));
    } else {
        let s: String = js_sys::Number::from(n).to_string_with_radix(10).map(String::from).unwrap_or_default();
        msg.push_str(&s);
    }
}
