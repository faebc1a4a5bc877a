//! `StoreRetry`: the core's store protocol retry policy (`tollgate::store_protocol`) for the
//! Redis store's compare-and-swap loop: the attempt cap and the backoff after lost races, with
//! the store's contention estimates kept between calls. The JS loop only performs what it says.

use tollgate::store_protocol::{Contention, Retry, Wait, DEFAULT_MAX_ATTEMPTS};
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct StoreRetry {
    max_attempts: u32,
    contention: Contention,
}

#[wasm_bindgen]
impl StoreRetry {
    /// A compare-and-swap store's retry policy giving up after `max_attempts` lost races in a
    /// row (0: the core's default).
    #[wasm_bindgen(constructor)]
    pub fn new(max_attempts: u32) -> StoreRetry {
        let max = if max_attempts == 0 { DEFAULT_MAX_ATTEMPTS } else { max_attempts };
        StoreRetry { max_attempts: max, contention: Contention::default() }
    }

    /// How many lost races in a row end in contention.
    #[wasm_bindgen(getter, js_name = maxAttempts)]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Records swap attempt `attempt` (1 for the first in a row), which took `ms` and `lost`
    /// or not; after a lost one, the pause before deciding again over the bytes the store
    /// answered (ms, 0: at once), or -1: give up (contention). `jitter`: a uniform draw in
    /// [0, 1).
    pub fn after(&mut self, attempt: u32, ms: f64, lost: bool, jitter: f64) -> f64 {
        self.contention.record(Nanos::new((ms.max(0.0) * 1e6) as u64), lost);
        if !lost {
            return 0.0;
        }
        let jitter = (jitter.clamp(0.0, 1.0) * 4_294_967_295.0) as u32;
        match Retry::cas(self.max_attempts).after_loss(attempt, Nanos::ZERO, jitter, &self.contention) {
            Wait::Now => 0.0,
            Wait::Pause(p) => p.as_nanos() as f64 / 1e6,
            Wait::GiveUp { .. } => -1.0,
        }
    }
}
