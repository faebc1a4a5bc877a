//! `Limiter`: the core's in-memory keyed limiter behind `RateLimiter`.
//!
//! One key is passed as a string (`limit`), several as an array (`limitKeys`). The decision
//! is written to the output buffer (`out.rs`); the call itself returns only `allowed`.
//!
//! A policy of one limit with a fixed-size state (the common case) keeps its states in the
//! compact key store (`key_store.rs`), which decides in place without allocating; several
//! keys at once still go through the core's `Policy` (all or nothing) over the same states.
//! Several limits, and the sliding log and sliding buckets, use the core's `Limiter` over a
//! `MemoryStore`.

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::limiter::{validate_keys, LimitError};
use tollgate::policy::{Policy as CorePolicy, PolicyState};
use tollgate::{Limiter as CoreLimiter, MemoryStore};
use wasm_bindgen::prelude::*;

use crate::batch::{BatchOut, Handles};
use crate::errors::{check_error, decode_error};
use crate::key_store::CompactKeyed;
use crate::out::Out;
use crate::policy::Policy;
use crate::time::{cost_from, now_from_ms};

#[wasm_bindgen]
pub struct Limiter {
    pub(crate) inner: CoreLimiter<MemoryStore>,
    /// `Some` when the policy has one limit with a fixed-size state (every algorithm but the
    /// sliding log and sliding buckets): then every state lives here, not in `inner`.
    pub(crate) compact: Option<CompactKeyed>,
    pub(crate) out: Out,
    /// Interned keys for `limitHandle`/`limitBatch` (see `batch.rs`).
    pub(crate) handles: Handles,
    /// Where the last batch's summaries are.
    pub(crate) batch: BatchOut,
}

/// Where `batch.rs` finds it; the shared `errors.rs` holds it so the extras module has it too.
pub(crate) use crate::errors::key_error;

impl Limiter {
    pub(crate) fn error(&self, e: LimitError<core::convert::Infallible>, single: bool) -> JsValue {
        let policy = self.inner.policy();
        let name = |i: usize| policy.limits().get(i).map_or("", |l| l.name()).into();
        match e {
            LimitError::Key(k) => key_error(&k, single),
            LimitError::Check(c) => check_error(&c, name),
            LimitError::Store(never) => match never {},
        }
    }

    /// Throws when `cost` can never fit the policy's limits.
    pub(crate) fn validate_cost(&self, cost: u64) -> Result<(), JsValue> {
        self.inner.policy().validate_cost(cost).map_err(|e| self.error(e.into(), false))
    }

