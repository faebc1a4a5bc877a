//! `Policy.headers`: the core's header writer (`tollgate::headers`) for a decision JavaScript
//! holds. The decision comes back in as numbers (`lib/header-record.js` lays them out), is rebuilt
//! as the core's `PolicyDecision` and written by `Policy::headers`, so the package writes
//! exactly what the Worker writes.

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::headers::{HeaderOptions, Standard};
use tollgate::layout::{DECISION_PAIR, HEADER_RECORD};
use tollgate::policy::{LimitDecision, LimitRef};
use tollgate::{Decision, Nanos, PolicyDecision};
use wasm_bindgen::prelude::*;

use crate::errors::type_error;
use crate::policy::Policy;

/// Per pair of the record: the core's `DECISION_PAIR`.
const PAIR: usize = DECISION_PAIR.len();
/// Before the pairs: the core's `HEADER_RECORD`.
const HEAD: usize = HEADER_RECORD.len();

/// Milliseconds the JS layer holds (whole or not, never negative) as nanoseconds; a figure
/// out of range becomes 0 or the largest time rather than a panic.
fn ns(ms: f64) -> Nanos {
    let ns = ms * 1e6;
    Nanos::new(if ns > 0.0 { ns as u64 } else { 0 })
}

fn decision(r: &[f64]) -> Decision {
    Decision {
        allowed: r[0] == 1.0,
        limit: r[1] as u64,
        remaining: r[2] as u64,
        reset_at: ns(r[3]),
        retry_after: ns(r[4]),
        next_unit_after: ns(r[5]),
    }
}

#[wasm_bindgen]
impl Policy {
    /// The headers of the decision laid out in `record`, as `name\nvalue\n...`. `standard`:
    /// 6, 7, 8, 10 or 0 (none); `jitter`: a draw in `[0, 1)`, or -1 for none.
    pub fn headers(
        &self,
        record: &[f64],
        standard: u32,
        legacy: bool,
        partition_key: Option<String>,
        jitter: f64,
    ) -> Result<String, JsValue> {
        let pairs = record.get(HEAD - 1).map_or(0, |&n| n as usize);
        if pairs == 0 || pairs.checked_mul(PAIR).and_then(|n| n.checked_add(HEAD)) != Some(record.len()) {
            return Err(type_error("headers: not a decision of this limiter"));
        }
        let limits = self.inner.limits().len();
        let mut list = Vec::with_capacity(pairs);
        for p in record[HEAD..].chunks_exact(PAIR) {
            let at = LimitRef { key: p[0] as usize, limit: p[1] as usize };
            if at.limit >= limits {
                return Err(type_error("headers: not a decision of this limiter"));
            }
            list.push(LimitDecision { at, decision: decision(&p[2..]) });
        }
        let summary = decision(&record[1..7]);
        let pd = PolicyDecision {
            allowed: summary.allowed,
            decision: summary,
            binding: LimitRef { key: record[7] as usize, limit: record[8] as usize },
            limits: list.into(),
            penalty: false,
        };
        let standard = match standard {
            6 => Some(Standard::Draft6),
            7 => Some(Standard::Draft7),
            8 => Some(Standard::Draft8),
            10 => Some(Standard::Draft10),
            _ => None,
        };
        let options = HeaderOptions {
            standard,
            legacy,
            partition_key: partition_key.as_deref(),
            jitter: (jitter >= 0.0).then_some(jitter),
        };
        let mut out = String::new();
        self.inner.write_headers(&mut out, &pd, ns(record[0]), &options);
        Ok(out)
    }
}
