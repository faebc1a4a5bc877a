//! Sync mode (`syncRate` other than 0): the isolate decides, gateway style.
//!
//! Each isolate keeps one core `SyncNode` (a `SyncedLimiter` and its `SyncQueue`) per policy.
//! A hit is decided from the last merged counts plus this isolate's own unsynced hits, with no
//! Durable Object call, in one call that also says which keys to push, and when: every key
//! this isolate admits a hit for is queued, oldest first; a request that finds a round due
//! (`batch` keys waiting, or `syncRate` ms since the last round began) hands it to `waitUntil`: each of its keys' diffs goes to
//! that key's Durable Object (the central store of its counts), which answers the merged
//! counts, applied per key. A key whose push failed is queued again. `syncRate < 0` never syncs.
//!
//! The bound (the core's `tollgate::sync_queue`): a key this isolate admits a hit for at `t`
//! is pushed by a round that begins with the first request of the policy at or after
//! `t + syncRate` (after its previous round ends, if one is out at `t`), whatever the number of
//! active keys: rounds begin as keys come, [`MAX_KEYS_PER_ROUND`] at a time, and each request
//! begins at most one. Between pushes every isolate may admit what it believes is left, so a
//! cluster of `n` isolates can over-admit: the figures are in worker/README.md.

use std::cell::RefCell;
use std::collections::HashMap;

use futures_util::future::join_all;
use tollgate::sync_node::{Round, SyncNode};
use tollgate::{Nanos, PolicyDecision};
use worker::{Context, Env};

use crate::base::errors::ApiError;
use crate::calls::do_client;
use crate::config::settings::PolicyConfig;
use crate::respond::answer::Outcome;
use crate::wire::key_wire::{DoRequest, Op};

/// The most keys one sync round pushes (each is one Durable Object call, from the
/// invocation of the request that began the round): keeps that invocation's subrequests
/// within the runtime's limit (50 on the Free plan) with room for its own.
pub const MAX_KEYS_PER_ROUND: usize = 32;

thread_local! {
    static NODES: RefCell<HashMap<String, SyncNode>> = RefCell::new(HashMap::new());
}

fn with_node<T>(pc: &PolicyConfig, f: impl FnOnce(&mut SyncNode) -> T) -> Result<T, ApiError> {
    NODES.with(|nodes| {
        let mut nodes = nodes.borrow_mut();
        if !nodes.contains_key(&pc.name) {
            let node = SyncNode::new(&pc.name, pc.policy.clone(), pc.sync_rate(), MAX_KEYS_PER_ROUND)
                .map_err(|e| ApiError::new(500, "config_error", e.to_string()))?;
            nodes.insert(pc.name.clone(), node);
        }
        let node = nodes.get_mut(&pc.name).ok_or_else(|| ApiError::internal("sync node missing"))?;
        Ok(f(node))
    })
}

/// Decides a hit (`Op::Check`) or peeks (`Op::Peek`) on `keys` (one or several, all or
/// nothing) from this isolate's view, an estimate, and hands the sync round that is due, if
/// any, to `waitUntil` (one round at most per request).
#[allow(clippy::too_many_arguments)]
pub fn decide(
    env: &Env,
    ctx: &Context,
    pc: &PolicyConfig,
    keys: &[String],
    cost: u64,
    now: Nanos,
    sent: Option<Nanos>,
    op: Op,
) -> Result<Outcome, ApiError> {
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let (d, round) = with_node(pc, |node| node.hit(&refs, now, cost, op == Op::Peek))?.map_err(invalid_cost)?;
    if let Some(round) = round {
        ctx.wait_until(push(env.clone(), pc.clone(), round, sent));
    }
    Ok(Outcome::Estimated(d, now))
}

/// The figures of `keys` in this isolate's view after a refund (a peek that begins no round).
pub fn estimate(pc: &PolicyConfig, keys: &[String], now: Nanos) -> Result<Outcome, ApiError> {
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let d: PolicyDecision = with_node(pc, |node| node.peek(&refs, now, 1))?.map_err(invalid_cost)?;
    Ok(Outcome::Estimated(d, now))
}

fn invalid_cost(e: impl ToString) -> ApiError {
    ApiError::bad_request("invalid_cost", e.to_string())
}

/// One sync round: pushes the diffs of the round's keys (each to its own object, all at once)
/// and feeds each answer back to the node (a key whose push failed keeps its diffs and is
/// queued again).
async fn push(env: Env, pc: PolicyConfig, round: Round, sent: Option<Nanos>) {
    let Ok(batch) = with_node(&pc, |node| node.diffs(&round)) else { return };
    let calls = batch.iter().map(|(key, diffs)| {
        let req = DoRequest {
            op: Op::Sync,
            policy: pc.name.clone(),
            key: key.to_string(),
            cost: 0,
            now: sent.map(Nanos::as_nanos),
            fault: None,
            diffs: diffs.clone(),
        };
        let env = &env;
        let timeout = pc.timeout_ms;
        async move { do_client::call(env, &req, timeout).await }
    });
    let results = join_all(calls).await;
    let _ = with_node(&pc, |node| {
        for ((key, _), result) in batch.iter().zip(results) {
            let merged = result
                .map_err(|(_, e)| worker::console_warn!("sync of {key:?} failed, kept for the next round: {e}"))
                .ok()
                .map(|reply| reply.merged);
            node.pushed(&round, key, merged);
        }
    });
}

/// This isolate's sync queue of `pc` (the test build's `GET /v1/test/sync/{policy}`): how
/// many keys wait for a round and how many are in rounds that have not ended.
#[cfg(feature = "test-hooks")]
pub fn queue(pc: &PolicyConfig) -> Result<serde_json::Value, ApiError> {
    with_node(pc, |node| serde_json::json!({ "waiting": node.queue().waiting(), "out": node.queue().out() }))
}

/// Forgets `key` in this isolate (a reset): its counts, merged and unsynced.
pub fn forget(pc: &PolicyConfig, key: &str, now: Nanos) {
    let _ = with_node(pc, |node| node.forget(key, now));
}

/// Gives `cost` units of `key` back in this isolate (a refund in a synced mode): what it has
/// not pushed yet is never pushed; what it already pushed is given back in its view until
/// the next round brings the key's merged count (worker/README.md, "Refund and reset").
pub fn refund(pc: &PolicyConfig, key: &str, cost: u64, now: Nanos) -> Result<(), ApiError> {
    pc.policy
        .validate_cost(cost)
        .map_err(|e| ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost"))?;
    with_node(pc, |node| node.refund(key, now, cost))
}
