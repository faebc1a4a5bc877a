//! `Limiter`: the core's policy over the keys of one limiter, behind `RateLimiter`.
//!
//! One key is passed as a string (`limit`), several as an array (`limitKeys`, not in the lite
//! module: see the crate's `full` feature). The decision is written to the output buffer
//! (`wasm-common/src/out.rs`); the call itself returns only `allowed`.
//!
//! Every key lives in one compact store (`key_store.rs`). One key under one limit is decided
//! in place: in its record for a fixed-size state (the common case, without allocating), in
//! its slab state for the sliding log and sliding buckets (`Policy::check` and `peek` of
//! that one state). Several keys at once, or several limits, are the core's `Policy` (all or
//! nothing) inside one `Store::update` of the compact store (`PolicyStore`,
//! `policy_states.rs`), as over the core's `MemoryStore`. Refunds act on each key on its own
//! (`refund_one`).

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::keyed::FreshTable;
use tollgate::limiter::{validate_keys, LimitError};
#[cfg(feature = "full")]
use tollgate::policy::PolicyDecision;
use tollgate::policy::{Policy as CorePolicy, PolicyState};
#[cfg(feature = "full")]
use tollgate::Store;
use tollgate::{Decision, Nanos};
use wasm_bindgen::prelude::*;

#[cfg(feature = "full")]
use crate::batch::{BatchOut, Handles};
use crate::errors::{check_error, decode_error};
use crate::key_store::{holds, length_byte, CompactKeyed};
use crate::out::Out;
use crate::policy::Policy;
#[cfg(feature = "full")]
use crate::policy_states::PolicyStore;
use crate::time::{cost_from, cost_in_range, nanos_of_valid_ms, now_from_ms, now_in_range};

#[wasm_bindgen]
pub struct Limiter {
    pub(crate) policy: CorePolicy,
    /// Every key's state.
    pub(crate) store: CompactKeyed,
    pub(crate) out: Out,
    /// Interned keys for `limitHandle`/`limitBatch` (see `batch.rs`).
    #[cfg(feature = "full")]
    pub(crate) handles: Handles,
    /// Where the last batch's summaries are.
    #[cfg(feature = "full")]
    pub(crate) batch: BatchOut,
    /// The record of the key the last successful `limitKey` decided, for `limitAgain`.
    pub(crate) last: Option<LastKey>,
    /// The error of the last hot call that answered `FAILED`, for `takeError`.
    pub(crate) failure: Option<JsValue>,
    /// The keys' open reservations (`reservations.rs`).
    #[cfg(feature = "full")]
    pub(crate) ledgers: crate::reservations::Ledgers,
}

/// A key's record as `limitKey` left it: valid for `limitAgain` while the store's generation
/// is the same and the record is live with the key's length byte (the rule of a key handle's
/// cached offset, see `key_store.rs`), so a removed, evicted or moved record is never used.
#[derive(Clone, Copy)]
pub(crate) struct LastKey {
    offset: u32,
    generation: u32,
    length_byte: u8,
}

/// What the hot calls (`limitKey`, `limitAgain`, `limitHandle`) answer: one number, where a
/// `Result` would cross the boundary as three values for the glue to unpack on every call.
/// 0 or 1: denied or allowed, the decision in the output buffer.
/// `NOT_REMEMBERED` (`limitAgain` only): nothing decided; the caller then passes the key
/// (`limitKey`), which also answers any error.
pub(crate) const NOT_REMEMBERED: u32 = 2;
/// `FAILED`: nothing decided; the error is for `takeError`.
pub(crate) const FAILED: u32 = 3;

/// Where `batch.rs` finds it; `wasm-common`'s `errors.rs` holds it so the extras module has it too.
pub(crate) use crate::errors::key_error;

impl Limiter {
    pub(crate) fn error(&self, e: LimitError<core::convert::Infallible>, single: bool) -> JsValue {
        let policy = &self.policy;
        let name = |i: usize| policy.limits().get(i).map_or("", |l| l.name()).into();
        match e {
            LimitError::Key(k) => key_error(&k, single),
            LimitError::Check(c) => check_error(&c, name),
            LimitError::Store(never) => match never {},
        }
    }

