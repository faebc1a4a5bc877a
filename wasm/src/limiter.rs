//! `Limiter`: the core's in-memory keyed limiter behind `RateLimiter`.
//!
//! One key is passed as a string (`limit`), several as an array (`limitKeys`). The decision
//! is written to the output buffer (`out.rs`); the call itself returns only `allowed`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use tollgate::limiter::{validate_keys, KeyError, LimitError, MAX_KEY_LEN, MAX_KEYS_PER_HIT};
use tollgate::policy::PolicyState;
use tollgate::{Limiter as CoreLimiter, MemoryStore};
use wasm_bindgen::prelude::*;

use crate::errors::{check_error, decode_error, range_error};
use crate::out::Out;
use crate::policy::Policy;
use crate::time::{cost_from, now_from_ms};

#[wasm_bindgen]
pub struct Limiter {
    inner: CoreLimiter<MemoryStore>,
    out: Out,
}

/// Reads naturally for one key ("key ...") and for a list ("keys[2] ...").
fn key_error(e: &KeyError, single: bool) -> JsValue {
    let name = |i: &usize| if single { String::from("key") } else { format!("keys[{i}]") };
    range_error(&match e {
        KeyError::NoKeys => String::from("keys must hold at least one key"),
        KeyError::TooManyKeys { count } => format!("keys holds {count} keys; at most {MAX_KEYS_PER_HIT} are allowed"),
        KeyError::Empty { index } => format!("{} must not be empty", name(index)),
        KeyError::TooLong { index, len } => {
            format!("{} is {len} bytes long; at most {MAX_KEY_LEN} are allowed", name(index))
        }
        KeyError::Duplicate { index } => format!("{} repeats an earlier key", name(index)),
    })
}

impl Limiter {
    fn error(&self, e: LimitError<core::convert::Infallible>, single: bool) -> JsValue {
        let policy = self.inner.policy();
        let name = |i: usize| policy.limits().get(i).map_or("", |l| l.name()).into();
        match e {
            LimitError::Key(k) => key_error(&k, single),
            LimitError::Check(c) => check_error(&c, name),
            LimitError::Store(never) => match never {},
        }
    }

    fn run(&mut self, keys: &[&str], now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let r = if peek { self.inner.peek(keys, now, cost) } else { self.inner.check(keys, now, cost) };
        match r {
            Ok(d) => {
                self.out.write(&d);
                Ok(d.allowed)
            }
            Err(e) => Err(self.error(e, keys.len() == 1)),
        }
    }
}

fn refs(keys: &[String]) -> Vec<&str> {
    keys.iter().map(String::as_str).collect()
}

#[wasm_bindgen]
impl Limiter {
    /// A limiter deciding by `policy` (copied), holding at most `max_keys` keys (0: no cap).
    #[wasm_bindgen(constructor)]
    pub fn new(policy: &Policy, max_keys: f64) -> Limiter {
        let mut store = MemoryStore::new();
        if max_keys >= 1.0 {
            store = store.with_max_keys(max_keys as usize);
        }
        Limiter { inner: CoreLimiter::new(policy.inner.clone(), store), out: Out::new() }
    }

    #[wasm_bindgen(getter, js_name = outPtr)]
    pub fn out_ptr(&self) -> u32 {
        self.out.ptr()
    }

    /// Decides and counts a hit for one key.
    pub fn limit(&mut self, key: &str, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&[key], now, cost, false)
    }

    /// Decides and counts a hit for several keys, all or nothing.
    #[wasm_bindgen(js_name = limitKeys)]
    pub fn limit_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&refs(&keys), now, cost, false)
    }

    pub fn peek(&mut self, key: &str, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&[key], now, cost, true)
    }

    #[wasm_bindgen(js_name = peekKeys)]
    pub fn peek_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&refs(&keys), now, cost, true)
    }

    /// Gives back `cost` units to every key, never beyond fresh.
    #[wasm_bindgen(js_name = refundKeys)]
    pub fn refund_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<(), JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let single = keys.len() == 1;
        self.inner.refund(&refs(&keys), now, cost).map_err(|e| self.error(e, single))
    }

    /// Forgets the keys.
    #[wasm_bindgen(js_name = resetKeys)]
    pub fn reset_keys(&mut self, keys: Vec<String>) -> Result<(), JsValue> {
        let single = keys.len() == 1;
        self.inner.reset(&refs(&keys)).map_err(|e| self.error(e, single))
    }

    /// The key's encoded state (`undefined`: fresh).
    #[wasm_bindgen(js_name = exportState)]
    pub fn export_state(&self, key: &str) -> Result<Option<Vec<u8>>, JsValue> {
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        Ok(self.inner.store().get(key).map(PolicyState::encode))
    }

    /// Replaces the key's state with `state` (`undefined`: fresh), after validating it
    /// against the policy; on error nothing changes.
    #[wasm_bindgen(js_name = importState)]
    pub fn import_state(&mut self, key: &str, state: Option<Vec<u8>>) -> Result<(), JsValue> {
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        let state = match state {
            None => None,
            Some(bytes) => {
                let s = PolicyState::decode(&bytes).map_err(|e| decode_error(&e))?;
                self.inner.policy().validate_state(&s).map_err(|e| decode_error(&e))?;
                self.inner.policy().state_from_slots(s.slots().to_vec()).map_err(|e| decode_error(&e))?
            }
        };
        self.inner.store_mut().set(key, state);
        Ok(())
    }

    /// Every key holding state.
    pub fn keys(&self) -> Vec<String> {
        self.inner.store().iter().map(|(k, _)| String::from(k)).collect()
    }

    /// How many keys hold state.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.inner.store().len() as u32
    }

    /// How many keys the `maxKeys` cap has evicted.
    #[wasm_bindgen(getter)]
    pub fn evictions(&self) -> f64 {
        self.inner.store().evictions() as f64
    }

    /// Drops every key that is fresh at `now`; returns how many.
    pub fn prune(&mut self, now: f64) -> Result<u32, JsValue> {
        let now = now_from_ms(now)?;
        Ok(self.inner.store_mut().prune(now) as u32)
    }
}
