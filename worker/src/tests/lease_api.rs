//! `POST /v1/test/lease/{policy}/{key}` (TEST_MODE on only): one step of the several-keys
//! protocol by hand, so tests can play an isolate that takes a key's lease and dies, or
//! commits after its lease was broken. Body `{"lockOp":"lock"}` answers `{"token": n}`;
//! `{"lockOp":"commit","token":n,"state":null}` answers 200 or the object's refusal
//! (`409 lease_lost`) as it is.

use serde_json::{json, Value};
use worker::{Env, Request, Response};

use crate::base::errors::ApiError;
use crate::config::settings::find_policy;
use crate::config::settings::Config;
use crate::decide::multi_key::{self, CallError};
use crate::handlers::api::json_response;
use crate::request::api_request::check_key;
use crate::request::api_request::percent_decode;
use crate::wire::lock_wire::{LockOp, LockRequest, LEASE_LOST_CODE};

/// Serves one protocol step on `rest` = `{policy}/{key}`.
pub async fn handle(rest: &str, mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let bad = || ApiError::bad_request("invalid_path", "use /v1/test/lease/{policy}/{key}");
    let (policy, key) = rest.split_once('/').ok_or_else(bad)?;
    let pc = find_policy(cfg, &percent_decode(policy).ok_or_else(bad)?)?;
    let key = percent_decode(key).ok_or_else(bad)?;
    check_key(&key)?;
    let body: Value = serde_json::from_slice(&req.bytes().await?)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("the body is not valid JSON: {e}")))?;
    let lock_op = match body["lockOp"].as_str() {
        Some("lock") => LockOp::Lock,
        Some("commit") => LockOp::Commit,
        Some("release") => LockOp::Release,
        _ => return Err(ApiError::bad_request("invalid_body", "lockOp must be lock, commit or release")),
    };
    let r = LockRequest {
        lock_op,
        policy: pc.name.clone(),
        key,
        token: body["token"].as_u64().unwrap_or(0),
        state: None,
        now: None,
    };
    match multi_key::call(env, pc, &r).await {
        Ok(reply) => json_response(200, &json!({ "token": reply.token })),
        Err(CallError::LeaseLost) => Err(ApiError::new(409, LEASE_LOST_CODE, "the lease expired and was broken")),
        Err(e) => Err(ApiError::internal(format!("{e:?}"))),
    }
}
