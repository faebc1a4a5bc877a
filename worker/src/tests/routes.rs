//! The test build's routes under the API prefix (TEST_MODE on only): `test/state/{policy}/{key}`
//! (what a key's object stores and when its alarm is, so tests can see the alarm delete state),
//! `test/lease/{policy}/{key}` (one step of the several-keys protocol, `lease_api.rs`),
//! `test/pools/{pool}` (whether a pool's object stores a row and when its alarm is, so tests can
//! see the alarm reclaim leases and delete the storage), `test/sync/{policy}` (this isolate's
//! sync queue of a synced policy: keys waiting, keys out).

use serde_json::Value;
use worker::{Env, Method, Request, Response};

use crate::base::errors::ApiError;
use crate::calls::do_client::{self, call_pool};
use crate::config::settings::find_policy;
use crate::config::settings::Config;
use crate::handlers::api::json_response;
use crate::request::api_request::policy_and_key;
use crate::request::pool_request::find_pool;
use crate::wire::key_wire::{DoRequest, Op};
use crate::wire::pool_wire::{PoolOp, PoolRequest};

/// Where the test routes start, after the API prefix.
pub const PREFIX: &str = "/test/";

/// Serves `rest`, the path after [`PREFIX`].
pub async fn route(rest: &str, req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let method = req.method();
    let only = |allowed: Method, allow: &'static str| {
        if method == allowed {
            Ok(())
        } else {
            Err(ApiError::method_not_allowed(method.as_ref(), allow))
        }
    };
    if let Some(p) = rest.strip_prefix("state/") {
        only(Method::Get, "GET")?;
        let (pc, key) = policy_and_key(p, cfg, ApiError::not_found())?;
        let req = DoRequest::new(Op::Inspect, &pc.name, &key, 0, None);
        let reply =
            do_client::call(env, &req, pc.timeout_ms).await.map_err(|(_, m)| do_client::unavailable("key", m))?;
        json_response(200, &reply.stored.unwrap_or(Value::Null))
    } else if let Some(p) = rest.strip_prefix("lease/") {
        only(Method::Post, "POST")?;
        super::lease_api::handle(p, req, env, cfg).await
    } else if let Some(p) = rest.strip_prefix("pools/") {
        only(Method::Get, "GET")?;
        let pc = find_pool(cfg, p)?;
        let pool = pc.name.clone();
        let r = PoolRequest { op: PoolOp::Inspect, pool, holder: String::new(), partitions: 0, ttl: 0, now: None };
        let reply = call_pool(env, &r, pc.timeout_ms).await?;
        json_response(200, &reply.stored.unwrap_or(Value::Null))
    } else if let Some(p) = rest.strip_prefix("sync/") {
        only(Method::Get, "GET")?;
        json_response(200, &crate::decide::sync_mode::queue(find_policy(cfg, p)?)?)
    } else {
        Err(ApiError::not_found())
    }
}
