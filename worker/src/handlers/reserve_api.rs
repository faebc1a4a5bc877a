//! `POST /v1/reserve` and `POST /v1/settle`: a hit admitted on an estimate of its cost, then
//! corrected with the actual cost (docs/reserve.md).
//!
//! The core decides both (`Policy::reserve`, `Policy::settle`): the keys' ledgers of open
//! reservations are part of their state bytes, so the isolate runs them over the keys' states
//! under the several-keys protocol's leases (`multi_key::under_leases`), one key or sixteen,
//! all or nothing, as `/v1/limit` decides several keys. The Worker draws the reservation's id,
//! builds its token (`tollgate::reserve::Reservation`, naming the policy and the keys) and
//! turns the core's answers and errors into HTTP.

use serde_json::{json, Value};
use tollgate::reserve::{Reservation, SettleError, Settled};
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

/// The fields of a `/v1/settle` body (docs/vocabulary.md).
pub const SETTLE_FIELDS: [&str; 3] = ["reservation", "actual", "now"];

/// The status of a settlement of a reservation that is not open: the request is well formed,
/// the keys' state refuses it.
pub const UNKNOWN_RESERVATION_STATUS: u16 = 409;

/// Reserve and settle decide in the key's objects: the synced modes hold window counts, not
/// the state a reservation's ledger lives in; leased mode keeps a key's quota in its object's
/// ledger of slices (object/quota.rs), which the keys' states would bypass.
fn exact_only(pc: &PolicyConfig) -> Result<(), ApiError> {
    match pc.mode() {
        Mode::Exact => Ok(()),
        Mode::Leased => Err(ApiError::bad_request(
            "unsupported_in_leased_mode",
            format!(
                "policy {:?} has leaseTtl = {} ms: reserve and settle need the keys' exact state (no leaseTtl)",
                pc.name, pc.lease_ms
            ),
        )),
        Mode::Synced | Mode::Local => Err(ApiError::bad_request(
            "unsupported_in_sync_mode",
            format!(
                "policy {:?} has syncRate = {}: reserve and settle need the keys' exact state (syncRate = 0)",
                pc.name, pc.sync_ms
            ),
        )),
    }
}

/// A reservation's 64-bit id, drawn at random (two 32-bit draws).
fn random_id() -> u64 {
    let draw = || (worker::js_sys::Math::random() * 4_294_967_296.0) as u64 & 0xffff_ffff;
    draw() << 32 | draw()
}

/// The keys of a request: `keys`, or the one `key`.
fn keys_of(r: &HitRequest<'_>) -> Vec<String> {
    r.keys.clone().unwrap_or_else(|| vec![r.key.clone()])
}

/// `POST /v1/reserve`: the body of `/v1/limit`, with the estimate as `cost`. Answers the
/// decision with `reservation`: the token to settle with when admitted, `null` when nothing
/// was reserved (a denial, a listed key, a failed object's fail mode).
pub async fn reserve(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let status = api_request::deny_status_param(&req.url()?)?;
    let bytes = crate::request::api_request::read_body(&mut req).await?;
    let r = api_request::parse(&bytes, cfg, &|name| req.headers().get(name).ok().flatten())?;
    let pc = r.policy;
    exact_only(pc)?;
    let keys = keys_of(&r);
    let clock = clock_of(r.now);
    let (outcome, token) = match controls::lists(pc, &keys, None) {
        Some(listed) => (Outcome::Listed(listed, clock.now()), None),
        None => {
            let id = random_id();
            let estimate = r.cost;
            match under_leases(env, pc, &keys, &clock, &mut |states, now| pc.policy.reserve(states, now, estimate, id))
                .await?
            {
                Round::Decided(Ok(d), now) => {
                    let token = d
                        .allowed
                        .then(|| Reservation { id, estimate, policy: pc.name.clone(), keys: keys.clone() }.to_token());
                    (Outcome::Decided(d, now), token)
                }
                Round::Decided(Err(e), _) => {
                    return Err(ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost"))
                }
                Round::Answered(o) => (o, None),
            }
        }
    };
    let mut answer = respond::answer(pc, &outcome, &keys, r.cost).with("reservation", token.map_or(Value::Null, Value::String));
    answer.set_deny_status(status.unwrap_or(pc.deny_status));
    Ok(answer.to_response())
}

/// A validated `/v1/settle` body.
#[derive(Debug)]
pub struct SettleRequest<'c> {
    /// The policy the reservation names.
    pub policy: &'c PolicyConfig,
    /// The reservation, decoded.
    pub reservation: Reservation,
    /// The actual cost.
    pub actual: u64,
    /// The test clock (only with the test switch on).
    pub now: Option<Nanos>,
}

/// Parses and validates a `/v1/settle` body: `{ reservation, actual, now }`. Nothing is
/// touched before it passes.
pub fn parse_settle<'c>(body: &[u8], cfg: &'c Config) -> Result<SettleRequest<'c>, ApiError> {
    let obj = &api_request::json_object(body, &SETTLE_FIELDS, r#"{"reservation":"...","actual":120}"#)?;
    let token = match obj.get("reservation") {
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request(
                "missing_field",
                "reservation is required: the token /v1/reserve answered",
            )
            .with_field("reservation"))
        }
        Some(Value::String(t)) => t,
        Some(other) => {
            return Err(ApiError::bad_request("invalid_type", format!("reservation must be a string, got {other}"))
                .with_field("reservation"))
        }
    };
    let reservation = Reservation::from_token(token).map_err(settle_error)?;
    let actual = match obj.get("actual") {
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request("missing_field", "actual is required: the hit's actual cost")
                .with_field("actual"))
        }
        Some(a) => api_request::whole(a, "actual", 0, "invalid_cost")?,
    };
    let now = crate::request::clock::requested(obj.get("now"), cfg.test_hooks())?;
    let policy = find_policy(cfg, &reservation.policy).map_err(|e| e.with_field("reservation"))?;
    api_request::parse_keys(&json!(reservation.keys))
        .map_err(|e| ApiError::bad_request("invalid_reservation", e.message).with_field("reservation"))?;
    Ok(SettleRequest { policy, reservation, actual, now })
}

