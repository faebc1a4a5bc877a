//! Sync mode (`syncRate` other than 0): the isolate decides, gateway style.
//!
//! Each isolate keeps one core `SyncedLimiter` per policy. A hit is decided from the last
//! merged counts plus this isolate's own unsynced hits, with no Durable Object call. When a
//! sync is due (at most every `sync` ms, and one at a time), the request that noticed it hands
//! a sync round to `waitUntil`: each key's diffs are pushed to that key's Durable Object (the
//! central store of its counts), which answers the merged counts, applied per key. A key whose
//! push failed keeps its diffs for the next round. `sync < 0` never syncs (local only).
//!
//! Between syncs every isolate may admit what it believes is left, so a cluster of `n`
//! isolates can over-admit: measured figures are in worker/README.md.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use futures_util::future::join_all;
use tollgate::sync::{SyncRate, SyncedLimiter};
use tollgate::{Nanos, PolicyDecision};
use worker::Env;

use crate::config::PolicyConfig;
use crate::do_client;
use crate::errors::ApiError;
use crate::wire::{DiffWire, DoRequest, Op};

/// The most keys one sync round pushes (each is one Durable Object call): keeps a round
/// within the runtime's subrequest limits. Keys beyond it wait for the next round.
pub const MAX_KEYS_PER_ROUND: usize = 32;

struct Node {
    limiter: SyncedLimiter,
    /// Keys with hits not yet pushed (or whose push failed).
    dirty: BTreeSet<String>,
    /// A round is running (one at a time, so rounds never overlap).
    in_flight: bool,
}

thread_local! {
    static NODES: RefCell<HashMap<String, Node>> = RefCell::new(HashMap::new());
}

fn with_node<T>(pc: &PolicyConfig, f: impl FnOnce(&mut Node) -> T) -> Result<T, ApiError> {
    NODES.with(|nodes| {
        let mut nodes = nodes.borrow_mut();
        if !nodes.contains_key(&pc.name) {
            let limiter = SyncedLimiter::new(&pc.name, pc.policy.clone(), pc.sync_rate())
                .map_err(|e| ApiError::new(500, "config_error", e.to_string()))?;
            nodes.insert(pc.name.clone(), Node { limiter, dirty: BTreeSet::new(), in_flight: false });
        }
        let node = nodes.get_mut(&pc.name).ok_or_else(|| ApiError::internal("sync node missing"))?;
        Ok(f(node))
    })
}

/// Decides a hit (`Op::Check`) or peeks (`Op::Peek`) from this isolate's view.
pub fn decide(pc: &PolicyConfig, key: &str, cost: u64, now: Nanos, op: Op) -> Result<PolicyDecision, ApiError> {
    decide_keys(pc, &[key], cost, now, op)
}

/// [`decide`] for several keys at once, all or nothing in this isolate's view (the core's
/// `SyncedLimiter` over the keys; each admitted key is pushed at the next round).
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
        if op == Op::Check && d.allowed {
            for key in keys {
                node.dirty.insert(key.to_string());
            }
        }
        Ok(d)
    })?
}

/// Whether this request should start a sync round (and marks one as running if so).
pub fn start_round_if_due(pc: &PolicyConfig, now: Nanos) -> bool {
    if !matches!(pc.sync_rate(), SyncRate::Every(_)) {
        return false;
    }
    with_node(pc, |node| {
        let due = !node.in_flight
            && node.limiter.sync_due(now)
            && (!node.dirty.is_empty() || node.limiter.keys().next().is_some());
        if due {
            node.in_flight = true;
        }
        due
    })
    .unwrap_or(false)
}

/// One sync round: push every dirty key's diffs (then other known keys, to pull what other
/// isolates counted), up to [`MAX_KEYS_PER_ROUND`], and apply each key's merged counts.
pub async fn round(env: Env, pc: PolicyConfig, now: Nanos, test_now: bool) {
    let batch: Option<Vec<(String, Vec<DiffWire>)>> = with_node(&pc, |node| {
        let mut keys: Vec<String> = node.dirty.iter().take(MAX_KEYS_PER_ROUND).cloned().collect();
        if keys.len() < MAX_KEYS_PER_ROUND {
            let more: Vec<String> = node
                .limiter
                .keys()
                .filter(|k| !node.dirty.contains(*k))
                .take(MAX_KEYS_PER_ROUND - keys.len())
                .map(str::to_string)
                .collect();
            keys.extend(more);
        }
        for k in &keys {
            node.dirty.remove(k);
        }
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let diffs = node.limiter.take_diffs_for(&refs, now);
        keys.into_iter()
            .map(|k| {
                let mine = diffs.iter().filter(|d| *d.key == *k).map(DiffWire::from_diff).collect();
                (k, mine)
            })
            .collect()
    })
    .ok();
    let Some(batch) = batch else { return };
    let calls = batch.iter().map(|(key, diffs)| {
        let req = DoRequest {
            op: Op::Sync,
            policy: pc.name.clone(),
            key: key.clone(),
            cost: 0,
            now: test_now.then_some(now.as_nanos()),
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
                    let merged: Vec<_> = reply.merged.iter().map(|m| m.to_merged(key)).collect();
                    node.limiter.apply_merged_for(&[key.as_str()], &merged, now);
                }
                Err((_, e)) => {
                    worker::console_warn!("sync of {key:?} failed, kept for the next round: {e}");
                    node.limiter.restore_for(&[key.as_str()]);
                    node.dirty.insert(key.clone());
                }
            }
        }
        node.in_flight = false;
    });
}

/// Forgets `key` in this isolate (a reset): its counts, merged and unsynced.
pub fn forget(pc: &PolicyConfig, key: &str, now: Nanos) {
    let _ = with_node(pc, |node| {
        node.limiter.take_diffs_for(&[key], now);
        node.limiter.apply_merged_for(&[key], &[], now);
        node.dirty.remove(key);
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