    fn run(&mut self, keys: &[&str], now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        if self.compact.is_some() {
            validate_keys(keys).map_err(|e| key_error(&e, keys.len() == 1))?;
            self.inner.policy().validate_cost(cost).map_err(|e| self.error(e.into(), false))?;
            if let ([key], Some(keyed)) = (keys, self.compact.as_mut()) {
                let r = if peek { keyed.peek(key, now, cost) } else { keyed.check(key, now, cost) };
                let d = r.map_err(|e| self.error(e.into(), true))?;
                self.out.write_one(&d);
                return Ok(d.allowed);
            }
            return self.run_keyed_policy(keys, now, cost, peek);
        }
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

impl Limiter {
    /// Several keys under a one-limit policy: the core's `Policy` decides over the keyed
    /// states (all or nothing), which are then written back.
    fn run_keyed_policy(
        &mut self,
        keys: &[&str],
        now: tollgate::Nanos,
        cost: u64,
        peek: bool,
    ) -> Result<bool, JsValue> {
        let policy: &CorePolicy = self.inner.policy();
        let Some(keyed) = self.compact.as_mut() else {
            return Ok(false);
        };
        let mut states: Vec<Option<PolicyState>> = Vec::with_capacity(keys.len());
        for k in keys {
            let slot = keyed.state(k);
            states.push(policy.state_from_slots(alloc::vec![slot]).map_err(|e| decode_error(&e))?);
        }
        let r = if peek { policy.peek(&states, now, cost) } else { policy.check(&mut states, now, cost) };
        let d = match r {
            Ok(d) => d,
            Err(e) => return Err(check_error(&e, |i| policy.limits().get(i).map_or("", |l| l.name()).into())),
        };
        if !peek && d.allowed {
            for (k, st) in keys.iter().zip(states) {
                let slot = st.and_then(|s| s.into_slots().into_iter().next().flatten());
                keyed.set_state(k, slot);
            }
        }
        self.out.write(&d);
        Ok(d.allowed)
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
        let compact = match policy.inner.limits() {
            [one] => CompactKeyed::for_algorithm(*one.algorithm(), (max_keys >= 1.0).then_some(max_keys as usize)),
            _ => None,
        };
        Limiter {
            inner: CoreLimiter::new(policy.inner.clone(), store),
            compact,
            out: Out::new(),
            handles: Handles::default(),
            batch: BatchOut::default(),
        }
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
        if let Some(keyed) = self.compact.as_mut() {
            validate_keys(&refs(&keys)).map_err(|e| key_error(&e, single))?;
            for k in &keys {
                keyed.refund(k.as_str(), now, cost);
            }
            return Ok(());
        }
        self.inner.refund(&refs(&keys), now, cost).map_err(|e| self.error(e, single))
    }

    /// Forgets the keys.
    #[wasm_bindgen(js_name = resetKeys)]
    pub fn reset_keys(&mut self, keys: Vec<String>) -> Result<(), JsValue> {
        let single = keys.len() == 1;
        if let Some(keyed) = self.compact.as_mut() {
            validate_keys(&refs(&keys)).map_err(|e| key_error(&e, single))?;
            for k in &keys {
                keyed.reset(k.as_str());
            }
            return Ok(());
        }
        self.inner.reset(&refs(&keys)).map_err(|e| self.error(e, single))
    }

    /// The key's encoded state (`undefined`: fresh).
    #[wasm_bindgen(js_name = exportState)]
    pub fn export_state(&self, key: &str) -> Result<Option<Vec<u8>>, JsValue> {
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        if let Some(keyed) = &self.compact {
            let slot = keyed.state(key);
            let state = self.inner.policy().state_from_slots(alloc::vec![slot]).map_err(|e| decode_error(&e))?;
            return Ok(state.as_ref().map(PolicyState::encode));
        }
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
                self.inner.policy().state_from_slots(s.into_slots()).map_err(|e| decode_error(&e))?
            }
        };
        if let Some(keyed) = self.compact.as_mut() {
            keyed.set_state(key, state.and_then(|s| s.into_slots().into_iter().next().flatten()));
            return Ok(());
        }
        self.inner.store_mut().set(key, state);
        Ok(())
    }

    /// Every key holding state.
    pub fn keys(&self) -> Vec<String> {
        if let Some(keyed) = &self.compact {
            return keyed.keys();
        }
        self.inner.store().iter().map(|(k, _)| String::from(k)).collect()
    }

    /// How many keys hold state.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        if let Some(keyed) = &self.compact {
            return keyed.len() as u32;
        }
        self.inner.store().len() as u32
    }

    /// How many keys the `maxKeys` cap has evicted.
    #[wasm_bindgen(getter)]
    pub fn evictions(&self) -> f64 {
        if let Some(keyed) = &self.compact {
            return keyed.evictions() as f64;
        }
        self.inner.store().evictions() as f64
    }

    /// Drops every key that is fresh at `now`; returns how many.
    pub fn prune(&mut self, now: f64) -> Result<u32, JsValue> {
        let now = now_from_ms(now)?;
        if let Some(keyed) = self.compact.as_mut() {
            return Ok(keyed.prune(now) as u32);
        }
        Ok(self.inner.store_mut().prune(now) as u32)
    }
}
