//! `GET` and `PUT /v1/keys/{policy}/{key}/state`: a key's state out and in, as the core's
//! encoding (`PolicyState::encode`, the bytes npm's `limiter.export` gives) in base64, so a
//! key can move between the Worker, the npm memory limiter and Redis.
//!
//! The key is everything between the policy's `/` and the trailing `/state`, percent-decoded
//! (keys may hold `/`). Bytes that are not a state of the policy are refused with
//! `invalid_state` (field `state`), the code npm's `limiter.import` gives, and change nothing.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use worker::{Env, Method, Request, Response};

use crate::base::errors::ApiError;
use crate::calls::block_cache;
use crate::calls::do_client::{self, object_name};
use crate::config::settings::{Config, Mode, PolicyConfig};
use crate::decide::multi_key::{self, CallError};
use crate::handlers::api::json_response;
use crate::object::lock::state_of;
use crate::request::api_request::{json_object_within, policy_and_key, read_body};
use crate::wire::lock_wire::{LockOp, LockRequest};

/// The path's last segment.
pub const SUFFIX: &str = "/state";

/// The largest `PUT` body: a sliding log of the longest limit, in base64, with room to spare.
pub const MAX_STATE_BODY_BYTES: usize = 2 * 1024 * 1024;

/// The fields of a `PUT` body (docs/vocabulary.md).
pub const FIELDS: [&str; 1] = ["state"];

/// (policy, key) of `rest`, the path after `/v1/keys/` ending in [`SUFFIX`].
fn target<'c>(rest: &str, cfg: &'c Config) -> Result<(&'c PolicyConfig, String), ApiError> {
    let inner = rest.strip_suffix(SUFFIX).unwrap_or(rest);
    let missing = ApiError::bad_request("missing_key", "use /v1/keys/{policy}/{key}/state").with_field("key");
    let (pc, key) = policy_and_key(inner, cfg, missing)?;
    match pc.mode() {
        Mode::Exact => {}
        Mode::Synced | Mode::Local => {
            return Err(ApiError::bad_request(
                "unsupported_in_sync_mode",
                format!(
                    "policy {:?} has syncRate = {}: its keys hold window counts, not a state to export or import",
                    pc.name, pc.sync_ms
                ),
            ))
        }
        Mode::Leased => {
            return Err(ApiError::bad_request(
                "unsupported_in_leased_mode",
                format!(
                    "policy {:?} has leaseTtl = {} ms: its keys' quota is in their objects' ledgers of slices, not in a state to export or import",
                    pc.name, pc.lease_ms
                ),
            ))
        }
    }
    Ok((pc, key))
}

fn failed(e: CallError) -> ApiError {
    match e {
        CallError::Refused(e) => e,
        other => do_client::unavailable("key", format!("{other:?}")),
    }
}

/// The `PUT` body's state: the bytes (`None`: fresh), validated against the policy.
pub fn parse_body(body: &[u8], pc: &PolicyConfig) -> Result<Option<Vec<u8>>, ApiError> {
    let v = json_object_within(body, MAX_STATE_BODY_BYTES, &FIELDS, r#"{"state":"AQID..."}"#)?;
    let bytes = match v.get("state") {
        None => {
            return Err(ApiError::bad_request("missing_field", "state is required (null: fresh)").with_field("state"))
        }
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(STANDARD.decode(s.trim()).map_err(|e| {
            ApiError::bad_request("invalid_state", format!("state is not base64: {e}")).with_field("state")
        })?),
        Some(other) => {
            let m = format!("state must be a base64 string or null, got {other}");
            return Err(ApiError::bad_request("invalid_type", m).with_field("state"));
        }
    };
    state_of(pc, bytes.as_deref())?;
    Ok(bytes)
}

/// Serves `GET` (export) and `PUT` (import) of `rest`'s key.
pub async fn handle(rest: &str, mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let (pc, key) = target(rest, cfg)?;
    let r =
        |op, state| LockRequest { lock_op: op, policy: pc.name.clone(), key: key.clone(), token: 0, state, now: None };
    if req.method() == Method::Get {
        let reply = multi_key::call(env, pc, &r(LockOp::Export, None)).await.map_err(failed)?;
        let state = reply.state.map(|b| STANDARD.encode(b));
        return json_response(200, &json!({ "policy": pc.name, "key": key, "state": state }));
    }
    let state = parse_body(&read_body(&mut req).await?, pc)?;
    block_cache::forget(&object_name(&pc.name, &key));
    multi_key::call(env, pc, &r(LockOp::Import, state)).await.map_err(failed)?;
    block_cache::forget(&object_name(&pc.name, &key));
    json_response(200, &json!({ "policy": pc.name, "key": key, "imported": true }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::parse_policy;
    use tollgate::Nanos;

    fn gcra() -> PolicyConfig {
        parse_policy("api", &json!({ "algorithm": "gcra", "quota": "10/s" })).unwrap()
    }

    fn code(body: &str, pc: &PolicyConfig) -> (&'static str, Option<String>) {
        let e = parse_body(body.as_bytes(), pc).unwrap_err();
        (e.code, e.field)
    }

    #[test]
    fn a_state_of_the_policy_or_null_is_taken() {
        let pc = gcra();
        let mut states = [None];
        pc.policy.check(&mut states, Nanos::from_secs(5), 3).unwrap();
        let bytes = states[0].as_ref().unwrap().encode();
        let body = json!({ "state": STANDARD.encode(&bytes) }).to_string();
        assert_eq!(parse_body(body.as_bytes(), &pc).unwrap(), Some(bytes));
        assert_eq!(parse_body(br#"{"state":null}"#, &pc).unwrap(), None);
    }

    #[test]
    fn every_mistake_has_its_code_and_field() {
        let pc = gcra();
        let state = Some("state".to_string());
        assert_eq!(code(r#"{"state":"%%%"}"#, &pc), ("invalid_state", state.clone()));
        assert_eq!(code(r#"{"state":"AQID"}"#, &pc), ("invalid_state", state.clone()));
        assert_eq!(code(r#"{"state":7}"#, &pc), ("invalid_type", state.clone()));
        assert_eq!(code(r#"{}"#, &pc), ("missing_field", state.clone()));
        assert_eq!(code(r#"{"state":null,"sate":1}"#, &pc).0, "unknown_field");
        assert_eq!(code("nope", &pc).0, "invalid_json");
        assert_eq!(code("[]", &pc).0, "invalid_body");
        // A state of another policy (a fixed window's) is not a GCRA state.
        let other = parse_policy("f", &json!({ "algorithm": "fixed-window", "quota": "10/s" })).unwrap();
        let mut states = [None];
        other.policy.check(&mut states, Nanos::from_secs(5), 1).unwrap();
        let body = json!({ "state": STANDARD.encode(states[0].as_ref().unwrap().encode()) }).to_string();
        assert_eq!(code(&body, &pc), ("invalid_state", state));
    }
}
