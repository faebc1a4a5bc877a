//! `Limiter`: the core's policy over the keys of one limiter, behind `RateLimiter`.
//!
//! One key is passed as a string (`limit`, `limitKey`), several as an array (`limitKeys`, not
//! in the lite module: see the crate's `full` feature), an interned key as a handle and many
//! hits as a batch (`batch.rs`). The decision is written to the output buffer
//! (`wasm-common/src/out.rs`); the call itself returns only `allowed`.
//!
//! Every call decides through one function, `decide`, over one compact store of keys
//! (`key_store.rs`). One key under one limit is decided in place: in its record for a
//! fixed-size state (the common case, without allocating: the core's `decide::count` of the
//! concrete algorithm over the record's words), in its slab state for the sliding log and
//! sliding buckets (`Policy::check` and `peek` of that one state). Several keys at once, or
//! several limits, are the core's `Policy` (all or nothing) inside one `Store::update` of the
//! compact store (`PolicyStore`, `policy_states.rs`), as over the core's `MemoryStore`. The
//! store is specialised, the decision is not: the hot calls (`limitAgain`, `limitHandle`, a
//! batch's runs) only skip the lookup of a record they know. Refunds act on each key on its
//! own (`refund_one`).

use alloc::string::String;
use alloc::vec::Vec;
use tollgate::algorithms::GcraState;
use tollgate::decide::{self, Held, Read};
use tollgate::keyed::FreshTable;
use tollgate::limiter::{key_refs, validate_keys, LimitError};
#[cfg(feature = "full")]
use tollgate::policy::PolicyDecision;
use tollgate::policy::Policy as CorePolicy;
#[cfg(feature = "full")]
use tollgate::policy::PolicyState;
#[cfg(feature = "full")]
use tollgate::Store;
use tollgate::{Algorithm, AnyAlgorithm, CheckError, Decision, Nanos};
use wasm_bindgen::prelude::*;

#[cfg(feature = "full")]
use crate::batch_out::{BatchOut, Handles};
use crate::errors::{decode_error, limit_error};
use crate::key_store::{holds, length_byte, CompactKeyed};
use crate::out::Out;
use crate::policy::Policy;
#[cfg(feature = "full")]
use crate::policy_states::PolicyStore;
use crate::record_words::Words;
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
    pub(crate) ledgers: crate::ledgers::Ledgers,
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

/// A decision as `decide` gives it: one key's under one limit without a penalty (its pair is
/// the summary: `Out::write_one`), or the core policy's.
pub(crate) enum Decided {
    One(Decision),
    #[cfg(feature = "full")]
    Policy(PolicyDecision),
}

impl Decided {
    /// The summary (a batch's entry).
    pub(crate) fn summary(self) -> Decision {
        match self {
            Decided::One(d) => d,
            #[cfg(feature = "full")]
            Decided::Policy(pd) => Decision { allowed: pd.allowed, ..pd.decision },
        }
    }
}

impl Limiter {
    pub(crate) fn error(&self, e: LimitError<core::convert::Infallible>, single: bool) -> JsValue {
        limit_error(e, &self.policy, single)
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

    /// The one decision of every call: a hit (with `peek`, a peek, which changes nothing) for
    /// validated keys, time and cost. One key whose record holds its state (one limit with a
    /// fixed-size state) is decided in the record (`at`: the key's record, when the caller
    /// knows it); one key of a one-limit policy whose state is in the slab (the sliding log
    /// and buckets) by the core's `check` or `peek` of that state alone; anything else by the
    /// core's policy over the store, all or nothing. With the decision comes the key's record
    /// when one holds its state, for the caller to remember.
    pub(crate) fn decide(
        &mut self,
        keys: &[&str],
        at: Option<u32>,
        now: Nanos,
        cost: u64,
        peek: bool,
    ) -> Result<(Decided, Option<u32>), JsValue> {
        if let [key] = keys {
            if self.store.holds_words() {
                let r = in_records(&mut self.store, key, at, now, cost, peek);
                let (d, at) = r.map_err(|e| self.error(e.into(), true))?;
                return Ok((Decided::One(d), at));
            }
            if let Some(d) = self.decide_single(key, now, cost, peek) {
                return Ok((Decided::One(d?), None));
            }
        }
        self.decide_policy(keys, now, cost, peek).map(|d| (d, None))
    }

    /// Writes `d` to the output buffer; whether it admitted the hit.
    pub(crate) fn write(&mut self, d: Decided) -> bool {
        match d {
            Decided::One(d) => {
                self.out.write_one(&d);
                d.allowed
            }
            #[cfg(feature = "full")]
            Decided::Policy(pd) => {
                self.out.write(&pd);
                pd.allowed
            }
        }
    }

    /// A hit (or a peek) for the keys as JavaScript passes them: converted, validated,
    /// decided, written to the output buffer. With `remember`, a hit decided in the key's
    /// record leaves that record in `last` for `limitAgain`.
    fn run(&mut self, keys: &[&str], now: f64, cost: f64, peek: bool, remember: bool) -> Result<bool, JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        validate_keys(keys).map_err(|e| key_error(&e, keys.len() == 1))?;
        self.validate_cost(cost)?;
        let (d, at) = self.decide(keys, None, now, cost, peek)?;
        if let (true, Some(offset), [key]) = (remember, at, keys) {
            let length_byte = length_byte(key.as_bytes());
            self.last = Some(LastKey { offset, generation: self.store.generation, length_byte });
        }
        Ok(self.write(d))
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
        let keyed = &mut self.store;
        if !keyed.holds_words() || keyed.generation != generation || !holds(&keyed.chunks, offset, length_byte) {
            return None;
        }
        // In range, so the signed conversion, one machine instruction (see `time.rs`).
        let cost = cost as i64 as u64;
        // One unit fits every limit (none admits less), so only other costs are checked.
        if cost != 1 && self.policy.validate_cost(cost).is_err() {
            return None;
        }
        // GCRA's path inline: its decision then stays in registers on its way to the output
        // buffer rather than coming back as a `Result` in memory.
        let d = count_in(keyed, offset, nanos_of_valid_ms(now_ms), cost).ok()?;
        self.out.write_one(&d);
        Some(d.allowed)
    }

