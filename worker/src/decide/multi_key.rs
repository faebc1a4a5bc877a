//! Several keys decided all or nothing (`"keys": [...]` in `/v1/limit`, `/v1/peek`,
//! `/v1/refund`), the same decision as the npm `limiter.limit([k1, k2])`.
//!
//! Each key lives in its own Durable Object, so exact mode (`syncRate = 0`) runs a protocol
//! over them (worker/README.md, "Several keys"): the isolate locks the keys' objects one at a
//! time in sorted order (each answers the key's state bytes and a lease token), decides over
//! all the states with the core's store protocol (`tollgate::store_protocol::CasRun` around
//! `Policy::check`; a round whose leases grew too old is redone as its `Retry::LOCK_ROUNDS`
//! says), then commits the new bytes to every changed key with its token, or
//! releases them all when the hit is denied. Sorted order means two requests never wait on
//! each other in a cycle; the leases mean a dead isolate holds nothing for long. The synced
//! modes decide in the isolate, over its counts of every key (sync_mode.rs).

use core::cell::RefCell;

use futures_util::future::join_all;
use serde_json::{json, Value};
use tollgate::store_protocol::{drive, CasRun, Next, Retry, Step, Tried, Written};
use tollgate::{Nanos, PolicyState};
use worker::Env;

use crate::base::clock::{real_ms, Clock};
use crate::base::errors::ApiError;
use crate::base::log;
use crate::calls::block_cache;
use crate::calls::do_client::{self, object_name};
use crate::config::settings::{Mode, PolicyConfig};
use crate::decide::sync_mode;
use crate::object::lock::{state_of, LEASE_MS};
use crate::respond::answer::{Failure, Outcome};
use crate::wire::key_wire::{DoRequest, Op};
use crate::wire::lock_wire::{LockOp, LockReply, LockRequest, LEASE_LOST_CODE};

/// Why a call of the protocol failed.
#[derive(Debug)]
pub enum CallError {
    /// The object failed, timed out, or the key stayed busy (`Failure::Contention`).
    Failed(Failure, String),
    /// The object refused a commit: the lease had expired and another request broke it.
    LeaseLost,
    /// The object refused the request as the caller's mistake (an import's bytes).
    Refused(ApiError),
}

/// One request of the protocol to the object of (`pc`, `key`).
pub async fn call(env: &Env, pc: &PolicyConfig, r: &LockRequest) -> Result<LockReply, CallError> {
    let body = serde_json::to_string(r).map_err(|e| CallError::Failed(Failure::Error, e.to_string()))?;
    let name = object_name(&pc.name, &r.key);
    let (status, text) = do_client::exchange_key_patiently(env, &name, &body, pc.timeout_ms)
        .await
        .map_err(|(why, m)| CallError::Failed(why, m))?;
    if status == 200 {
        return serde_json::from_str(&text).map_err(|e| CallError::Failed(Failure::Error, format!("bad reply: {e}")));
    }
    let v: Value = serde_json::from_str(&text).unwrap_or_default();
    match v["error"]["code"].as_str() {
        Some(LEASE_LOST_CODE) => Err(CallError::LeaseLost),
        Some("invalid_state") if status == 400 => Err(CallError::Refused(
            ApiError::bad_request("invalid_state", v["error"]["message"].as_str().unwrap_or("invalid state"))
                .with_field("state"),
        )),
        _ => Err(CallError::Failed(Failure::Error, format!("status {status}: {text}"))),
    }
}

fn request(pc: &PolicyConfig, key: &str, op: LockOp, sent: Option<Nanos>) -> LockRequest {
    LockRequest {
        lock_op: op,
        policy: pc.name.clone(),
        key: key.to_string(),
        token: 0,
        state: None,
        now: sent.map(Nanos::as_nanos),
    }
}

/// Releases every lease in `held` (key index, token), without waiting on the answers' order.
async fn release_all(env: &Env, pc: &PolicyConfig, keys: &[String], held: &[(usize, u64)]) {
    let calls = held.iter().map(|&(i, token)| {
        let r = LockRequest { token, ..request(pc, &keys[i], LockOp::Release, None) };
        async move { call(env, pc, &r).await }
    });
    for result in join_all(calls).await {
        if let Err(e) = result {
            // The lease ends on its own within LEASE_MS.
            log::warn("lease_release_failed", json!({ "policy": pc.name, "error": format!("{e:?}") }));
        }
    }
}

