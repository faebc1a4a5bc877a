//! `Policy`: a validated policy (its limits, what they advertise), which a `Limiter` decides
//! by. Deciding over encoded states, for stores that keep state elsewhere (Redis), is the
//! extras module's `StorePolicy` (`wasm-extras/src/store_policy.rs`).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use js_sys::Float64Array;
use tollgate::policy::Policy as CorePolicy;
use tollgate::Algorithm;
use wasm_bindgen::prelude::*;

#[cfg(feature = "full")]
use crate::spec::build_policy;

#[wasm_bindgen]
pub struct Policy {
    pub(crate) inner: CorePolicy,
}

#[wasm_bindgen]
impl Policy {
    /// The policy the options describe (the core's schema; see `wasm-common/src/spec.rs`); `fields` are the
    /// caller's own options beside the limits.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue, fields: Vec<String>) -> Result<Policy, JsValue> {
        #[cfg(feature = "full")]
        let inner = build_policy(options, &fields)?;
        // The lite module refuses `limits` and the penalty's options before parsing, so it
        // carries neither parser.
        #[cfg(not(feature = "full"))]
        let inner = crate::spec::build_one_limit(options, &fields, crate::LITE_ONE_LIMIT)?;
        Ok(Policy { inner })
    }

    #[wasm_bindgen(getter, js_name = longestWindowMs)]
    pub fn longest_window_ms(&self) -> f64 {
        self.inner.longest_window().as_millis_ceil() as f64
    }

    #[wasm_bindgen(getter)]
    pub fn mergeable(&self) -> bool {
        self.inner.is_mergeable()
    }

    /// The penalty's block (`blockDuration`) in ms, 0 for none: as the core parsed it, so that
    /// JavaScript never reads the duration's text itself (a synced store refuses a penalty).
    /// Not in the lite module, whose policies have no penalty and which no store uses.
    #[cfg(feature = "full")]
    #[wasm_bindgen(getter, js_name = blockDurationMs)]
    pub fn block_duration_ms(&self) -> f64 {
        self.inner.block_duration().as_millis_ceil() as f64
    }

    /// Per limit: the quota and window (ms) advertised in the `RateLimit-Policy` header.
    #[wasm_bindgen(js_name = advertised)]
    pub fn advertised(&self) -> Float64Array {
        let mut v = Vec::new();
        for l in self.inner.limits() {
            let (q, w) = l.algorithm().advertised_quota();
            v.push(q as f64);
            v.push(w.as_millis_ceil() as f64);
        }
        Float64Array::from(v.as_slice())
    }

    /// The limits' names, in order.
    #[wasm_bindgen(js_name = limitNames)]
    pub fn limit_names(&self) -> Vec<String> {
        self.inner.limits().iter().map(|l| l.name().to_string()).collect()
    }
}

/// Only the full module's stores compare configurations (the Worker store), so the lite
/// module does not carry the encoder.
#[cfg(feature = "full")]
#[wasm_bindgen]
impl Policy {
    /// The core's encoding of this policy's configuration (`tollgate::policy_codec`): two
    /// configurations that decide alike encode alike, so a store can tell whether a limiter's
    /// options are the policy a remote service decides by.
    #[wasm_bindgen(js_name = configBytes)]
    pub fn config_bytes(&self) -> Vec<u8> {
        tollgate::policy_codec::encode_policy(&self.inner)
    }
}
