//! Deciding a hit for (policy, key): in the key's Durable Object (`sync = 0`), or in this
//! isolate (`sync != 0`, or from its slice of the key's quota with `leaseTtl`); with the block cache in front and the policy's fail mode behind.

use tollgate::Nanos;
use worker::{Context, Env};

use crate::calls::block_cache;
use crate::config::settings::PolicyConfig;
use crate::decide::controls;
use crate::calls::do_client::{self, object_name};
use crate::base::errors::ApiError;
use crate::base::log;
use crate::base::clock::clock;
use crate::respond::answer::{self as respond, Answer, CACHE_HEADER};
use crate::decide::sync_mode;
use crate::wire::key_wire::{DoRequest, Fault, Op};

/// What one request brings besides the policy.
pub struct Hit<'a> {
    /// The key.
    pub key: &'a str,
    /// Units.
    pub cost: u64,
    /// The test clock, when the test switch is on and the request carried one.
    pub test_now: Option<Nanos>,
    /// An injected fault (test switch on only).
    pub fault: Option<Fault>,
    /// The client address the key was made from (proxy mode), for the allow and deny lists.
    pub ip: Option<&'a str>,
}

/// Decides (`Op::Check`) or peeks (`Op::Peek`) and builds the answer: a listed hit by its
/// list, any other by the limits, admitted whatever they say in shadow mode (controls.rs).
pub async fn decide(env: &Env, ctx: &Context, pc: &PolicyConfig, hit: &Hit<'_>, op: Op) -> Result<Answer, ApiError> {
    let now = hit.test_now.unwrap_or_else(clock);
    if let Some(answer) = controls::listed(pc, hit.key, hit.ip, now) {
        return Ok(answer);
    }
    decide_by_limits(env, ctx, pc, hit, op, now).await.map(|answer| controls::shadowed(pc, answer))
}

async fn decide_by_limits(
    env: &Env,
    ctx: &Context,
    pc: &PolicyConfig,
    hit: &Hit<'_>,
    op: Op,
    now: Nanos,
) -> Result<Answer, ApiError> {
    if pc.lease_ms > 0 {
        return crate::decide::leased_mode::decide(env, ctx, pc, hit.key, hit.cost, now, hit.test_now.is_some(), op).await;
    }
    if pc.sync_ms != 0 {
        let d = sync_mode::decide(pc, hit.key, hit.cost, now, op)?;
        sync_mode::drive(env, ctx, pc, now, hit.test_now.is_some());
        // Decided from this isolate's view of the counts, not by the key's object.
        return Ok(respond::estimate(respond::decision(pc, &d, now, hit.key)));
    }
    let name = object_name(&pc.name, hit.key);
    if op == Op::Check {
        if let Some(d) = block_cache::lookup(pc, &name, hit.cost, now) {
            // The object's decision over the state it last sent, which other isolates may
            // have changed since: an estimate.
            let mut answer = respond::estimate(respond::decision(pc, &d, now, hit.key));
            answer.headers.push((CACHE_HEADER, "hit".to_string()));
            return Ok(answer);
        }
    }
    let req = DoRequest { fault: hit.fault, ..DoRequest::new(op, &pc.name, hit.key, hit.cost, hit.test_now) };
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
            Ok(respond::decision(pc, &d, Nanos::new(reply.now), hit.key))
        }
        Err((why, message)) => {
            // The object's name holds the key: the log names the policy only.
            log::error(
                "object_failed",
                serde_json::json!({ "policy": pc.name, "failure": why.name(), "failMode": pc.on_error.name(), "message": message }),
            );
            Ok(respond::degraded(pc, pc.on_error, why, now))
        }
    }
}
