//! The `/v1` handlers.

use serde_json::{json, Value};
use tollgate::Nanos;
use worker::{Context, Env, Request, Response};

use crate::base::clock::{clock, Clock};
use crate::base::errors::ApiError;
use crate::calls::block_cache;
use crate::calls::do_client::{self, object_name};
use crate::config::settings::{Config, Mode};
use crate::decide::hit::{decide, leased_keys, Hit};
use crate::decide::{leased_mode, multi_key, sync_mode};
use crate::request::api_request;
use crate::request::clock::clock_of;
use crate::respond::answer::{self as respond, Outcome};
use crate::respond::observe::{self, Route};
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
    let (r, status) = api_request::read_hit(&mut req, cfg).await?;
    if op == Op::Check && r.policy.policy.has_concurrency() {
        return crate::handlers::concurrency_api::acquire_hit(env, &r, status).await;
    }
    let clock = clock_of(r.now);
    let keys = r.all_keys();
    let hit = Hit { keys, cost: r.cost, clock: &clock, fault, ip: None };
    let mut answer = decide(env, ctx, r.policy, &hit, op).await?;
    let route = if op == Op::Peek { Route::Peek } else { Route::Limit };
    observe::decision(env, cfg, r.policy, route, &r.key, r.cost, &answer);
    answer.set_deny_status(status.unwrap_or(r.policy.deny_status));
    Ok(answer.to_response())
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
    let clock = clock_of(r.now);
    let keys = r.all_keys();
    let outcome = match (pc.mode(), keys) {
        (Mode::Leased, [key]) => leased_mode::refund(pc, key, r.cost, clock.now())?,
        (Mode::Leased, _) => return Err(leased_keys()),
        (Mode::Exact, [key]) => {
            block_cache::forget(&object_name(&pc.name, key));
            let req = DoRequest::new(Op::Refund, &pc.name, key, r.cost, clock.sent());
            let reply = do_client::call(env, &req, pc.timeout_ms).await.map_err(|(_, m)| unavailable(m))?;
            Outcome::Decided(reply.policy_decision()?, Nanos::new(reply.now))
        }
        _ => multi_key::refund(env, pc, keys, r.cost, &clock).await?,
    };
    let mut answer = respond::as_enforced(pc, &outcome, keys, 1).with("refunded", json!(r.cost));
    answer.status = 200;
    Ok(answer.to_response())
}

/// `DELETE /v1/keys/{policy}/{key}`: forgets the key (everything after the policy's `/` is
/// the key, percent-decoded, so keys may hold `/`).
pub async fn reset(rest: &str, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let missing = ApiError::bad_request("missing_key", "use DELETE /v1/keys/{policy}/{key}");
    let (pc, key) = api_request::policy_and_key(rest, cfg, missing)?;
    block_cache::forget(&object_name(&pc.name, &key));
    let mode = pc.mode();
    match mode {
        Mode::Synced | Mode::Local => sync_mode::forget(pc, &key, clock()),
        Mode::Leased => leased_mode::forget(pc, &key),
        Mode::Exact => {}
    }
    // Local mode keeps nothing in the key's object; every other mode does.
    if mode != Mode::Local {
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
