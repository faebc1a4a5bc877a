//! Exact mode, one key: the key's Durable Object decides the hit, with the blocked-key cache
//! in front of it and the policy's fail mode behind it.

use tollgate::Nanos;
use worker::Env;

use crate::base::errors::ApiError;
use crate::base::log;
use crate::calls::block_cache;
use crate::calls::do_client::{self, object_name};
use crate::config::settings::PolicyConfig;
use crate::respond::answer::Outcome;
use crate::wire::key_wire::{DoRequest, Fault, Op};

#[allow(clippy::too_many_arguments)]
/// Exact mode, one key: the block cache, else the key's object, in line behind this isolate's
/// other requests to it.
pub async fn decide(
    env: &Env,
    pc: &PolicyConfig,
    key: &str,
    cost: u64,
    sent: Option<Nanos>,
    fault: Option<Fault>,
    op: Op,
    now: Nanos,
) -> Result<Outcome, ApiError> {
    let name = object_name(&pc.name, key);
    if op == Op::Check {
        if let Some(d) = block_cache::lookup(pc, &name, cost, now) {
            // The object's decision over the state it last sent, which other isolates may
            // have changed since: an estimate.
            return Ok(Outcome::Cached(d, now));
        }
    }
    let req = DoRequest { fault, ..DoRequest::new(op, &pc.name, key, cost, sent) };
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
