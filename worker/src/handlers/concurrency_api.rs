//! `POST /v1/acquire`, `POST /v1/release` and `POST /v1/renew`: a slot of a policy's
//! concurrency limits held by a lease (docs/concurrency.md).
//!
//! The core decides all three (`Policy::acquire`, `Policy::release`, `Policy::renew`): a key's
//! leases are part of its state bytes, so the isolate runs them over the keys' states under
//! the several-keys protocol's leases (`multi_key::under_leases`), one key or sixteen, all or
//! nothing, exactly as `/v1/reserve` does: each key's Durable Object holds its bytes and lets
//! one request at a time decide over them. The Worker draws the lease's id, builds its token
//! (`tollgate::concurrency::LeaseToken`, naming the policy and the keys) and turns the core's
//! answers and errors into HTTP.

use serde_json::{json, Value};
use tollgate::concurrency::{LeaseError, LeaseToken, Released, Renewed, LEASE_FIELDS};
use tollgate::Nanos;
use worker::{Env, Request, Response};

use crate::base::clock::Clock;
use crate::base::errors::ApiError;
use crate::config::settings::find_policy;
use crate::config::settings::{Config, Mode, PolicyConfig};
use crate::decide::controls;
use crate::decide::multi_key::{under_leases, Round};
use crate::request::api_request::{self, HitRequest};
use crate::request::clock::clock_of;
use crate::respond::answer::{self as respond, Answer, Outcome};

const LEASE: &str = LEASE_FIELDS[0];
const EXPIRES_AT: &str = LEASE_FIELDS[1];
const RELEASED: &str = LEASE_FIELDS[2];

/// The fields of a `/v1/release` and a `/v1/renew` body (docs/vocabulary.md).
pub const LEASE_BODY_FIELDS: [&str; 2] = ["lease", "now"];

/// The status of a renewal of a lease that is not live: the request is well formed, the keys'
/// state refuses it (as a settlement of a closed reservation).
pub const UNKNOWN_LEASE_STATUS: u16 = 409;

/// Leases live in the keys' exact state: the synced modes hold window counts, and leased mode
/// keeps a key's quota in its object's ledger of slices, which the keys' states would bypass.
fn exact_only(pc: &PolicyConfig) -> Result<(), ApiError> {
    match pc.mode() {
        Mode::Exact => Ok(()),
        Mode::Leased => Err(ApiError::bad_request(
            "unsupported_in_leased_mode",
            format!("policy {:?} has leaseTtl = {} ms: concurrency leases need the keys' exact state", pc.name, pc.lease_ms),
        )),
        Mode::Synced | Mode::Local => Err(ApiError::bad_request(
            "unsupported_in_sync_mode",
            format!(
                "policy {:?} has syncRate = {}: concurrency leases need the keys' exact state (syncRate = 0)",
                pc.name, pc.sync_ms
            ),
        )),
    }
}

/// A lease's 64-bit id, drawn at random (two 32-bit draws; 0, the anonymous id, is redrawn).
fn random_id() -> u64 {
    let draw = || (worker::js_sys::Math::random() * 4_294_967_296.0) as u64 & 0xffff_ffff;
    loop {
        let id = draw() << 32 | draw();
        if id != 0 {
            return id;
        }
    }
}

/// An expiry as the answers carry it: ms since the epoch, as the npm limiter's `expiresAt`.
fn expiry_ms(t: Nanos) -> u64 {
    t.as_nanos() / 1_000_000
}

/// The keys of a request: `keys`, or the one `key`.
fn keys_of(r: &HitRequest<'_>) -> Vec<String> {
    r.keys.clone().unwrap_or_else(|| vec![r.key.clone()])
}

/// `POST /v1/acquire`: the body of `/v1/limit`. Answers the decision with `lease` (the token
/// to release or renew with; `null` when no slot was taken: a denial, a listed key, a failed
/// object's fail mode, a policy without a concurrency limit) and `expiresAt` (ms, or `null`).
pub async fn acquire(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let status = api_request::deny_status_param(&req.url()?)?;
    let bytes = api_request::read_body(&mut req).await?;
    let r = api_request::parse(&bytes, cfg, &|name| req.headers().get(name).ok().flatten())?;
    acquire_hit(env, &r, status).await
}

/// `/v1/acquire`'s decision of a parsed hit (also `/v1/limit`'s on a policy with a
/// concurrency limit, which acquires as the npm limiter's `limit` does: a counted hit there
/// would take a slot no one could release). `status`: the `?status=` override of a denial.
pub async fn acquire_hit(env: &Env, r: &HitRequest<'_>, status: Option<u16>) -> Result<Response, ApiError> {
    let keys = keys_of(r);
    let (answer, taken) = acquire_answer(env, r.policy, &keys, r.cost, &clock_of(r.now), None).await?;
    let mut answer = with_lease(answer, taken.map(|(lease, at)| (lease.to_token(), at)));
    answer.set_deny_status(status.unwrap_or(r.policy.deny_status));
    Ok(answer.to_response())
}

