//! Sync mode (`syncRate` other than 0): the isolate decides, gateway style.
//!
//! Each isolate keeps one core `SyncedLimiter` per policy. A hit is decided from the last
//! merged counts plus this isolate's own unsynced hits, with no Durable Object call. Which
//! keys to push, and when, is the core's `SyncQueue`: every key this isolate admits a hit for
//! is queued, oldest first; a request that finds a round due (`batch` keys waiting, or `syncRate`
//! ms since the last round began) hands it to `waitUntil`: each of its keys' diffs goes to
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
use tollgate::sync::{Diff, MergedCount, SyncRate, SyncedLimiter};
use tollgate::sync_queue::SyncQueue;
use tollgate::{Nanos, PolicyDecision};
use worker::{Context, Env};

use crate::base::errors::ApiError;
use crate::calls::do_client;
use crate::config::settings::{Mode, PolicyConfig};
use crate::respond::answer::Outcome;
use crate::wire::key_wire::{DoRequest, Op};

/// The most keys one sync round pushes (each is one Durable Object call, from the
/// invocation of the request that began the round): keeps that invocation's subrequests
/// within the runtime's limit (50 on the Free plan) with room for its own.
pub const MAX_KEYS_PER_ROUND: usize = 32;

struct Node {
    limiter: SyncedLimiter,
    /// Keys with hits not yet pushed (or whose push failed), and the rounds' schedule.
    queue: SyncQueue,
}

thread_local! {
    static NODES: RefCell<HashMap<String, Node>> = RefCell::new(HashMap::new());
}

fn with_node<T>(pc: &PolicyConfig, f: impl FnOnce(&mut Node) -> T) -> Result<T, ApiError> {
    NODES.with(|nodes| {
        let mut nodes = nodes.borrow_mut();
        if !nodes.contains_key(&pc.name) {
            let rate = pc.sync_rate();
            let limiter = SyncedLimiter::new(&pc.name, pc.policy.clone(), rate)
                .map_err(|e| ApiError::new(500, "config_error", e.to_string()))?;
            let every = match rate {
                SyncRate::Every(every) => every,
                _ => Nanos::ZERO,
            };
            nodes.insert(pc.name.clone(), Node { limiter, queue: SyncQueue::new(every, MAX_KEYS_PER_ROUND) });
        }
        let node = nodes.get_mut(&pc.name).ok_or_else(|| ApiError::internal("sync node missing"))?;
        Ok(f(node))
    })
}

/// Decides a hit (`Op::Check`) or peeks (`Op::Peek`) on `keys` (one or several, all or
/// nothing) from this isolate's view, then begins the sync round that is due: an estimate.
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
    let outcome = estimate(pc, keys, cost, now, op)?;
    drive(env, ctx, pc, now, sent);
    Ok(outcome)
}

/// [`decide_keys`] over `keys` as the outcome it is: an estimate.
pub fn estimate(pc: &PolicyConfig, keys: &[String], cost: u64, now: Nanos, op: Op) -> Result<Outcome, ApiError> {
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    Ok(Outcome::Estimated(decide_keys(pc, &refs, cost, now, op)?, now))
}

/// [`decide`] for several keys at once, all or nothing in this isolate's view (the core's
/// `SyncedLimiter` over the keys; each admitted key is queued for a round).
pub fn decide_keys(
    pc: &PolicyConfig,
    keys: &[&str],
    cost: u64,
    now: Nanos,
    op: Op,
) -> Result<PolicyDecision, ApiError> {
    with_node(pc, |node| {
        let result = match op {
            Op::Peek => node.limiter.peek(keys, now, cost),
            _ => node.limiter.check(keys, now, cost),
        };
        let d = result.map_err(|e| ApiError::bad_request("invalid_cost", e.to_string()))?;
        if op == Op::Check && d.allowed && pc.mode() == Mode::Synced {
            for key in keys {
                node.queue.mark(key);
            }
        }
        Ok(d)
    })?
}

/// Called after every decision of a synced policy: begins the round that is due, if any, in
/// `waitUntil` (one round at most per request).
pub fn drive(env: &Env, ctx: &Context, pc: &PolicyConfig, now: Nanos, sent: Option<Nanos>) {
    if !matches!(pc.sync_rate(), SyncRate::Every(_)) {
        return;
    }
    let keys = with_node(pc, |node| node.queue.next_round(now)).unwrap_or_default();
    if !keys.is_empty() {
        ctx.wait_until(round(env.clone(), pc.clone(), keys, now, sent));
    }
}

/// One sync round: push the diffs of `keys` (each to its own object, all at once) and apply
/// each key's merged counts; a key whose push failed keeps its diffs and is queued again.
async fn round(env: Env, pc: PolicyConfig, keys: Vec<Box<str>>, now: Nanos, sent: Option<Nanos>) {
    let batch: Option<Vec<(Box<str>, Vec<Diff>)>> = with_node(&pc, |node| {
        let refs: Vec<&str> = keys.iter().map(|k| &**k).collect();
        let diffs = node.limiter.take_diffs_for(&refs, now);
        keys.iter()
            .map(|k| {
                let mine = diffs.iter().filter(|d| d.key == *k).cloned().collect();
                (k.clone(), mine)
            })
            .collect()
    })
    .ok();
    let Some(batch) = batch else { return };
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
            match result {
                Ok(reply) => {
                    let merged: Vec<_> =
                        reply.merged.into_iter().map(|m| MergedCount { key: key.clone(), ..m }).collect();
                    node.limiter.apply_merged_for(&[&**key], &merged, now);
                    node.queue.finish(key, true);
                }
                Err((_, e)) => {
                    worker::console_warn!("sync of {key:?} failed, kept for the next round: {e}");
                    node.limiter.restore_for(&[&**key]);
                    node.queue.finish(key, false);
                }
            }
        }
    });
}

/// This isolate's sync queue of `pc` (the test build's `GET /v1/test/sync/{policy}`): how
/// many keys wait for a round and how many are in rounds that have not ended.
#[cfg(feature = "test-hooks")]
pub fn queue(pc: &PolicyConfig) -> Result<serde_json::Value, ApiError> {
    with_node(pc, |node| serde_json::json!({ "waiting": node.queue.waiting(), "out": node.queue.out() }))
}

/// Forgets `key` in this isolate (a reset): its counts, merged and unsynced.
pub fn forget(pc: &PolicyConfig, key: &str, now: Nanos) {
    let _ = with_node(pc, |node| {
        node.limiter.take_diffs_for(&[key], now);
        node.limiter.apply_merged_for(&[key], &[], now);
        node.queue.forget(key);
    });
}

/// Gives `cost` units of `key` back in this isolate (a refund in a synced mode): what it has
/// not pushed yet is never pushed; what it already pushed is given back in its view until
/// the next round brings the key's merged count (worker/README.md, "Refund and reset").
pub fn refund(pc: &PolicyConfig, key: &str, cost: u64, now: Nanos) -> Result<(), ApiError> {
    pc.policy
        .validate_cost(cost)
        .map_err(|e| ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost"))?;
    with_node(pc, |node| node.limiter.refund(key, now, cost))
}
