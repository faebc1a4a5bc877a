//! `POST /v1/acquire`, `POST /v1/release` and `POST /v1/renew`: a slot of a policy's
//! concurrency limits held by a lease (docs/concurrency.md). The core decides all three
//! (`Policy::acquire`, `Policy::release`, `Policy::renew`) over the keys' exact state, as
//! exact_keys.rs runs it; the token is `tollgate::concurrency::LeaseToken`.

use serde_json::{json, Value};
use tollgate::concurrency::{LeaseError, LeaseToken, Released, Renewed, LEASE_FIELDS};
use tollgate::Nanos;
use worker::{Env, Request, Response};

use crate::base::clock::Clock;
use crate::base::errors::ApiError;
use crate::decide::multi_key::{under_leases, Round};
use crate::request::clock::clock_of;
use crate::config::settings::{Config, PolicyConfig};
use crate::handlers::exact_keys::{self, figures_after};
use crate::request::api_request::{self, HitRequest};
use crate::respond::answer::Answer;

const LEASE: &str = LEASE_FIELDS[0];
const EXPIRES_AT: &str = LEASE_FIELDS[1];
const RELEASED: &str = LEASE_FIELDS[2];

/// The fields of a `/v1/release` and a `/v1/renew` body (docs/vocabulary.md).
pub const LEASE_BODY_FIELDS: [&str; 2] = ["lease", "now"];

/// Who needs the keys' exact state, for `exact_keys::exact_only`'s message.
const NEEDS: &str = "concurrency leases need";

/// An expiry as the answers carry it: ms since the epoch, as the npm limiter's `expiresAt`.
fn expiry_ms(t: Nanos) -> u64 {
    t.as_nanos() / 1_000_000
}

/// `POST /v1/acquire`: the body of `/v1/limit`. Answers the decision with `lease` (the token
/// to release or renew with; `null` when no slot was taken: a denial, a listed key, a failed
/// object's fail mode, a policy without a concurrency limit) and `expiresAt` (ms, or `null`).
pub async fn acquire(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let (r, status) = api_request::read_hit(&mut req, cfg).await?;
    acquire_hit(env, &r, status).await
}

/// `/v1/acquire`'s decision of a parsed hit (also `/v1/limit`'s on a policy with a
/// concurrency limit, which acquires as the npm limiter's `limit` does: a counted hit there
/// would take a slot no one could release). `status`: the `?status=` override of a denial.
pub async fn acquire_hit(env: &Env, r: &HitRequest<'_>, status: Option<u16>) -> Result<Response, ApiError> {
    let (answer, taken) = acquire_answer(env, r.policy, r.all_keys(), r.cost, &clock_of(r.now), None).await?;
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
    let id = exact_keys::random_id();
    let lease = || LeaseToken { id, policy: pc.name.clone(), keys: keys.to_vec() };
    let op = &mut |states: &mut [_], now| {
        let d = pc.policy.acquire(states, now, cost, id)?;
        let taken = pc.policy.lease_expires_at(states, id).filter(|_| d.allowed).map(|at| (lease(), at));
        Ok((d, taken))
    };
    exact_keys::open_answer(env, pc, keys, cost, clock, ip, NEEDS, op).await
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
    let lease = exact_keys::token(obj, LEASE, "/v1/acquire", |t| LeaseToken::from_token(t).map_err(lease_error))?;
    let now = crate::request::clock::requested(obj.get("now"), cfg.test_hooks())?;
    let policy = exact_keys::named(cfg, (LEASE, "invalid_lease"), NEEDS, &lease.policy, &lease.keys)?;
    Ok(LeaseRequest { policy, lease, now })
}

/// The core's refusal of a lease, as an API error (field `lease`).
fn lease_error(e: LeaseError) -> ApiError {
    exact_keys::refused(e.code(), e.to_string(), matches!(e, LeaseError::UnknownLease), LEASE)
}

/// `POST /v1/release`: frees the lease on every key; answers the keys' figures after it with
/// `released` (`false`: released already, expired or reset; nothing changed).
pub async fn release(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bytes = api_request::read_body(&mut req).await?;
    let l = parse_lease(&bytes, cfg)?;
    let (pc, id, keys) = (l.policy, l.lease.id, &l.lease.keys);
    let op = &mut |states: &mut [_], now| Ok(pc.policy.release(states, now, id));
    exact_keys::close(env, pc, keys, l.now, "released", op, |r, now| released_answer(pc, &r, now, keys)).await
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
    let (pc, id, keys) = (l.policy, l.lease.id, &l.lease.keys);
    let op = &mut |states: &mut [_], now| pc.policy.renew(states, now, id).map_err(lease_error);
    exact_keys::close(env, pc, keys, l.now, "renewed", op, |r, now| renewed_answer(pc, &r, now, keys)).await
}

/// The keys' figures after a release, with `released`.
pub fn released_answer(pc: &PolicyConfig, r: &Released, now: Nanos, keys: &[String]) -> Answer {
    figures_after(pc, &r.decision, now, keys).with(RELEASED, json!(r.released))
}

/// The keys' figures after a renewal, with the new `expiresAt`.
pub fn renewed_answer(pc: &PolicyConfig, r: &Renewed, now: Nanos, keys: &[String]) -> Answer {
    figures_after(pc, &r.decision, now, keys).with(EXPIRES_AT, json!(expiry_ms(r.expires_at)))
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
