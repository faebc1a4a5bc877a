//! What the operations the core runs over the keys' exact state share: `/v1/reserve` and
//! `/v1/acquire` open a reservation or a lease on an admitted hit; `/v1/settle`, `/v1/release`
//! and `/v1/renew` close or extend one, named by the token the first answered.
//!
//! The core decides each (`Policy::reserve`, `acquire`, `settle`, `release`, `renew`): the
//! keys' ledgers are part of their state bytes, so the isolate runs them over the keys' states
//! under the several-keys protocol's leases (`multi_key::under_leases`), one key or sixteen,
//! all or nothing. The handlers draw the id, build the token (naming the policy and the keys)
//! and turn the core's answers and errors into HTTP.

use serde_json::{json, Map, Value};
use tollgate::{CheckError, Nanos, PolicyDecision, PolicyState};
use worker::{Env, Response};

use crate::base::clock::Clock;
use crate::base::errors::ApiError;
use crate::config::settings::{find_policy, Config, Mode, PolicyConfig};
use crate::decide::controls;
use crate::decide::multi_key::{under_leases, Round};
use crate::request::api_request::{self, HitRequest};
use crate::request::clock::clock_of;
use crate::respond::answer::{self as respond, Answer, Outcome};

/// The status of an operation on a token that is not open (a settled reservation, a released
/// lease): the request is well formed, the keys' state refuses it.
pub const UNKNOWN_TOKEN_STATUS: u16 = 409;

/// The keys' exact state is where the ledgers live (`needs`: who needs it, for the message):
/// the synced modes hold window counts, and leased mode keeps a key's quota in its object's
/// ledger of slices, which the keys' states would bypass.
pub fn exact_only(pc: &PolicyConfig, needs: &str) -> Result<(), ApiError> {
    let (code, why) = match pc.mode() {
        Mode::Exact => return Ok(()),
        Mode::Leased => ("unsupported_in_leased_mode", format!("leaseTtl = {} ms", pc.lease_ms)),
        Mode::Synced | Mode::Local => ("unsupported_in_sync_mode", format!("syncRate = {}", pc.sync_ms)),
    };
    let m = format!("policy {:?} has {why}: {needs} the keys' exact state (syncRate = 0, no leaseTtl)", pc.name);
    Err(ApiError::bad_request(code, m))
}

/// A 64-bit id drawn at random (two 32-bit draws; 0, the core's anonymous lease, is redrawn).
pub fn random_id() -> u64 {
    let draw = || (worker::js_sys::Math::random() * 4_294_967_296.0) as u64 & 0xffff_ffff;
    loop {
        let id = draw() << 32 | draw();
        if id != 0 {
            return id;
        }
    }
}

/// The core's operation over the keys' states at an instant.
pub type KeysOp<'f, R> = dyn FnMut(&mut [Option<PolicyState>], Nanos) -> R + 'f;

/// What the core made beside an admitted decision (a token), or nothing.
pub type Made<T> = Result<(PolicyDecision, Option<T>), CheckError>;

/// Decides `r`'s hit over its keys' states with `op` (the core's `reserve` or `acquire` under
/// a [`random_id`], which also say what they opened), and answers the decision with `with` of
/// what was opened: listed keys, failed objects and contended keys open nothing. A denial is
/// answered with `status` (`?status=`) or the policy's status.
pub async fn open<T>(
    env: &Env,
    r: &HitRequest<'_>,
    status: Option<u16>,
    needs: &str,
    op: &mut KeysOp<'_, Made<T>>,
    with: impl FnOnce(Answer, Option<T>) -> Answer,
) -> Result<Response, ApiError> {
    let (answer, made) = open_answer(env, r.policy, r.all_keys(), r.cost, &clock_of(r.now), None, needs, op).await?;
    let mut answer = with(answer, made);
    answer.set_deny_status(status.unwrap_or(r.policy.deny_status));
    Ok(answer.to_response())
}