    /// A hot call's answer (see `FAILED`): the error, if any, kept for `takeError`.
    #[inline(always)]
    pub(crate) fn status(&mut self, r: Result<bool, JsValue>) -> u32 {
        match r {
            Ok(allowed) => allowed as u32,
            Err(e) => self.failed(e),
        }
    }

    #[cold]
    pub(crate) fn failed(&mut self, e: JsValue) -> u32 {
        self.failure = Some(e);
        FAILED
    }

    /// Throws when `cost` can never fit the policy's limits.
    pub(crate) fn validate_cost(&self, cost: u64) -> Result<(), JsValue> {
        self.policy.validate_cost(cost).map_err(|e| self.error(e.into(), false))
    }

    /// A hit (or a peek) for one key: decided in place, in the records for a one-limit policy
    /// with a fixed-size state, in the key's slab state for the sliding log and buckets; the
    /// general path only for several limits.
    fn run_one(&mut self, key: &str, now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        self.run_one_remembering(key, now, cost, peek, false)
    }

    /// `run_one`; with `remember`, a hit decided in the key's record leaves that record in
    /// `last` for `limitAgain`.
    fn run_one_remembering(
        &mut self,
        key: &str,
        now: f64,
        cost: f64,
        peek: bool,
        remember: bool,
    ) -> Result<bool, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        self.validate_cost(cost)?;
        let d = if let Some(keyed) = self.store.words_mut() {
            let r = if peek {
                keyed.peek(key, now, cost)
            } else {
                keyed.check_key(key, now, cost).map(|(d, offset)| {
                    if remember {
                        self.last = offset.map(|offset| LastKey {
                            offset,
                            generation: keyed.generation,
                            length_byte: length_byte(key.as_bytes()),
                        });
                    }
                    d
                })
            };
            r.map_err(|e| self.error(e.into(), true))?
        } else if let Some(d) = self.decide_single(key, now, cost, peek) {
            d?
        } else {
            return self.run_general(&[key], now, cost, peek);
        };
        self.out.write_one(&d);
        Ok(d.allowed)
    }

    /// The hot calls' shared step (`limitAgain`, `limitHandle`): a hit on the record at `offset`
    /// that `generation` of the store gave a key of `length_byte` (a remembered or cached
    /// record), when that record is still the key's and the time and cost are good: decided,
    /// written to the output buffer, and whether it was allowed. `None`, deciding nothing,
    /// in every other case (a removed or moved record, a bad time or cost, a cost that never
    /// fits): the caller then takes its general path, which answers those, as it does when it
    /// has no record. The record comes as three numbers rather than an `Option` of them, which
    /// would be passed through memory.
    #[inline(never)] // one copy for both callers: the module's size budget
    pub(crate) fn decide_record(
        &mut self,
        offset: u32,
        generation: u32,
        length_byte: u8,
        now_ms: f64,
        cost: f64,
    ) -> Option<bool> {
        if !now_in_range(now_ms) || !cost_in_range(cost) {
            return None;
        }
        let keyed = self.store.words_mut()?;
        if keyed.generation != generation || !holds(&keyed.chunks, offset, length_byte) {
            return None;
        }
        // In range, so the signed conversion, one machine instruction (see `time.rs`).
        let cost = cost as i64 as u64;
        // One unit fits every limit (none admits less), so only other costs are checked.
        if cost != 1 && self.policy.validate_cost(cost).is_err() {
            return None;
        }
        let d = keyed.check_entry_inline(offset, nanos_of_valid_ms(now_ms), cost).ok()?;
        self.out.write_one_inline(&d);
        Some(d.allowed)
    }

    #[cfg(feature = "full")]
    fn run(&mut self, keys: &[&str], now: f64, cost: f64, peek: bool) -> Result<bool, JsValue> {
        if let [key] = keys {
            return self.run_one(key, now, cost, peek);
        }
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        validate_keys(keys).map_err(|e| key_error(&e, false))?;
        self.validate_cost(cost)?;
        self.run_general(keys, now, cost, peek)
    }

    /// The core policy's decision for the keys (validated), written to the output buffer.
    #[cfg(feature = "full")]
    fn run_general(&mut self, keys: &[&str], now: Nanos, cost: u64, peek: bool) -> Result<bool, JsValue> {
        let d = self.decide_policy(keys, now, cost, peek)?;
        self.out.write(&d);
        Ok(d.allowed)
    }

    /// The lite module decides one key under one limit, always in place: its `Policy`
    /// refuses several limits, so nothing reaches here.
    #[cfg(not(feature = "full"))]
    fn run_general(&mut self, _: &[&str], _: Nanos, _: u64, _: bool) -> Result<bool, JsValue> {
        Err(crate::errors::range_error("this policy needs the full tollgate module"))
    }

    /// A hit (or with `peek` a peek, which changes nothing) for one key of a one-limit policy
    /// without a penalty whose states are in the slab (the sliding log and sliding buckets):
    /// the core's `check` or `peek` of the key's state alone, in place. `None` for other
    /// policies.
    pub(crate) fn decide_single(
        &mut self,
        key: &str,
        now: Nanos,
        cost: u64,
        peek: bool,
    ) -> Option<Result<Decision, JsValue>> {
        // A penalty's decision is more than the limit's figures (`Out::write` tells it).
        let one_pair = |p: &CorePolicy| p.limits().len() == 1 && p.block_duration() == Nanos::ZERO;
        let policy = &self.policy;
        if !one_pair(policy) {
            return None; // several limits: no lookup here, `decide_policy` does its own
        }
        let r = self.store.on_slab_state(key, now, |slot| {
            // Asked again beside the call: the compiler then knows the core's one-pair path
            // is the one taken, and the lite module links no general path.
            if !one_pair(policy) {
                return None;
            }
            let states = core::slice::from_mut(slot);
            Some(if peek { policy.peek(states, now, cost) } else { policy.check(states, now, cost) })
        })??;
        Some(r.map(|d| d.decision).map_err(|e| self.error(e.into(), false)))
    }

    /// The core policy's decision for the keys (validated keys and cost), all or nothing.
    #[cfg(feature = "full")]
    pub(crate) fn decide_policy(
        &mut self,
        keys: &[&str],
        now: Nanos,
        cost: u64,
        peek: bool,
    ) -> Result<PolicyDecision, JsValue> {
        let policy = &self.policy;
        let mut store = PolicyStore { keys: &mut self.store, policy };
        let r = store
            .update(keys, now, &mut |states| {
                if peek {
                    policy.peek(states, now, cost)
                } else {
                    policy.check(states, now, cost)
                }
            })
            .map_err(|e| decode_error(&e))?;
        r.map_err(|e| self.error(e.into(), false))
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
        let cap = (max_keys >= 1.0).then_some(max_keys as usize);
        Limiter {
            store: CompactKeyed::for_policy(&policy.inner, cap),
            policy: policy.inner.clone(),
            out: Out::new(),
            #[cfg(feature = "full")]
            handles: Handles::default(),
            #[cfg(feature = "full")]
            batch: BatchOut::default(),
            last: None,
            failure: None,
            #[cfg(feature = "full")]
            ledgers: Default::default(),
        }
    }

    #[wasm_bindgen(getter, js_name = outPtr)]
    pub fn out_ptr(&self) -> u32 {
        self.out.ptr()
    }

    /// Decides and counts a hit for one key.
    pub fn limit(&mut self, key: &str, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run_one(key, now, cost, false)
    }

    /// `limit` for the JS layer's string path: the same decision, and the key's record is
    /// remembered for `limitAgain` (forgotten first, so a call that fails leaves none).
    /// Answers 0, 1 or `FAILED` (see `FAILED`).
    #[wasm_bindgen(js_name = limitKey)]
    pub fn limit_key(&mut self, key: &str, now: f64, cost: f64) -> u32 {
        self.last = None;
        let r = self.run_one_remembering(key, now, cost, false, true);
        self.status(r)
    }

    /// `limit` for the key of the last successful `limitKey` again, without the string
    /// crossing into wasm (a hot key): 1 or 0 for allowed or not, with the decision in the
    /// output buffer as `limit` writes it; `NOT_REMEMBERED`, deciding and counting nothing,
    /// when no record is remembered or it is no longer the key's (removed, evicted, moved),
    /// and for a bad time or cost: then the caller calls `limitKey`, which decides by the
    /// key or fails as `limit` would.
    #[wasm_bindgen(js_name = limitAgain)]
    pub fn limit_again(&mut self, now: f64, cost: f64) -> u32 {
        let Some(l) = self.last else {
            return NOT_REMEMBERED;
        };
        match self.decide_record(l.offset, l.generation, l.length_byte, now, cost) {
            Some(allowed) => allowed as u32,
            None => NOT_REMEMBERED,
        }
    }

    /// The error of the last call that answered `FAILED` (taken: a second call gets `undefined`).
    #[wasm_bindgen(js_name = takeError)]
    pub fn take_error(&mut self) -> JsValue {
        self.failure.take().unwrap_or(JsValue::UNDEFINED)
    }

    /// Decides and counts a hit for several keys, all or nothing.
    #[cfg(feature = "full")]
    #[wasm_bindgen(js_name = limitKeys)]
    pub fn limit_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&refs(&keys), now, cost, false)
    }

    pub fn peek(&mut self, key: &str, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run_one(key, now, cost, true)
    }

    #[cfg(feature = "full")]
    #[wasm_bindgen(js_name = peekKeys)]
    pub fn peek_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&refs(&keys), now, cost, true)
    }

    /// Gives back `cost` units to every key, never beyond fresh.
    #[wasm_bindgen(js_name = refundKeys)]
    pub fn refund_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<(), JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let keys = refs(&keys);
        validate_keys(&keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        // Each key on its own, as the core policy's refund does over several: a refund is
        // not all or nothing (it only ever gives back).
        for key in keys {
            self.store.refund_one(&self.policy, key, now, cost).map_err(|e| decode_error(&e))?;
        }
        Ok(())
    }

    /// Forgets the keys.
    #[wasm_bindgen(js_name = resetKeys)]
    pub fn reset_keys(&mut self, keys: Vec<String>) -> Result<(), JsValue> {
        let keys = refs(&keys);
        validate_keys(&keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        for k in keys {
            self.store.reset(k);
            #[cfg(feature = "full")]
            self.ledgers.forget(k);
        }
        Ok(())
    }

    /// The key's encoded state (`undefined`: fresh).
    #[wasm_bindgen(js_name = exportState)]
    pub fn export_state(&self, key: &str) -> Result<Option<Vec<u8>>, JsValue> {
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        let bytes = self.store.export(&self.policy, key).map_err(|e| decode_error(&e))?;
        #[cfg(feature = "full")]
        let bytes = self.ledgers.export(&self.policy, key, bytes);
        Ok(bytes)
    }

    /// Replaces the key's state with `state` (`undefined`: fresh), after validating it
    /// against the policy; on error nothing changes.
    #[wasm_bindgen(js_name = importState)]
    pub fn import_state(&mut self, key: &str, state: Option<Vec<u8>>) -> Result<(), JsValue> {
        validate_keys(&[key]).map_err(|e| key_error(&e, true))?;
        #[allow(unused_mut)]
        let mut state = match state {
            None => None,
            Some(bytes) => {
                let s = PolicyState::decode(&bytes).map_err(|e| decode_error(&e))?;
                self.policy.restore(s).map_err(|e| decode_error(&e))?
            }
        };
        #[cfg(feature = "full")]
        self.ledgers.import(&self.policy, key, &mut state);
        self.store.set(key, state);
        Ok(())
    }

    /// Every key holding state.
    pub fn keys(&self) -> Vec<String> {
        self.store.keys()
    }

    /// How many keys hold state.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.store.len() as u32
    }

    /// How many keys the `maxKeys` cap has evicted.
    #[wasm_bindgen(getter)]
    pub fn evictions(&self) -> f64 {
        self.store.evictions() as f64
    }

    /// Drops every key that is fresh at `now`; returns how many.
    pub fn prune(&mut self, now: f64) -> Result<u32, JsValue> {
        let now = now_from_ms(now)?;
        #[cfg(feature = "full")]
        self.ledgers.prune(now);
        Ok(self.store.prune(now) as u32)
    }
}
