//! Deciding a hit on one key or several, the one way every route decides: the allow and deny
//! lists first (controls.rs), then the policy's [`Mode`], dispatched here once: the key's
//! Durable Object (exact; several keys under the objects' leases, multi_key.rs), this
//! isolate's counts (synced and local, sync_mode.rs) or its slice of the key's quota (leased,
//! leased_mode.rs); with the block cache in front of the object and the policy's fail mode
//! behind it. What it comes to is an [`Outcome`], answered once (respond/answer.rs), then
//! admitted whatever the limits said in shadow mode.

use worker::{Context, Env};

use crate::base::clock::Clock;
use crate::base::errors::ApiError;
use crate::config::settings::{Mode, PolicyConfig};
use crate::decide::{controls, exact, leased_mode, multi_key, sync_mode};
use crate::respond::answer::{self as respond, Answer, Outcome};
use crate::wire::key_wire::{Fault, Op};

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
    let outcome = match controls::lists(pc, hit.keys, hit.ip) {
        Some(listed) => Outcome::Listed(listed, now),
        None => match (mode, hit.keys) {
            (Mode::Leased, [key]) => {
                leased_mode::decide(env, ctx, pc, key, hit.cost, now, hit.clock.sent(), op).await?
            }
            (Mode::Synced | Mode::Local, keys) => {
                sync_mode::decide(env, ctx, pc, keys, hit.cost, now, hit.clock.sent(), op)?
            }
            (_, [key]) => exact::decide(env, pc, key, hit.cost, hit.clock.sent(), hit.fault, op, now).await?,
            (_, keys) => multi_key::decide(env, pc, keys, hit.cost, hit.clock, op).await?,
        },
    };
    Ok(respond::answer(pc, &outcome, hit.keys, hit.cost))
}

/// Several keys at once under a leased policy: each key's quota is leased on its own, so
/// all-or-nothing over several has no authority to ask.
pub fn leased_keys() -> ApiError {
    ApiError::bad_request("conflicting_fields", "keys (several at once) cannot be decided under a policy with leaseTtl")
        .with_field("keys")
}
