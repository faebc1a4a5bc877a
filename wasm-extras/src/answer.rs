//! The answers of a store that could not decide, made by the core (`tollgate::answer`) and
//! written to the output buffer as a decision: the failure mode's over a fresh key's figures
//! and contention's over the last figures the store answered with (`unavailable`), and the
//! failure mode's before any limit is known (`unknownDegraded`). JavaScript reads them
//! (`lib/decision.js`) and only names the reason (`degraded`).

use js_sys::{Array, Float64Array};
use tollgate::answer::Answer;
use tollgate::counted::counted;
use tollgate::policy::{LimitRef, PolicyDecision};
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use tollgate::layout::{ANSWER_CONTENTION, ANSWER_OPEN};

use crate::store_policy::StorePolicy;
use crate::time::{ms_ceil, now_from_ms};

/// Whole milliseconds, never negative, as nanoseconds (a wait the failure mode gives).
fn wait_of(ms: f64) -> Nanos {
    Nanos::from_millis(if ms > 0.0 { ms as u64 } else { 0 })
}

#[wasm_bindgen]
impl StorePolicy {
    /// The answer of a store that could not decide, over this policy's peek of `states` at
    /// `now` for `cost` (`null` each: fresh keys), written to the output buffer: `answer` is
    /// `ANSWER_OPEN` (the failure mode admits: `Answer::degraded`), `ANSWER_CLOSED` (it denies
    /// for at least `waitMs`) or `ANSWER_CONTENTION` (a denial waiting at least `waitMs`:
    /// `Answer::contention`). Throws like `peek` for states that are not this policy's.
    pub fn unavailable(&mut self, states: &Array, now: f64, cost: f64, answer: u32, wait_ms: f64) -> Result<(), JsValue> {
        let d = self.peek_decision(states, now, cost)?;
        let wait = wait_of(wait_ms);
        let a = if answer == ANSWER_CONTENTION { Answer::contention(d, wait) } else { Answer::degraded(d, answer == ANSWER_OPEN, wait, true) };
        self.out.write(&a.decision);
        Ok(())
    }
}

/// The failure mode's answer at `now` before any limit is known (the core's figures of none,
/// `tollgate::counted`): `[allowed (1 or 0), limit, remaining, resetAt, retryAfter]`, the
/// first five numbers of the decision summary; admitted when `open`, otherwise denied for at
/// least `closedRetryMs`.
#[wasm_bindgen(js_name = unknownDegraded)]
pub fn unknown_degraded(open: bool, now: f64, closed_retry_ms: f64) -> Result<Float64Array, JsValue> {
    let now = now_from_ms(now)?;
    let figures = counted(0, 0, now, now);
    let none = PolicyDecision {
        allowed: figures.allowed,
        decision: figures,
        binding: LimitRef { key: 0, limit: 0 },
        limits: alloc::vec::Vec::new().into(),
        penalty: false,
    };
    let d = Answer::degraded(none, open, wait_of(closed_retry_ms), false).decision.decision;
    let out = [f64::from(u8::from(d.allowed)), d.limit as f64, d.remaining as f64, ms_ceil(d.reset_at), ms_ceil(d.retry_after)];
    Ok(Float64Array::from(&out[..]))
}