/// The core's refusal of a settlement, as an API error (field `reservation`).
fn settle_error(e: SettleError) -> ApiError {
    let status = if matches!(e, SettleError::UnknownReservation) { UNKNOWN_RESERVATION_STATUS } else { 400 };
    ApiError::new(status, e.code(), e.to_string()).with_field("reservation")
}

/// `POST /v1/settle`: closes the reservation with the actual cost and answers the keys'
/// figures after it, with `refunded`, `charged` and `forgiven`.
pub async fn settle(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bytes = crate::request::api_request::read_body(&mut req).await?;
    let s = parse_settle(&bytes, cfg)?;
    let pc = s.policy;
    exact_only(pc)?;
    let Reservation { id, estimate, ref keys, .. } = s.reservation;
    let actual = s.actual;
    let clock = clock_of(s.now);
    let answer = match under_leases(env, pc, keys, &clock, &mut |states, now| {
        pc.policy.settle(states, now, id, estimate, actual)
    })
    .await?
    {
        Round::Decided(Ok(settled), now) => settled_answer(pc, &settled, now, keys),
        Round::Decided(Err(e), _) => return Err(settle_error(e)),
        // An object failed or the keys stayed contended: nothing was settled, and the
        // reservation stays open (the caller may settle it again).
        Round::Answered(o) => return Err(not_settled(respond::answer(pc, &o, keys, 1))),
    };
    Ok(answer.to_response())
}

/// The keys' figures after a settlement, with what it did.
pub fn settled_answer(pc: &PolicyConfig, s: &Settled, now: Nanos, keys: &[String]) -> Answer {
    let mut a = respond::of_keys(pc, &s.decision, now, keys)
        .with("refunded", json!(s.refunded))
        .with("charged", json!(s.charged))
        .with("forgiven", json!(s.forgiven));
    a.status = 200;
    a
}

/// A settlement no object decided: 503 `unavailable` (retry; the reservation is still open).
fn not_settled(a: Answer) -> ApiError {
    let why = a.core.reason.degraded().unwrap_or("unavailable");
    crate::calls::do_client::unavailable("key", format!("nothing was settled ({why})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(test_mode: bool) -> Config {
        Config::of_policies(&json!({
            "api": { "limits": [{ "name": "per-minute", "algorithm": "fixed-window", "quota": "100/m" }] }
        }), test_mode)
    }

    fn token(policy: &str, keys: &[&str]) -> String {
        let keys = keys.iter().map(|k| k.to_string()).collect();
        Reservation { id: 7, estimate: 30, policy: policy.into(), keys }.to_token()
    }

    #[test]
    fn a_settlement_names_its_policy_and_keys_in_its_token() {
        let c = config(true);
        let body = json!({ "reservation": token("api", &["u1", "o1"]), "actual": 0, "now": 1000 }).to_string();
        let s = parse_settle(body.as_bytes(), &c).unwrap();
        assert_eq!((s.policy.name.as_str(), s.reservation.keys.len(), s.actual), ("api", 2, 0));
        assert_eq!(s.now, Some(Nanos::from_secs(1)));
    }

    #[test]
    fn every_mistake_of_a_settlement_has_its_code_and_field() {
        let c = config(false);
        let good = token("api", &["k"]);
        let cases: [(Value, &str, Option<&str>); 9] = [
            (json!({ "actual": 1 }), "missing_field", Some("reservation")),
            (json!({ "reservation": null, "actual": 1 }), "missing_field", Some("reservation")),
            (json!({ "reservation": [], "actual": 1 }), "invalid_type", Some("reservation")),
            (json!({ "reservation": "%%", "actual": 1 }), "invalid_reservation", Some("reservation")),
            (json!({ "reservation": token("nope", &["k"]), "actual": 1 }), "unknown_policy", Some("reservation")),
            (json!({ "reservation": token("api", &[""]), "actual": 1 }), "invalid_reservation", Some("reservation")),
            (json!({ "reservation": good, "actual": -1 }), "invalid_cost", Some("actual")),
            (json!({ "reservation": good, "actual": 1, "now": 5 }), "test_mode_disabled", None),
            (json!({ "reservation": good, "actual": 1, "cost": 5 }), "unknown_field", Some("cost")),
        ];
        for (body, code, field) in cases {
            let e = parse_settle(body.to_string().as_bytes(), &c).unwrap_err();
            assert_eq!((e.status, e.code, e.field.as_deref()), (400, code, field), "{body}");
        }
        assert_eq!(parse_settle(b"[]", &c).unwrap_err().code, "invalid_body");
    }

    #[test]
    fn an_unknown_reservation_is_a_conflict_and_a_bad_one_a_bad_request() {
        let e = settle_error(SettleError::UnknownReservation);
        assert_eq!((e.status, e.code, e.field.as_deref()), (409, "unknown_reservation", Some("reservation")));
        let e = settle_error(SettleError::InvalidReservation("x"));
        assert_eq!((e.status, e.code), (400, "invalid_reservation"));
    }
}
