//! `servingOptions`: the options around the limits (a store's `failure`, `timeoutMs`,
//! `syncRate`, ...; a middleware's `statusCode`, header options, `ipv6Subnet`) parsed by the
//! core (`tollgate::spec::parse_around`, the parser of the Worker's `POLICIES`), so every npm
//! edge takes the same values and refuses the same mistake with the same `code`, `field` and
//! message. In the limiter's module only: `tollgate/lite` has no stores or middleware.

use js_sys::{Object, RangeError, Reflect};
use tollgate::spec::{parse_around, Edge};
use wasm_bindgen::prelude::*;

use crate::errors::{spec_error, with_code};
use crate::spec::Js;

/// Fields whose mistakes stay `RangeError`s whatever their code, as they were before the codes.
const RANGE_ERRORS: [&str; 2] = ["standardHeaders", "ipv6Subnet"];

/// `options` read as `edge` (`"worker"`, `"store"`, `"http"`, `"websocket"`) takes them: every
/// option around the limits at its value or default (`failure` by name, `standardHeaders` by
/// its draft's name, false for none; `ipv6Subnet` 128 for false); throws the core's error.
#[wasm_bindgen(js_name = servingOptions)]
pub fn serving_options(options: JsValue, edge: &str) -> Result<Object, JsValue> {
    let edge = Edge::named(edge).ok_or_else(|| JsValue::from(RangeError::new("unknown edge")))?;
    let a = parse_around(&Js(options), edge).map_err(|e| {
        if RANGE_ERRORS.contains(&e.field.as_str()) {
            with_code(RangeError::new(&e.message).into(), e.code, &e.field)
        } else {
            spec_error(&e)
        }
    })?;
    let out = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&out, &JsValue::from_str(k), &v);
    };
    let n = |x: u64| JsValue::from_f64(x as f64);
    set("failure", JsValue::from_str(edge.domain().failures[a.failure]));
    set("insurance", a.insurance.map_or(JsValue::UNDEFINED, JsValue::from_f64));
    set("timeoutMs", a.timeout_ms.map_or(JsValue::UNDEFINED, n));
    set("statusCode", n(a.status));
    set("blockedCacheMs", n(a.blocked_cache_ms));
    set("maxCachedKeys", n(a.max_cached_keys));
    set("closedRetryMs", n(a.closed_retry_ms));
    set("syncRate", JsValue::from_f64(a.sync_ms as f64));
    set("ipv6Subnet", n(a.ipv6_subnet));
    set("standardHeaders", a.headers.standard.map_or(JsValue::FALSE, |s| JsValue::from_str(s.name())));
    set("legacyHeaders", JsValue::from_bool(a.headers.legacy));
    set("partitionKey", JsValue::from_bool(a.headers.partition_key));
    set("jitter", JsValue::from_bool(a.headers.jitter));
    Ok(out)
}