/// The states of every key (exported, so a key under a lease is read after it), decoded.
async fn read_states(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    sent: Option<Nanos>,
) -> Result<Vec<Option<Vec<u8>>>, CallError> {
    let calls = keys.iter().map(|k| {
        let r = request(pc, k, LockOp::Export, sent);
        async move { call(env, pc, &r).await }
    });
    join_all(calls).await.into_iter().map(|r| r.map(|reply| reply.state)).collect()
}

/// What a failed object means for the answer: the policy's fail mode (or, for contention, a
/// denial), as for one key.
fn failed(pc: &PolicyConfig, why: Failure, message: String, now: Nanos) -> Outcome {
    log::error(
        "object_failed",
        json!({ "policy": pc.name, "failure": why.name(), "failMode": pc.on_error.name(), "message": message, "keys": "several" }),
    );
    Outcome::Unmade(why, now)
}

fn bad_cost(e: tollgate::CheckError) -> ApiError {
    ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost")
}

/// Decides (`Op::Check`) or peeks (`Op::Peek`) a hit of `cost` on every key of `keys` (2 to
/// 16 distinct keys, validated) in exact mode.
pub async fn decide(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    cost: u64,
    clock: &dyn Clock,
    op: Op,
) -> Result<Outcome, ApiError> {
    if op == Op::Peek {
        let raw = match read_states(env, pc, keys, clock.sent()).await {
            Ok(raw) => raw,
            Err(e) => return Ok(failure_answer(pc, e, clock.now())),
        };
        let now = clock.now();
        let states = raw.iter().map(|b| state_of(pc, b.as_deref())).collect::<Result<Vec<_>, _>>()?;
        let d = pc.policy.peek(&states, now, cost).map_err(bad_cost)?;
        return Ok(Outcome::Decided(d, now));
    }
    check(env, pc, keys, cost, clock).await
}

fn failure_answer(pc: &PolicyConfig, e: CallError, now: Nanos) -> Outcome {
    match e {
        CallError::Failed(why, m) => failed(pc, why, m, now),
        CallError::LeaseLost => failed(pc, Failure::Error, "lease lost".into(), now),
        CallError::Refused(e) => failed(pc, Failure::Error, e.message, now),
    }
}

/// The protocol for a counted hit: lock in order, decide, commit or release.
async fn check(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    cost: u64,
    clock: &dyn Clock,
) -> Result<Outcome, ApiError> {
    pc.policy.validate_cost(cost).map_err(bad_cost)?;
    match under_leases(env, pc, keys, clock, &mut |states, now| pc.policy.check(states, now, cost)).await? {
        Round::Decided(Ok(d), now) => Ok(Outcome::Decided(d, now)),
        Round::Decided(Err(e), _) => Err(bad_cost(e)),
        Round::Answered(a) => Ok(a),
    }
}

/// What one update of several keys under their leases came to.
pub enum Round<R> {
    /// The core's result (written to every changed key), and the instant it decided at.
    Decided(R, Nanos),
    /// No decision: an object failed (the policy's fail mode answers) or the keys stayed
    /// contended (a denial).
    Answered(Outcome),
}