/// An acquisition of `cost` on `keys` (`ip`: the client address proxy mode keyed by, for the
/// lists): the core's answer, and the lease with its expiry when a slot was taken (`None`: a
/// denial, a listed key, a failed object's fail mode, a policy without a concurrency limit).
pub async fn acquire_answer(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    cost: u64,
    clock: &dyn Clock,
    ip: Option<&str>,
) -> Result<(Answer, Option<(LeaseToken, Nanos)>), ApiError> {
    exact_only(pc)?;
    let (outcome, taken) = match controls::lists(pc, keys, ip) {
        Some(listed) => (Outcome::Listed(listed, clock.now()), None),
        None => {
            let id = random_id();
            match under_leases(env, pc, keys, clock, &mut |states, now| {
                pc.policy.acquire(states, now, cost, id).map(|d| {
                    let at = pc.policy.lease_expires_at(states, id);
                    (d, at)
                })
            })
            .await?
            {
                Round::Decided(Ok((d, at)), now) => {
                    let taken = match (d.allowed, at) {
                        (true, Some(at)) => Some((LeaseToken { id, policy: pc.name.clone(), keys: keys.to_vec() }, at)),
                        _ => None,
                    };
                    (Outcome::Decided(d, now), taken)
                }
                Round::Decided(Err(e), _) => {
                    return Err(ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost"))
                }
                Round::Answered(o) => (o, None),
            }
        }
    };
    Ok((respond::answer(pc, &outcome, keys, cost), taken))
}

/// `answer` with its `lease` and `expiresAt` (`null`: no slot was taken).
pub fn with_lease(answer: Answer, taken: Option<(String, Nanos)>) -> Answer {
    let (lease, at) = match taken {
        Some((token, at)) => (Value::String(token), json!(expiry_ms(at))),
        None => (Value::Null, Value::Null),
    };
    answer.with(LEASE, lease).with(EXPIRES_AT, at)
}

/// A validated `/v1/release` or `/v1/renew` body.
#[derive(Debug)]
pub struct LeaseRequest<'c> {
    /// The policy the lease names.
    pub policy: &'c PolicyConfig,
    /// The lease, decoded.
    pub lease: LeaseToken,
    /// The test clock (only with the test switch on).
    pub now: Option<Nanos>,
}

/// Parses and validates a `/v1/release` or `/v1/renew` body: `{ lease, now }`. Nothing is
/// touched before it passes.
pub fn parse_lease<'c>(body: &[u8], cfg: &'c Config) -> Result<LeaseRequest<'c>, ApiError> {
    let obj = &api_request::json_object(body, &LEASE_BODY_FIELDS, r#"{"lease":"..."}"#)?;
    let token = match obj.get(LEASE) {
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request("missing_field", "lease is required: the token /v1/acquire answered")
                .with_field(LEASE))
        }
        Some(Value::String(t)) => t,
        Some(other) => {
            return Err(
                ApiError::bad_request("invalid_type", format!("lease must be a string, got {other}")).with_field(LEASE)
            )
        }
    };
    let lease = LeaseToken::from_token(token).map_err(lease_error)?;
    let now = crate::request::clock::requested(obj.get("now"), cfg.test_hooks())?;
    let policy = find_policy(cfg, &lease.policy).map_err(|e| e.with_field(LEASE))?;
    api_request::parse_keys(&json!(lease.keys))
        .map_err(|e| ApiError::bad_request("invalid_lease", e.message).with_field(LEASE))?;
    Ok(LeaseRequest { policy, lease, now })
}

/// The core's refusal of a lease, as an API error (field `lease`).
fn lease_error(e: LeaseError) -> ApiError {
    let status = if matches!(e, LeaseError::UnknownLease) { UNKNOWN_LEASE_STATUS } else { 400 };
    ApiError::new(status, e.code(), e.to_string()).with_field(LEASE)
}

/// `POST /v1/release`: frees the lease on every key; answers the keys' figures after it with
/// `released` (`false`: released already, expired or reset; nothing changed).
pub async fn release(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bytes = api_request::read_body(&mut req).await?;
    let l = parse_lease(&bytes, cfg)?;
    let pc = l.policy;
    exact_only(pc)?;
    let keys = &l.lease.keys;
    match release_lease(env, pc, &l.lease, &clock_of(l.now)).await? {
        Round::Decided(r, now) => Ok(released_answer(pc, &r, now, keys).to_response()),
        Round::Answered(o) => Err(not_done(respond::answer(pc, &o, keys, 1), "released")),
    }
}

