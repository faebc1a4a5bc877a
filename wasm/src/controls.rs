//! `Controls`: a limiter's allow and deny lists and shadow mode (docs/vocabulary.md), parsed by
//! the core's spec parser (`tollgate::spec::parse_controls`, the Worker's `POLICIES` parser, so
//! the same mistake gets the same `code` and `field`) and matched by the core
//! (`tollgate::access`). The lists are the limiter's module's only (the `full` feature): the
//! lite module has shadow mode and refuses `allowList`/`denyList` with a `TypeError` naming the
//! full entry, leaving out the lists' parser and matcher (core::net's address parser).

#[cfg(feature = "full")]
use alloc::{string::String, vec::Vec};
#[cfg(feature = "full")]
use js_sys::Float64Array;
#[cfg(feature = "full")]
use tollgate::access::{check_keys, Listed};
#[cfg(feature = "full")]
use tollgate::answer::listed_figures;
use tollgate::answer::shadow_admits;
#[cfg(feature = "full")]
use tollgate::spec::{parse_controls, ControlSpec};
use wasm_bindgen::prelude::*;

use crate::errors::spec_error;
use crate::spec::Js;
#[cfg(feature = "full")]
use crate::time::{ms_ceil, now_from_ms};

#[cfg(feature = "full")]
#[wasm_bindgen]
pub struct Controls(ControlSpec);

/// The lite module's controls: shadow mode only.
#[cfg(not(feature = "full"))]
#[wasm_bindgen]
pub struct Controls {
    shadow: bool,
}

#[cfg(not(feature = "full"))]
const LITE_NO_LISTS: &str =
    "tollgate/lite has no allowList or denyList; for the lists, use RateLimiter from \"tollgate\" or \"tollgate/limiter\"";

#[cfg(feature = "full")]
#[wasm_bindgen]
impl Controls {
    /// The controls of a limiter's `options` (`shadow`, `allowList`, `denyList`; the rest is
    /// left alone); throws the core's spec error for a bad one.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Controls, JsValue> {
        parse_controls(&Js(options)).map(Controls).map_err(|e| spec_error(&e))
    }

    #[wasm_bindgen(getter)]
    pub fn shadow(&self) -> bool {
        self.0.shadow
    }

    /// Whether either list holds anything (without, no hit needs `listed`).
    #[wasm_bindgen(getter)]
    pub fn lists(&self) -> bool {
        !(self.0.allow.is_empty() && self.0.deny.is_empty())
    }

    /// `"denyList"`, `"allowList"` or undefined for a hit on `keys` from the client address
    /// `ip` (an HTTP edge's; undefined otherwise): the core's `check_keys`.
    pub fn listed(&self, keys: Vec<String>, ip: Option<String>) -> Option<String> {
        check_keys(&self.0.allow, &self.0.deny, &keys, ip.as_deref()).map(|l| l.reason().into())
    }

    /// A listed hit's figures (`tollgate::answer::Answer::listed`) at `now` under a first limit
    /// of `limit`: `[allowed (1 or 0), limit, remaining, resetAt, retryAfter]`, the first five
    /// numbers of the decision summary; `deny`: on the deny list, else the allow list.
    #[wasm_bindgen(js_name = listedFigures)]
    pub fn listed_figures(&self, deny: bool, limit: f64, now: f64) -> Result<Float64Array, JsValue> {
        let now = now_from_ms(now)?;
        let listed = if deny { Listed::Deny } else { Listed::Allow };
        let limit = if limit > 0.0 { limit as u64 } else { 0 };
        let d = listed_figures(listed, limit, now);
        let out = [f64::from(u8::from(d.allowed)), d.limit as f64, d.remaining as f64, ms_ceil(d.reset_at), ms_ceil(d.retry_after)];
        Ok(Float64Array::from(&out[..]))
    }

    /// Shadow mode's answer to a hit enforcement `allowed` or not
    /// (`tollgate::answer::Answer::shadowed`): whether it is admitted (always, in shadow mode;
    /// enforcement's answer without it). Its `wouldAllow` is enforcement's `allowed`.
    #[wasm_bindgen(js_name = shadowAllowed)]
    pub fn shadow_allowed(&self, allowed: bool) -> bool {
        if self.0.shadow { shadow_admits(allowed) } else { allowed }
    }
}

#[cfg(not(feature = "full"))]
#[wasm_bindgen]
impl Controls {
    /// `shadow` of a limiter's `options` (the core's parser); a `TypeError` for `allowList` or
    /// `denyList`, which only the limiter's module has.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Controls, JsValue> {
        use tollgate::spec::{Input, Value};
        let options = Js(options);
        for field in ["allowList", "denyList"] {
            if !matches!(options.get(field), Value::Missing) {
                return Err(js_sys::TypeError::new(LITE_NO_LISTS).into());
            }
        }
        let shadow = tollgate::spec::parse_shadow(&options).map_err(|e| spec_error(&e))?;
        Ok(Controls { shadow })
    }

    #[wasm_bindgen(getter)]
    pub fn shadow(&self) -> bool {
        self.shadow
    }

    /// Always false: the lite module has no lists (so nothing calls a `listed`, which it leaves
    /// out).
    #[wasm_bindgen(getter)]
    pub fn lists(&self) -> bool {
        false
    }

    /// Shadow mode's answer to a hit enforcement `allowed` or not, as the full module's.
    #[wasm_bindgen(js_name = shadowAllowed)]
    pub fn shadow_allowed(&self, allowed: bool) -> bool {
        if self.shadow { shadow_admits(allowed) } else { allowed }
    }
}
