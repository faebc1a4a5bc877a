//! Exact mode (`sync = 0`): every hit is decided here, by the core's `Policy` inside one
//! `Store::update` of the key's state (object_store.rs).

use tollgate::{CheckError, Nanos, Policy, PolicyDecision, PolicyState, Store};

use super::object_store::ObjectStore;
use crate::base::errors::ApiError;
use crate::config::settings::PolicyConfig;
use crate::wire::key_wire::{DoReply, Op};

/// The largest state sent with a denial for the isolate's cache (a sliding log of ~250
/// timestamps): beyond it, denials of that key are always decided here.
pub const MAX_SENT_STATE: usize = 4096;

/// Runs a check, peek or refund at `now` over the object's store (whose `alarm` then says
/// whether state was written).
pub fn run(store: &mut ObjectStore<'_>, pc: &PolicyConfig, op: Op, cost: u64, now: Nanos) -> Result<DoReply, ApiError> {
    let policy = &pc.policy;
    if !matches!(op, Op::Check | Op::Peek | Op::Refund) {
        return Err(ApiError::internal("not an exact-mode operation"));
    }
    if op == Op::Refund && cost == 0 {
        return Err(ApiError::bad_request("invalid_cost", "cost must be at least 1"));
    }
    let key = store.key();
    let decided = store.update(&[key], now, &mut |states| decide(policy, op, states, now, cost))?;
    let (decision, state) = decided.map_err(|e| ApiError::bad_request("invalid_cost", e.to_string()))?;
    Ok(DoReply { now: now.as_nanos(), decision: Some(decision), merged: Vec::new(), stored: None, state })
}

/// The core's answer to `op` over the key's state, and with a denied check the state it was
/// decided over: a denial changed nothing (beyond a penalty's block, written through), so the
/// isolate may cache it.
fn decide(
    policy: &Policy,
    op: Op,
    states: &mut [Option<PolicyState>],
    now: Nanos,
    cost: u64,
) -> Result<(PolicyDecision, Option<Vec<u8>>), CheckError> {
    match op {
        Op::Check => {
            let d = policy.check(states, now, cost)?;
            let sent = states[0].as_ref().filter(|_| !d.allowed).map(PolicyState::encode);
            Ok((d, sent.filter(|b| b.len() <= MAX_SENT_STATE)))
        }
        Op::Refund => {
            policy.refund(states, now, cost);
            Ok((policy.peek(states, now, 1)?, None))
        }
        _ => Ok((policy.peek(states, now, cost)?, None)),
    }
}