/// Frees `lease` on every key of it, under the keys' objects' leases (the core's release).
pub async fn release_lease(
    env: &Env,
    pc: &PolicyConfig,
    lease: &LeaseToken,
    clock: &dyn Clock,
) -> Result<Round<Released>, ApiError> {
    let id = lease.id;
    under_leases(env, pc, &lease.keys, clock, &mut |states, now| pc.policy.release(states, now, id)).await
}

/// `POST /v1/renew`: extends the lease to now + `leaseTtl` on every key; answers the keys'
/// figures with the new `expiresAt`, or 409 `unknown_lease` (changing nothing).
pub async fn renew(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bytes = api_request::read_body(&mut req).await?;
    let l = parse_lease(&bytes, cfg)?;
    let pc = l.policy;
    exact_only(pc)?;
    let (id, keys) = (l.lease.id, &l.lease.keys);
    let clock = clock_of(l.now);
    match under_leases(env, pc, keys, &clock, &mut |states, now| pc.policy.renew(states, now, id)).await? {
        Round::Decided(Ok(r), now) => Ok(renewed_answer(pc, &r, now, keys).to_response()),
        Round::Decided(Err(e), _) => Err(lease_error(e)),
        Round::Answered(o) => Err(not_done(respond::answer(pc, &o, keys, 1), "renewed")),
    }
}

/// The keys' figures after a release, with `released`.
pub fn released_answer(pc: &PolicyConfig, r: &Released, now: Nanos, keys: &[String]) -> Answer {
    keys_answer(pc, &r.decision, now, keys).with(RELEASED, json!(r.released))
}

/// The keys' figures after a renewal, with the new `expiresAt`.
pub fn renewed_answer(pc: &PolicyConfig, r: &Renewed, now: Nanos, keys: &[String]) -> Answer {
    keys_answer(pc, &r.decision, now, keys).with(EXPIRES_AT, json!(expiry_ms(r.expires_at)))
}

/// The keys' figures after a release or renewal (counting nothing), answered 200.
fn keys_answer(pc: &PolicyConfig, d: &tollgate::PolicyDecision, now: Nanos, keys: &[String]) -> Answer {
    let mut a = respond::of_keys(pc, d, now, keys);
    a.status = 200;
    a
}

/// A release or renewal no object decided: 503 `unavailable` (retry; nothing changed).
fn not_done(a: Answer, what: &str) -> ApiError {
    let why = a.core.reason.degraded().unwrap_or("unavailable");
    crate::calls::do_client::unavailable("key", format!("nothing was {what} ({why})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(test_mode: bool) -> Config {
        Config::of_policies(&json!({
            "gpu": { "limits": [{ "name": "in-flight", "algorithm": "concurrency", "limit": 2, "leaseTtl": "30s" }] }
        }), test_mode)
    }

    fn token(policy: &str, keys: &[&str]) -> String {
        let keys = keys.iter().map(|k| k.to_string()).collect();
        LeaseToken { id: 7, policy: policy.into(), keys }.to_token()
    }

    #[test]
    fn a_lease_names_its_policy_and_keys_in_its_token() {
        let c = config(true);
        let body = json!({ "lease": token("gpu", &["u1", "o1"]), "now": 1000 }).to_string();
        let l = parse_lease(body.as_bytes(), &c).unwrap();
        assert_eq!((l.policy.name.as_str(), l.lease.id, l.lease.keys.len()), ("gpu", 7, 2));
        assert_eq!(l.now, Some(Nanos::from_secs(1)));
    }

    #[test]
    fn every_mistake_of_a_lease_body_has_its_code_and_field() {
        let c = config(false);
        let good = token("gpu", &["k"]);
        let cases: [(Value, &str, Option<&str>); 7] = [
            (json!({}), "missing_field", Some("lease")),
            (json!({ "lease": null }), "missing_field", Some("lease")),
            (json!({ "lease": 5 }), "invalid_type", Some("lease")),
            (json!({ "lease": "%%" }), "invalid_lease", Some("lease")),
            (json!({ "lease": token("nope", &["k"]) }), "unknown_policy", Some("lease")),
            (json!({ "lease": good, "now": 5 }), "test_mode_disabled", None),
            (json!({ "lease": good, "cost": 5 }), "unknown_field", Some("cost")),
        ];
        for (body, code, field) in cases {
            let e = parse_lease(body.to_string().as_bytes(), &c).unwrap_err();
            assert_eq!((e.status, e.code, e.field.as_deref()), (400, code, field), "{body}");
        }
    }

    #[test]
    fn an_unknown_lease_is_a_conflict() {
        let e = lease_error(LeaseError::UnknownLease);
        assert_eq!((e.status, e.code, e.field.as_deref()), (409, "unknown_lease", Some("lease")));
    }
}
