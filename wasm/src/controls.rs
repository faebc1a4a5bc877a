//! `Controls`: a limiter's allow and deny lists and shadow mode (docs/vocabulary.md), parsed by
//! the core's spec parser (`tollgate::spec::parse_controls`, the Worker's `POLICIES` parser, so
//! the same mistake gets the same `code` and `field`) and matched by the core
//! (`tollgate::access`). In the limiter's module, and so the lite module: every limiter has them.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Float64Array;
use tollgate::access::{check_keys, Listed};
use tollgate::answer::{listed_figures, shadow_admits};
use tollgate::spec::{parse_controls, ControlSpec};
use wasm_bindgen::prelude::*;

use crate::errors::spec_error;
use crate::spec::Js;
use crate::time::{ms_ceil, now_from_ms};

#[wasm_bindgen]
pub struct Controls(ControlSpec);

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
}

#[wasm_bindgen]
impl Controls {
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
