//! `countedDecision`: the core's decision over a count another store keeps
//! (`tollgate::counted`): an express-rate-limit `Store`'s total, the middleware's limit of 0,
//! and the figures of a policy not known yet.

use js_sys::Float64Array;
use tollgate::counted::{counted, standing};
use alloc::string::String;
use tollgate::{Decision, Nanos};
use wasm_bindgen::prelude::*;

use crate::time::{ms_ceil, nanos_of_valid_ms, now_from_ms, now_in_range};

/// The decision for a hit that brought a store's count to `used` under `limit` (both whole,
/// saturating; a count that is not a number is over any limit), in a window resetting at
/// `reset_at` (epoch ms; one out of range is `now`), judged at `now`: `[allowed (1 or 0),
/// limit, remaining, resetAt, retryAfter]`, the first five numbers of the decision summary
/// (`tollgate::layout::DECISION_SUMMARY`). `closed_retry_ms`, when it is a number (not
/// given: NaN), makes them the failure mode's denial over those figures, waiting at least that
/// long (`tollgate::answer::deny_figures`): the answer of a store that failed before any limit
/// is known.
#[wasm_bindgen(js_name = countedDecision)]
pub fn counted_decision(limit: f64, used: f64, reset_at: f64, now: f64, closed_retry_ms: f64) -> Result<Float64Array, JsValue> {
    let now = now_from_ms(now)?;
    let reset = if now_in_range(reset_at) { nanos_of_valid_ms(reset_at) } else { now };
    // Rounded up (no `ceil` without std): a fraction over the limit is over it.
    let whole = used as u64;
    let used = if used.is_nan() { u64::MAX } else { whole.saturating_add(u64::from((whole as f64) < used)) };
    let mut d = counted(limit as u64, used, reset, now);
    if closed_retry_ms >= 0.0 {
        tollgate::answer::deny_figures(&mut d, crate::answer::wait_of(closed_retry_ms));
    }
    let figures = [
        f64::from(u8::from(d.allowed)),
        d.limit as f64,
        d.remaining as f64,
        ms_ceil(d.reset_at),
        ms_ceil(d.retry_after),
    ];
    Ok(Float64Array::from(&figures[..]))
}

/// A peek's figures (`allowed` 1 or 0, `limit`, `remaining`, `resetAt` epoch ms) for a hit of
/// `cost` at `now`, as the key stands before that hit (`tollgate::counted::standing`):
/// `[remaining, ttl, ttlInSeconds]`, the ttl in ms (rounded up) and whole seconds (rounded up)
/// until the reset, 0 for a key holding nothing: @fastify/rate-limit's peek.
#[wasm_bindgen(js_name = standingFigures)]
pub fn standing_figures(allowed: f64, limit: f64, remaining: f64, reset_at: f64, now: f64, cost: f64) -> Result<Float64Array, JsValue> {
    let now = now_from_ms(now)?;
    let reset_at = if now_in_range(reset_at) { nanos_of_valid_ms(reset_at) } else { now };
    let peeked = Decision {
        allowed: allowed == 1.0,
        limit: limit as u64,
        remaining: remaining as u64,
        reset_at,
        retry_after: Nanos::ZERO,
        next_unit_after: Nanos::ZERO,
    };
    let s = standing(&peeked, cost as u64, now);
    let ttl = s.reset_at.saturating_sub(now);
    let figures = [s.remaining as f64, ms_ceil(ttl), ttl.as_nanos().div_ceil(1_000_000_000) as f64];
    Ok(Float64Array::from(&figures[..]))
}

/// The headers of a decision made before any limit was known (`countedDecision`'s with
/// `closed_retry_ms`, or its admission), as `name\nvalue` text: none for an admission, a
/// denial's `Retry-After` (`tollgate::headers::write_unknown_policy`). `retry_after_ms`: the
/// decision's wait; `jitter`: a draw in `[0, 1)`, or negative for none.
#[wasm_bindgen(js_name = unknownPolicyHeaders)]
pub fn unknown_policy_headers(allowed: bool, retry_after_ms: f64, jitter: f64) -> String {
    let summary = Decision {
        allowed,
        limit: 0,
        remaining: 0,
        reset_at: Nanos::ZERO,
        retry_after: crate::answer::wait_of(retry_after_ms),
        next_unit_after: Nanos::ZERO,
    };
    let options = tollgate::headers::HeaderOptions { jitter: (jitter >= 0.0).then_some(jitter), ..Default::default() };
    let mut out = String::new();
    tollgate::headers::write_unknown_policy(&mut out, &summary, &options);
    out
}