    /// The lite module decides one key under one limit, always in place: its `Policy`
    /// refuses several limits, so nothing reaches here.
    #[cfg(not(feature = "full"))]
    fn decide_policy(&mut self, _: &[&str], _: Nanos, _: u64, _: bool) -> Result<Decided, JsValue> {
        Err(crate::errors::range_error("this policy needs the full tollgate module"))
    }

    /// A hit (or with `peek` a peek, which changes nothing) for one key of a one-limit policy
    /// without a penalty whose states are in the slab (the sliding log and sliding buckets):
    /// the core's `check` or `peek` of the key's state alone, in place. `None` for other
    /// policies.
    fn decide_single(&mut self, key: &str, now: Nanos, cost: u64, peek: bool) -> Option<Result<Decision, JsValue>> {
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
    fn decide_policy(&mut self, keys: &[&str], now: Nanos, cost: u64, peek: bool) -> Result<Decided, JsValue> {
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
        r.map(Decided::Policy).map_err(|e| self.error(e.into(), false))
    }
}

/// A hit (or a peek) for `key` in the records (`at`: its record, when known): counted in the
/// record, or over a fresh slot for a new key, whose state then gets a record, inserted after
/// the core's sweeping and eviction rules. Returns the decision and the key's record.
pub(crate) fn in_records(
    store: &mut CompactKeyed,
    key: &str,
    at: Option<u32>,
    now: Nanos,
    cost: u64,
    peek: bool,
) -> Result<(Decision, Option<u32>), CheckError> {
    let at = at.or_else(|| store.find(key));
    if peek {
        let s = at.map(|o| store.state_at(o));
        return decide::peek(|_| &store.algorithm, &Read(s.as_ref()), now, cost, |_, _| {}).map(|d| (d, at));
    }
    if let Some(o) = at {
        return count_in(store, o, now, cost).map(|d| (d, at));
    }
    let mut slot = None;
    let d = decide::count(|_| &store.algorithm, &mut slot, now, cost, |_, _| {})?;
    let at = slot.map(|s| {
        let o = store.insert(key, Some(now));
        store.set_at(o, &s);
        o
    });
    Ok((d, at))
}

/// A hit counted in the record at `offset` by the core's `decide::count`. GCRA (the default
/// algorithm) is counted over its own state read from the record's word (`record_words.rs`),
/// inline; the others as an `AnyState` through `AnyAlgorithm` (the same decision: it is the
/// variant's), which costs no code per algorithm twice.
#[inline(always)]
fn count_in(store: &mut CompactKeyed, offset: u32, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
    if let (AnyAlgorithm::Gcra(a), words) = store.record_mut(offset) {
        return count_words::<_, GcraState>(a, words, now, cost);
    }
    count_any(store, offset, now, cost)
}

fn count_any(store: &mut CompactKeyed, offset: u32, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
    let mut s = store.state_at(offset);
    let d = decide::count(|_| &store.algorithm, &mut Held(&mut s), now, cost, |_, _| {})?;
    store.set_at(offset, &s);
    Ok(d)
}

/// The core's count of a hit for one concrete algorithm, over the state in a record's `words`.
#[inline(always)]
fn count_words<A: Algorithm<State = S>, S: Words>(
    a: &A,
    words: &mut [u8],
    now: Nanos,
    cost: u64,
) -> Result<Decision, CheckError> {
    let mut s = S::read(words);
    let d = decide::count(|_| a, &mut Held(&mut s), now, cost, |_, _| {})?;
    s.write(words);
    Ok(d)
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
        self.run(&[key], now, cost, false, false)
    }

    /// `limit` for the JS layer's string path: the same decision, and the key's record is
    /// remembered for `limitAgain` (forgotten first, so a call that fails leaves none).
    /// Answers 0, 1 or `FAILED` (see `FAILED`).
    #[wasm_bindgen(js_name = limitKey)]
    pub fn limit_key(&mut self, key: &str, now: f64, cost: f64) -> u32 {
        self.last = None;
        let r = self.run(&[key], now, cost, false, true);
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
        self.run(&key_refs(&keys), now, cost, false, false)
    }

    pub fn peek(&mut self, key: &str, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&[key], now, cost, true, false)
    }

    #[cfg(feature = "full")]
    #[wasm_bindgen(js_name = peekKeys)]
    pub fn peek_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<bool, JsValue> {
        self.run(&key_refs(&keys), now, cost, true, false)
    }

    /// Gives back `cost` units to every key, never beyond fresh.
    #[wasm_bindgen(js_name = refundKeys)]
    pub fn refund_keys(&mut self, keys: Vec<String>, now: f64, cost: f64) -> Result<(), JsValue> {
        let now = now_from_ms(now)?;
        let cost = cost_from(cost)?;
        let keys = key_refs(&keys);
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
        let keys = key_refs(&keys);
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
    /// against the policy; on error nothing changes. Not in the lite module: the state's
    /// decoder and its checks against the policy are about 2.7 KB of it gzipped, and its users
    /// export states (the playground reads a key's state) but import them into `tollgate`.
    #[cfg(feature = "full")]
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
