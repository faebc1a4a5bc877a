//! `BlockedCache`: the core's blocked-key cache (`tollgate::blocked`) over encoded states, for
//! the npm Redis store (redis-limiter.js). The Worker's isolates use the same cache over decoded
//! states, so there is one implementation of what is kept, for how long it is trusted and which
//! entry goes first when it is full; the decision over a cached state is the core's policy
//! (`StorePolicy`) in both.

use alloc::vec::Vec;
use js_sys::Uint8Array;
use tollgate::blocked::BlockedCache as CoreCache;
use tollgate::Nanos;
use wasm_bindgen::prelude::*;

use crate::time::{nanos_of_valid_ms, now_in_range};

/// A local clock reading as the core's time; one out of range reads as the epoch, which no
/// entry confirmed at a valid time is trusted at (so a bad clock only costs round trips).
fn at(ms: f64) -> Nanos {
    if now_in_range(ms) {
        nanos_of_valid_ms(ms)
    } else {
        Nanos::ZERO
    }
}

/// Redis key -> the bytes Redis last held there (`None`: absent) and when it confirmed them.
#[wasm_bindgen]
pub struct BlockedCache {
    inner: CoreCache<Option<Vec<u8>>>,
}

#[wasm_bindgen]
impl BlockedCache {
    /// At most `max_entries` keys; a denial over an entry stands for `trust_ms` after Redis
    /// confirmed it (0: never without asking). Both are checked by the caller (whole, >= 0).
    #[wasm_bindgen(constructor)]
    pub fn new(max_entries: u32, trust_ms: f64) -> BlockedCache {
        let trust = if now_in_range(trust_ms) { nanos_of_valid_ms(trust_ms) } else { Nanos::MAX };
        BlockedCache { inner: CoreCache::new(max_entries as usize, trust) }
    }

    /// Redis holds `state` (`null`: nothing) for `key`, as confirmed at `at_ms` (local clock).
    pub fn remember(&mut self, key: &str, state: Option<Vec<u8>>, at_ms: f64) {
        self.inner.remember(key, state, at(at_ms));
    }

    /// The bytes last confirmed for `key`: a `Uint8Array`, `null` (absent in Redis) or
    /// `undefined` (not cached).
    pub fn state(&self, key: &str) -> JsValue {
        match self.inner.state(key) {
            None => JsValue::UNDEFINED,
            Some(None) => JsValue::NULL,
            Some(Some(bytes)) => Uint8Array::from(bytes.as_slice()).into(),
        }
    }

    /// Whether a denial over `key`'s cached bytes may stand at `now_ms` without asking Redis.
    pub fn trusted(&self, key: &str, now_ms: f64) -> bool {
        self.inner.trusted(key, at(now_ms))
    }

    /// Forgets `key` (a reset, or a failure after which what Redis holds is unknown); named as
    /// a `Map`'s in JavaScript.
    #[wasm_bindgen(js_name = delete)]
    pub fn forget(&mut self, key: &str) {
        self.inner.forget(key);
    }

    /// How many keys are cached.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }
}
