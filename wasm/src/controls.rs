//! `Controls`: a limiter's allow and deny lists and shadow mode (docs/vocabulary.md), parsed by
//! the core's spec parser (`tollgate::spec::parse_controls`, the Worker's `POLICIES` parser, so
//! the same mistake gets the same `code` and `field`) and matched by the core
//! (`tollgate::access`). In the limiter's module, and so the lite module: every limiter has them.

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::access::check_keys;
use tollgate::spec::{parse_controls, ControlSpec};
use wasm_bindgen::prelude::*;

use crate::errors::spec_error;
use crate::spec::Js;

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
