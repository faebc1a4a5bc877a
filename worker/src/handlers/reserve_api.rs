//! `POST /v1/reserve` and `POST /v1/settle`: a hit admitted on an estimate of its cost, then
//! corrected with the actual cost (docs/reserve.md). The core decides both (`Policy::reserve`,
//! `Policy::settle`) over the keys' exact state, as exact_keys.rs runs it; the token is
//! `tollgate::reserve::Reservation`.

use serde_json::{json, Value};
use tollgate::reserve::{Reservation, SettleError, Settled};
use tollgate::Nanos;
use worker::{Env, Request, Response};

use crate::base::errors::ApiError;
use crate::config::settings::{Config, PolicyConfig};
use crate::handlers::exact_keys::{self, figures_after};
use crate::request::api_request;
use crate::respond::answer::Answer;

/// The fields of a `/v1/settle` body (docs/vocabulary.md).
pub const SETTLE_FIELDS: [&str; 3] = ["reservation", "actual", "now"];

/// Who needs the keys' exact state, for `exact_keys::exact_only`'s message.
const NEEDS: &str = "reserve and settle need";

/// `POST /v1/reserve`: the body of `/v1/limit`, with the estimate as `cost`. Answers the
/// decision with `reservation`: the token to settle with when admitted, `null` when nothing
/// was reserved (a denial, a listed key, a failed object's fail mode).
pub async fn reserve(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let (r, status) = api_request::read_hit(&mut req, cfg).await?;
    let (pc, keys, estimate) = (r.policy, r.all_keys(), r.cost);
    let id = exact_keys::random_id();
    exact_keys::open(
        env,
        &r,
        status,
        NEEDS,
        &mut |states, now| {
            let d = pc.policy.reserve(states, now, estimate, id)?;
            let token = d.allowed.then(|| Reservation { id, estimate, policy: pc.name.clone(), keys: keys.to_vec() });
            Ok((d, token.map(|r| r.to_token())))
        },
        |a, token| a.with("reservation", token.map_or(Value::Null, Value::String)),
    )
    .await
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
    let reservation =
        exact_keys::token(obj, "reservation", "/v1/reserve", |t| Reservation::from_token(t).map_err(settle_error))?;
    let actual = match obj.get("actual") {
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request("missing_field", "actual is required: the hit's actual cost")
                .with_field("actual"))
        }
        Some(a) => api_request::whole(a, "actual", 0, "invalid_cost")?,
    };
    let now = crate::request::clock::requested(obj.get("now"), cfg.test_hooks())?;
    let policy =
        exact_keys::named(cfg, ("reservation", "invalid_reservation"), NEEDS, &reservation.policy, &reservation.keys)?;
    Ok(SettleRequest { policy, reservation, actual, now })
}

/// The core's refusal of a settlement, as an API error (field `reservation`).
fn settle_error(e: SettleError) -> ApiError {
    exact_keys::refused(e.code(), e.to_string(), matches!(e, SettleError::UnknownReservation), "reservation")
}

/// `POST /v1/settle`: closes the reservation with the actual cost and answers the keys'
/// figures after it, with `refunded`, `charged` and `forgiven`. Nothing settled (503) leaves
/// the reservation open.
pub async fn settle(mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bytes = api_request::read_body(&mut req).await?;
    let s = parse_settle(&bytes, cfg)?;
    let (pc, actual) = (s.policy, s.actual);
    let Reservation { id, estimate, ref keys, .. } = s.reservation;
    let op = &mut |states: &mut [_], now| pc.policy.settle(states, now, id, estimate, actual).map_err(settle_error);
    exact_keys::close(env, pc, keys, s.now, "settled", op, |settled, now| settled_answer(pc, &settled, now, keys)).await
}

/// The keys' figures after a settlement, with what it did.
pub fn settled_answer(pc: &PolicyConfig, s: &Settled, now: Nanos, keys: &[String]) -> Answer {
    figures_after(pc, &s.decision, now, keys)
        .with("refunded", json!(s.refunded))
        .with("charged", json!(s.charged))
        .with("forgiven", json!(s.forgiven))
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
