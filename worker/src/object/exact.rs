//! Exact mode (`sync = 0`): every hit is decided here, by the core's `Policy`, against the
//! key's one stored `PolicyState`.

use std::cell::RefCell;
use std::slice;

use serde_json::json;
use tollgate::Nanos;

use super::storage::{load_exact, save_exact, storage_deadline, Loaded, Mem};
use super::storage_fault::Sql;
use crate::config::PolicyConfig;
use crate::errors::ApiError;
use crate::log;
use crate::wire::{DoReply, Op, PolicyDecisionWire};

/// The largest state sent with a denial for the isolate's cache (a sliding log of ~250
/// timestamps): beyond it, denials of that key are always decided here.
pub const MAX_SENT_STATE: usize = 4096;

/// Runs a check, peek or refund at `now` (`test_clock`: `now` is the request's test clock).
/// Returns the reply and, when state was written, the real time (ms) it expires at (for the
/// alarm).
///
/// No `await` happens between loading and writing, so concurrent requests are serialised.
pub fn run(
    mem: &RefCell<Mem>,
    sql: &Sql<'_>,
    pc: &PolicyConfig,
    op: Op,
    cost: u64,
    now: Nanos,
    test_clock: bool,
) -> Result<(DoReply, Option<u64>), ApiError> {
    let policy = &pc.policy;
    let mut mem = mem.borrow_mut();
    match load_exact(&mut mem, sql, policy, now)? {
        Some(Loaded::Converted) => log::info("state_converted", json!({ "policy": pc.name })),
        Some(Loaded::Dropped(why)) => log::warn("state_dropped", json!({ "policy": pc.name, "reason": why })),
        Some(Loaded::AsStored) | None => {}
    }
    let Some(state) = mem.exact.as_mut() else {
        return Err(ApiError::internal("state not loaded"));
    };
    let bad_cost = |e: tollgate::CheckError| ApiError::bad_request("invalid_cost", e.to_string());
    let (decision, wrote) = match op {
        Op::Check => {
            let d = policy.check(slice::from_mut(state), now, cost).map_err(bad_cost)?;
            (d.clone(), d.allowed)
        }
        Op::Peek => (policy.peek(slice::from_ref(state), now, cost).map_err(bad_cost)?, false),
        Op::Refund => {
            if cost == 0 {
                return Err(ApiError::bad_request("invalid_cost", "cost must be at least 1"));
            }
            policy.refund(slice::from_mut(state), now, cost);
            (policy.peek(slice::from_ref(state), now, 1).map_err(bad_cost)?, true)
        }
        Op::Reset | Op::Sync | Op::Inspect => return Err(ApiError::internal("not an exact-mode operation")),
    };
    // A denied check changed nothing: the isolate may cache the state it was decided over.
    let cacheable = op == Op::Check && !decision.allowed;
    let sent_state = state.as_ref().filter(|_| cacheable).map(|s| s.encode()).filter(|b| b.len() <= MAX_SENT_STATE);
    let mut alarm = None;
    if wrote {
        let deadline = storage_deadline(
            worker::Date::now().as_millis(),
            now,
            state.as_ref().map_or(now, |s| s.expires_at()),
            test_clock,
        );
        let stored = state.is_some();
        if let Err(e) = save_exact(&mut mem, sql, policy, deadline) {
            // Memory is ahead of storage: forget it so the next request reloads what is durable.
            mem.exact = None;
            return Err(e);
        }
        alarm = stored.then_some(deadline);
    }
    Ok((
        DoReply {
            now: now.as_nanos(),
            decision: Some(PolicyDecisionWire::from(&decision)),
            merged: Vec::new(),
            stored: None,
            state: sent_state,
        },
        alarm,
    ))
}