/// [`open`]'s answer (before a route's status) and what was opened, for a hit of `cost` on
/// `keys` at `clock` (`ip`: the client address proxy mode keyed by, for the lists).
#[allow(clippy::too_many_arguments)]
pub async fn open_answer<T>(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    cost: u64,
    clock: &dyn Clock,
    ip: Option<&str>,
    needs: &str,
    op: &mut KeysOp<'_, Made<T>>,
) -> Result<(Answer, Option<T>), ApiError> {
    exact_only(pc, needs)?;
    let (outcome, made) = match controls::lists(pc, keys, ip) {
        Some(listed) => (Outcome::Listed(listed, clock.now()), None),
        None => match under_leases(env, pc, keys, clock, op).await? {
            Round::Decided(Ok((d, made)), now) => (Outcome::Decided(d, now), made),
            Round::Decided(Err(e), _) => {
                return Err(ApiError::bad_request("invalid_cost", e.to_string()).with_field("cost"))
            }
            Round::Answered(o) => (o, None),
        },
    };
    Ok((respond::answer(pc, &outcome, keys, cost), made))
}

/// Runs `op` over the keys of a token (`/v1/settle`, `/v1/release`, `/v1/renew`; its policy
/// checked by [`named`]) and answers
/// with `answer` of its result; an error of `op` is the answer as it is. When no object decided
/// (a failed object, contended keys), nothing changed: 503 `unavailable`, "nothing was
/// `done`", and the caller may try again.
pub async fn close<R>(
    env: &Env,
    pc: &PolicyConfig,
    keys: &[String],
    now: Option<Nanos>,
    done: &str,
    op: &mut KeysOp<'_, Result<R, ApiError>>,
    answer: impl FnOnce(R, Nanos) -> Answer,
) -> Result<Response, ApiError> {
    let clock = clock_of(now);
    match under_leases(env, pc, keys, &clock, op).await? {
        Round::Decided(Ok(r), now) => Ok(answer(r, now).to_response()),
        Round::Decided(Err(e), _) => Err(e),
        Round::Answered(o) => {
            let a = respond::answer(pc, &o, keys, 1);
            let why = a.core.reason.degraded().unwrap_or("unavailable");
            Err(crate::calls::do_client::unavailable("key", format!("nothing was {done} ({why})")))
        }
    }
}

/// The keys' figures after a decision that counted nothing (a settlement, a release, a
/// renewal), answered 200.
pub fn figures_after(pc: &PolicyConfig, d: &PolicyDecision, now: Nanos, keys: &[String]) -> Answer {
    let mut a = respond::of_keys(pc, d, now, keys);
    a.status = 200;
    a
}

/// A body's token `field`, a string, decoded by `decode`; `from` names the route that
/// answered it, for the message of a missing one.
pub fn token<T>(
    obj: &Map<String, Value>,
    field: &'static str,
    from: &str,
    decode: impl FnOnce(&str) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    match obj.get(field) {
        None | Some(Value::Null) => {
            Err(ApiError::bad_request("missing_field", format!("{field} is required: the token {from} answered"))
                .with_field(field))
        }
        Some(Value::String(t)) => decode(t),
        Some(other) => {
            Err(ApiError::bad_request("invalid_type", format!("{field} must be a string, got {other}"))
                .with_field(field))
        }
    }
}

/// The configured policy a token names, in exact mode ([`exact_only`]), its keys checked as a
/// body's `keys` are (a bad one is `invalid` at `field`).
pub fn named<'c>(
    cfg: &'c Config,
    (field, invalid): (&'static str, &'static str),
    needs: &str,
    policy: &str,
    keys: &[String],
) -> Result<&'c PolicyConfig, ApiError> {
    let pc = find_policy(cfg, policy).map_err(|e| e.with_field(field))?;
    api_request::parse_keys(&json!(keys)).map_err(|e| ApiError::bad_request(invalid, e.message).with_field(field))?;
    exact_only(pc, needs)?;
    Ok(pc)
}

/// The core's refusal of a token (`unknown`: it is not open; 409), as an API error at `field`.
pub fn refused(code: &'static str, message: String, unknown: bool, field: &'static str) -> ApiError {
    ApiError::new(if unknown { UNKNOWN_TOKEN_STATUS } else { 400 }, code, message).with_field(field)
}