/// Locks `keys` in sorted order, runs `f` (the core, a pure function of the states and the
/// instant) over their states, then commits the new bytes to every changed key with its token,
/// or releases them all when nothing changed.
pub async fn under_leases<R>(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    clock: &dyn Clock,
    f: &mut dyn FnMut(&mut [Option<PolicyState>], Nanos) -> R,
) -> Result<Round<R>, ApiError> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
    // A round is redone from the start when its leases grew too old before it could commit
    // (nothing was written): a slow machine, never a failure in itself. The rounds are the
    // core's `drive` under `Retry::LOCK_ROUNDS`.
    let order = &order;
    let f = &RefCell::new(f);
    let round = |_: u32| async move {
        let started = real_ms();
        let mut held: Vec<(usize, u64)> = Vec::with_capacity(keys.len());
        let mut raw: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
        for &i in order {
            match call(env, pc, &request(pc, &keys[i], LockOp::Lock, clock.sent())).await {
                Ok(reply) => {
                    raw[i] = reply.state;
                    held.push((i, reply.token));
                }
                Err(e) => {
                    release_all(env, pc, keys, &held).await;
                    return Ok(Tried::Done(Round::Answered(failure_answer(pc, e, clock.now()))));
                }
            }
        }
        // Every lease was granted after `started`: while less than half a lease has passed
        // since, none can have expired, so every commit below will be taken.
        if real_ms().saturating_sub(started) > LEASE_MS / 2 {
            release_all(env, pc, keys, &held).await;
            return Ok(Tried::Lost);
        }
        let now = clock.now();
        // The leases make the write's compare hold: the one write lands (`Written::Swapped`).
        let mut run = CasRun::begin(Retry::cas(1));
        let step = run
            .feed(&pc.policy, raw, &mut |states| {
                let mut g = f.borrow_mut();
                (*g)(states, now)
            })
            .map_err(|(i, e)| ApiError::internal(format!("key {i}'s object sent an invalid state: {e}")));
        // The core's step says what to write: a plain denial changes nothing, but one that
        // starts a penalty's block (`blockDuration`) changes the blocked keys' states, which
        // are committed as an admitted hit's are.
        let commits: Vec<LockRequest> = match step {
            Ok(Step::Write { expected, new }) => held
                .iter()
                .map(|&(i, token)| {
                    let state = new[i].as_ref().map(|(bytes, _)| bytes.clone());
                    let op = if state == expected[i] { LockOp::Release } else { LockOp::Commit };
                    LockRequest { token, state, ..request(pc, &keys[i], op, clock.sent()) }
                })
                .collect(),
            Ok(Step::Done(r)) => {
                release_all(env, pc, keys, &held).await;
                return Ok(Tried::Done(Round::Decided(r, now)));
            }
            Err(e) => {
                release_all(env, pc, keys, &held).await;
                return Err(e);
            }
        };
        let calls = commits.iter().zip(&held).map(|(r, &(i, _))| async move { (i, call(env, pc, r).await) });
        for (i, result) in join_all(calls).await {
            if let Err(e) = result {
                // Only a commit that took longer than the rest of its lease, overtaken since:
                // this key did not count the hit the others did (worker/README.md).
                log::error("commit_failed", json!({ "policy": pc.name, "keyIndex": i, "error": format!("{e:?}") }));
            }
        }
        for k in keys {
            block_cache::forget(&object_name(&pc.name, k));
        }
        match run.written(Written::Swapped, Nanos::ZERO, 0) {
            Next::Done(r) => Ok(Tried::Done(Round::Decided(r, now))),
            _ => Err(ApiError::internal("the store protocol lost a write made under leases")),
        }
    };
    match drive(Retry::LOCK_ROUNDS, || Nanos::ZERO, round, |_| async {}).await? {
        Ok(round) => Ok(round),
        Err(_) => Ok(Round::Answered(Outcome::Unmade(Failure::Contention, clock.now()))),
    }
}

/// Gives `cost` units back to every key of `keys`, then answers what a hit of cost 1 on all
/// of them would get now.
pub async fn refund(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    cost: u64,
    clock: &dyn Clock,
) -> Result<Outcome, ApiError> {
    let now = clock.now();
    if matches!(pc.mode(), Mode::Synced | Mode::Local) {
        for k in keys {
            sync_mode::refund(pc, k, cost, now)?;
        }
        return sync_mode::estimate(pc, keys, now);
    }
    let calls = keys.iter().map(|k| {
        block_cache::forget(&object_name(&pc.name, k));
        let r = DoRequest::new(Op::Refund, &pc.name, k, cost, clock.sent());
        async move { do_client::call(env, &r, pc.timeout_ms).await }
    });
    for result in join_all(calls).await {
        result.map_err(|(_, m)| do_client::unavailable("key", m))?;
    }
    decide(env, pc, keys, 1, clock, Op::Peek).await
}
