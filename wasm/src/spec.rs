//! Builds a core policy from the limits the JavaScript layer normalised (`lib/options.js`
//! checks types and names fields; the core checks every value and range).

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::policy::{Limit, Policy};
use tollgate::quota::parse_duration;
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Quota};
use wasm_bindgen::JsValue;

use crate::errors::config_error;
use crate::msg::Msg;

/// One limit per index of the slices: its name, algorithm name, quota string (`"100/1s"`),
/// burst (0: none) and precision string (`""`: none).
pub fn build_policy(
    names: &[String],
    algorithms: &[String],
    quotas: &[String],
    bursts: &[f64],
    precisions: &[String],
) -> Result<Policy, JsValue> {
    let n = names.len();
    let mut limits = Vec::with_capacity(n);
    for (i, name) in names.iter().enumerate() {
        let at = if n > 1 { Msg::new("limits[").n(i as u64).s("]").0 } else { String::new() };
        let err = |e| config_error(&at, &e);
        let kind: Kind = algorithms.get(i).map_or("", |s| s.as_str()).parse().map_err(err)?;
        let quota: Quota = quotas.get(i).map_or("", |s| s.as_str()).parse().map_err(err)?;
        let burst = bursts.get(i).copied().unwrap_or(0.0);
        let precision = match precisions.get(i).map_or("", |s| s.as_str()) {
            "" => None,
            p => Some(parse_duration(p).map_err(err)?),
        };
        let spec = LimitSpec {
            burst: (burst > 0.0).then_some(burst as u64),
            precision,
            ..LimitSpec::new(kind, quota.limit(), quota.window())
        };
        let algorithm = AnyAlgorithm::from_spec(&spec).map_err(err)?;
        limits.push(Limit::new(name, algorithm).map_err(err)?);
    }
    Policy::new(limits).map_err(|e| config_error("", &e))
}
