//! Deciding a hit on one key or several, the one way every route decides: the allow and deny
//! lists first (controls.rs), then the policy's [`Mode`], dispatched here once: the key's
//! Durable Object (exact; several keys under the objects' leases, multi_key.rs), this
//! isolate's counts (synced and local, sync_mode.rs) or its slice of the key's quota (leased,
//! leased_mode.rs); with the block cache in front of the object and the policy's fail mode
//! behind it. What it comes to is an [`Outcome`], answered once (respond/answer.rs), then
//! admitted whatever the limits said in shadow mode.

use tollgate::Nanos;
use worker::{Context, Env};

use crate::base::clock::Clock;
use crate::base::errors::ApiError;
use crate::base::log;
use crate::calls::block_cache;
use crate::calls::do_client::{self, object_name};
use crate::config::settings::{Mode, PolicyConfig};
use crate::decide::{controls, leased_mode, multi_key, sync_mode};
use crate::respond::answer::{self as respond, Answer, Outcome};
use crate::wire::key_wire::{DoRequest, Fault, Op};

/// What one request brings besides the policy.
pub struct Hit<'a> {
    /// The key, or several keys decided all or nothing.
    pub keys: &'a [String],
    /// Units.
    pub cost: u64,
    /// Where the request's instant comes from.
    pub clock: &'a dyn Clock,
    /// An injected fault (the test build's hooks only).
    pub fault: Option<Fault>,
    /// The client address the key was made from (proxy mode), for the allow and deny lists.
    pub ip: Option<&'a str>,
}

/// Decides (`Op::Check`) or peeks (`Op::Peek`) and builds the answer: a listed hit by its
/// list, any other by the limits, admitted whatever they say in shadow mode (controls.rs).
pub async fn decide(env: &Env, ctx: &Context, pc: &PolicyConfig, hit: &Hit<'_>, op: Op) -> Result<Answer, ApiError> {
    let mode = pc.mode();
    if mode == Mode::Leased && hit.keys.len() > 1 {
        return Err(leased_keys());
    }
    let now = hit.clock.now();
    if let Some(answer) = controls::listed_any(pc, hit.keys, hit.ip, now) {
        return Ok(answer);
    }
    let outcome = match (mode, hit.keys) {
        (Mode::Leased, [key]) => leased_mode::decide(env, ctx, pc, key, hit.cost, now, hit.clock.sent(), op).await?,
        (Mode::Synced | Mode::Local, keys) => {
            let outcome = multi_key::synced(pc, keys, hit.cost, now, op)?;
            sync_mode::drive(env, ctx, pc, now, hit.clock.sent());
            outcome
        }
        (_, [key]) => exact(env, pc, key, hit, op, now).await?,
        (_, keys) => multi_key::decide(env, pc, keys, hit.cost, hit.clock, op).await?,
    };
    Ok(controls::shadowed(pc, respond::answer(pc, &outcome, hit.keys)))
}

/// Several keys at once under a leased policy: each key's quota is leased on its own, so
/// all-or-nothing over several has no authority to ask.
pub fn leased_keys() -> ApiError {
    ApiError::bad_request("conflicting_fields", "keys (several at once) cannot be decided under a policy with leaseTtl")
        .with_field("keys")
}

/// Exact mode, one key: the block cache, else the key's object, in line behind this isolate's
/// other requests to it.
async fn exact(env: &Env, pc: &PolicyConfig, key: &str, hit: &Hit<'_>, op: Op, now: Nanos) -> Result<Outcome, ApiError> {
    let name = object_name(&pc.name, key);
    if op == Op::Check {
        if let Some(d) = block_cache::lookup(pc, &name, hit.cost, now) {
            // The object's decision over the state it last sent, which other isolates may
            // have changed since: an estimate.
            return Ok(Outcome::Cached(d, now));
        }
    }
    let req = DoRequest { fault: hit.fault, ..DoRequest::new(op, &pc.name, key, hit.cost, hit.clock.sent()) };
    // In line behind this isolate's other requests to the object: the timeout is the object's.
    let permit = crate::calls::key_queue::enter(&name).await;
    let result = do_client::call(env, &req, pc.timeout_ms).await;
    drop(permit);
    match result {
        Ok(reply) => {
            let d = reply.policy_decision()?;
            if op == Op::Check {
                block_cache::after_check(pc, &name, now, d.allowed, reply.state.as_deref());
            }
            Ok(Outcome::Decided(d, Nanos::new(reply.now)))
        }
        Err((why, message)) => {
            // The object's name holds the key: the log names the policy only.
            log::error(
                "object_failed",
                serde_json::json!({ "policy": pc.name, "failure": why.name(), "failMode": pc.on_error.name(), "message": message }),
            );
            Ok(Outcome::Unmade(why, now))
        }
    }
}
