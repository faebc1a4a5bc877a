//! The `/v1` handlers.

use serde_json::{json, Value};
use tollgate::Nanos;
use worker::{Context, Env, Request, Response};

use crate::request::api_request;
use crate::calls::block_cache;
use crate::config::settings::Config;
use crate::decide::controls;
use crate::decide::hit::{decide, Hit};
use crate::calls::do_client::{self, object_name};
use crate::base::errors::ApiError;
use crate::decide::multi_key;
use crate::base::clock::clock;
use crate::respond::observe::{self, Route};
use crate::respond::answer as respond;
use crate::decide::sync_mode;
use crate::wire::key_wire::{DoRequest, Op};

/// The injected fault an API request asks for, when the test hooks are on.
#[cfg(feature = "test-hooks")]
use crate::tests::fault::of_request as fault;

/// A production build reads no test header.
#[cfg(not(feature = "test-hooks"))]
fn fault(_: &Config, _: &Request) -> Option<crate::wire::key_wire::Fault> {
    None
}

/// `POST /v1/limit` (`op = Check`) and `POST /v1/peek` (`op = Peek`). A denial is an
/// answer: 200 with `"allowed": false` (and every header) unless the policy's `statusCode` or
/// the request's `?status=429` asks for 429. HTTP clients retry 429s on their own, which
/// would multiply the decision service's load by its own denials.
pub async fn limit(mut req: Request, env: &Env, ctx: &Context, cfg: &Config, op: Op) -> Result<Response, ApiError> {
    let fault = fault(cfg, &req);
    let status = api_request::deny_status_param(&req.url()?)?;
    let bytes = api_request::read_body(&mut req).await?;
    let r = api_request::parse(&bytes, cfg, &|name| req.headers().get(name).ok().flatten())?;
    if r.keys.is_some() && r.policy.lease_ms > 0 {
        return Err(leased_keys());
    }
    let mut answer = match &r.keys {
        Some(keys) => match controls::listed_any(r.policy, keys, r.now.unwrap_or_else(clock)) {
            Some(listed) => listed,
            None => {
                let answer = multi_key::decide(env, r.policy, keys, r.cost, r.now, op).await?;
                if r.policy.sync_ms != 0 {
                    sync_mode::drive(env, ctx, r.policy, r.now.unwrap_or_else(clock), r.now.is_some());
                }
                controls::shadowed(r.policy, answer)
            }
        },
        None => {
            let hit = Hit { key: &r.key, cost: r.cost, test_now: r.now, fault, ip: None };
            decide(env, ctx, r.policy, &hit, op).await?
        }
    };
    let route = if op == Op::Peek { Route::Peek } else { Route::Limit };
    observe::decision(env, cfg, r.policy, route, &r.key, r.cost, &answer);
    answer.set_deny_status(status.unwrap_or(r.policy.deny_status));
    Ok(answer.to_response())
}

/// Several keys at once under a leased policy: each key's quota is leased on its own, so
/// all-or-nothing over several has no authority to ask.
fn leased_keys() -> ApiError {
    ApiError::bad_request("conflicting_fields", "keys (several at once) cannot be decided under a policy with leaseTtl")
        .with_field("keys")
}

fn unavailable(message: String) -> ApiError {
    do_client::unavailable("key", message)
}

/// `POST /v1/refund`: gives `cost` units back and answers what a hit of cost 1 would get
/// now, with `refunded`. In exact mode the key's object refunds; in the synced modes this
/// isolate does (sync_mode::refund, and worker/README.md for what that guarantees).
pub async fn refund(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bytes = api_request::read_body(&mut req).await?;
    let r = api_request::parse(&bytes, cfg, &|name| req.headers().get(name).ok().flatten())?;
    let pc = r.policy;
    if pc.lease_ms > 0 && r.keys.is_some() {
        return Err(leased_keys());
    }
    let mut answer = if pc.lease_ms > 0 {
        crate::decide::leased_mode::refund(pc, &r.key, r.cost, r.now.unwrap_or_else(clock))?
    } else if r.keys.is_some() || pc.sync_ms != 0 {
        let keys = r.keys.clone().unwrap_or_else(|| vec![r.key.clone()]);
        let mut answer = multi_key::refund(env, pc, &keys, r.cost, r.now).await?;
        if r.keys.is_none() {
            // One key answers as one key does: without the pairs of several keys.
            if let Some(body) = answer.body.as_object_mut() {
                body.remove("limits");
            }
        }
        answer
    } else {
        block_cache::forget(&object_name(&pc.name, &r.key));
        let req = DoRequest::new(Op::Refund, &pc.name, &r.key, r.cost, r.now);
        let reply = do_client::call(env, &req, pc.timeout_ms).await.map_err(|(_, m)| unavailable(m))?;
        respond::decision(pc, &reply.policy_decision()?, Nanos::new(reply.now), &r.key)
    };
    answer.status = 200;
    answer.body["refunded"] = json!(r.cost);
    Ok(answer.to_response())
}

/// `DELETE /v1/keys/{policy}/{key}`: forgets the key (everything after the policy's `/` is
/// the key, percent-decoded, so keys may hold `/`).
pub async fn reset(rest: &str, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let missing = ApiError::bad_request("missing_key", "use DELETE /v1/keys/{policy}/{key}");
    let (pc, key) = api_request::policy_and_key(rest, cfg, missing)?;
    block_cache::forget(&object_name(&pc.name, &key));
    if pc.sync_ms != 0 {
        sync_mode::forget(pc, &key, clock());
    }
    if pc.lease_ms > 0 {
        crate::decide::leased_mode::forget(pc, &key);
    }
    if pc.sync_ms >= 0 {
        let req = DoRequest::new(Op::Reset, &pc.name, &key, 0, None);
        do_client::call(env, &req, pc.timeout_ms).await.map_err(|(_, m)| unavailable(m))?;
    }
    json_response(200, &json!({ "reset": true, "policy": pc.name, "key": key }))
}

/// What a policy's description says about reconfiguration: what each limit keeps of a key's
/// usage when its numbers change (the core's rule), and that another algorithm starts fresh.
pub const RECONFIGURE: &str = "when a limit's numbers change (limit, window, burst...), each key keeps what it has \
     used by the limit's rule, capped at the new limit; a limit whose algorithm changes, or a new limit, starts fresh";

/// A policy's description with what reconfiguration does to it.
pub fn describe(pc: &crate::config::settings::PolicyConfig) -> Value {
    let mut d = pc.description.clone();
    if let Some(limits) = d["limits"].as_array_mut() {
        for (described, limit) in limits.iter_mut().zip(pc.policy.limits()) {
            described["reconfigure"] = json!(tollgate::reconfigure::rule(limit.algorithm().kind()));
        }
    }
    d["reconfigure"] = json!(RECONFIGURE);
    d
}

/// `GET /v1/policies`: every policy, normalised, with what a change of its configuration
/// keeps.
pub fn policies(cfg: &Config) -> Result<Response, ApiError> {
    let map: serde_json::Map<String, Value> =
        cfg.policies.iter().map(|(name, pc)| (name.clone(), describe(pc))).collect();
    json_response(200, &json!({ "policies": map }))
}

/// A JSON response that is never cached.
pub fn json_response(status: u16, v: &Value) -> Result<Response, ApiError> {
    Ok(respond::json_response(status, &[], v.to_string()))
}
