//! The answers of a store that could not decide, made by the core (`tollgate::answer`) and
//! written to the output buffer as a decision: the failure mode's over a fresh key's figures
//! and contention's over the last figures the store answered with (`unavailable`); the failure
//! mode's before any limit is known is `countedDecision`'s (`counted.rs`). JavaScript reads them
//! (`lib/limiter/decision.js`) and only names the reason (`degraded`).

use js_sys::Array;
use tollgate::answer::deny;
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use tollgate::layout::{ANSWER_CLOSED, ANSWER_CONTENTION};

use crate::store_policy::StorePolicy;

/// Whole milliseconds, never negative, as nanoseconds (a wait the failure mode gives).
pub(crate) fn wait_of(ms: f64) -> Nanos {
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
        let mut d = self.peek_decision(states, now, cost)?;
        // The figures of `Answer::degraded` (open: the fresh figures as they are) and
        // `Answer::contention`, without building the answer around them.
        if answer == ANSWER_CLOSED || answer == ANSWER_CONTENTION {
            deny(&mut d, wait_of(wait_ms));
        }
        self.out.write(&d);
        Ok(())
    }
}
