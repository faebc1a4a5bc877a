//! `describeState(options, state, now)`: what one key's exported state says at `now`, through
//! the core's `tollgate::describe` (the algorithm's own roll-forward, refill and expiry), for
//! the playground's readout of the state that decided each hit.
//!
//! The answer is a flat `Float64Array` (no object building in wasm: smaller), its first
//! number the algorithm's index in `Kind::ALL`, then per algorithm (times in epoch ms):
//!
//! ```text
//! 0 fixed window            start end count limit
//! 1 fixed window first-hit  start end count limit
//! 2 sliding log             count limit (at cost)*          entries still counted, oldest first
//! 3 sliding window          start end current previous weightedPrevious count limit
//! 4 sliding buckets         oldestStart precision count limit counts*   oldest bucket first
//! 5 token bucket            tokens capacity refillAmount interval nextRefillAt
//! 6 gcra                    tat emissionInterval tolerance burst room
//! ```

use alloc::vec::Vec;
use js_sys::{Float64Array, Uint8Array};
use tollgate::describe::{describe, StateView};
use tollgate::policy::PolicyState;
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::errors::decode_error;
use crate::spec::build_policy;
use crate::time::now_from_ms;

/// Epoch ms as JavaScript writes them: whole ms exact, then the fraction (one division of the
/// nanoseconds would be off by a few hundred nanoseconds at today's epoch).
fn ms(t: Nanos) -> f64 {
    let ns = t.as_nanos();
    (ns / 1_000_000) as f64 + (ns % 1_000_000) as f64 / 1e6
}

/// The view of the first limit of `options` over `state` (the bytes `RateLimiter.export`
/// gives; `null`/`undefined`: a fresh key) at `now` (epoch ms).
#[wasm_bindgen(js_name = describeState)]
pub fn describe_state(options: JsValue, state: Option<Uint8Array>, now: f64) -> Result<Float64Array, JsValue> {
    let policy = build_policy(options, &[])?;
    let now = now_from_ms(now)?;
    let decoded = match state {
        Some(bytes) => {
            let s = PolicyState::decode(&bytes.to_vec()).map_err(|e| decode_error(&e))?;
            policy.validate_state(&s).map_err(|e| decode_error(&e))?;
            Some(s)
        }
        None => None,
    };
    let slot = decoded.as_ref().and_then(|s| s.slots().first().cloned().flatten());
    let view = describe(policy.limits()[0].algorithm(), slot.as_ref(), now);
    let mut out: Vec<f64> = Vec::with_capacity(8);
    match view {
        StateView::FixedWindow { start, end, count, limit } => {
            out.extend([0.0, ms(start), ms(end), count as f64, limit as f64])
        }
        StateView::FixedWindowFirstHit { start, end, count, limit } => {
            out.extend([1.0, ms(start), ms(end), count as f64, limit as f64])
        }
        StateView::SlidingLog { entries, count, limit } => {
            out.extend([2.0, count as f64, limit as f64]);
            for e in entries {
                out.extend([ms(e.at), e.cost as f64]);
            }
        }
        StateView::SlidingWindow { start, end, current, previous, weighted_previous, count, limit } => out.extend([
            3.0,
            ms(start),
            ms(end),
            current as f64,
            previous as f64,
            weighted_previous as f64,
            count as f64,
            limit as f64,
        ]),
        StateView::SlidingBuckets { oldest_start, precision, counts, count, limit } => {
            out.extend([4.0, ms(oldest_start), ms(precision), count as f64, limit as f64]);
            out.extend(counts.into_iter().map(|c| c as f64));
        }
        StateView::TokenBucket { tokens, capacity, refill_amount, interval, next_refill_at } => {
            out.extend([5.0, tokens as f64, capacity as f64, refill_amount as f64, ms(interval), ms(next_refill_at)])
        }
        StateView::Gcra { tat, emission_interval, tolerance, burst, room } => {
            out.extend([6.0, ms(tat), ms(emission_interval), ms(tolerance), burst as f64, room as f64])
        }
        // The live leases' expiries after the slot count (docs/concurrency.md).
        #[cfg(feature = "concurrency")]
        StateView::Concurrency { leases, limit } => {
            out.extend([7.0, leases.len() as f64, limit as f64]);
            out.extend(leases.iter().map(|l| ms(l.expires_at)));
        }
    }
    Ok(Float64Array::from(&out[..]))
}
