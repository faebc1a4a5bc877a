//! Calling a key's (or a pool's) Durable Object from the Worker, bounded by a timeout.

use std::time::Duration;

use futures_util::future::{select, Either};
use tollgate::store_protocol::{drive, Retry, Tried};
use tollgate::Nanos;
use worker::{wasm_bindgen::JsValue, Delay, Env, Headers, Method, Request, RequestInit};

use crate::base::errors::ApiError;
use crate::wire::key_wire::{DoReply, DoRequest};
use crate::wire::pool_wire::{PoolReply, PoolRequest};

/// Why the Durable Object could not decide.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It answered an error (or its answer did not parse).
    Error,
    /// It did not answer within the policy's timeout.
    Timeout,
    /// Other requests held the key (the several-keys protocol) for longer than a request
    /// waits: contention, answered as a denial whatever the fail mode.
    Contention,
}

impl Failure {
    /// The name used in the degraded header and body.
    pub fn name(self) -> &'static str {
        match self {
            Failure::Error => "error",
            Failure::Timeout => "timeout",
            Failure::Contention => "contention",
        }
    }
}

/// The Durable Object binding in wrangler.toml.
pub const BINDING: &str = "LIMITER";
/// The capacity pools' Durable Object binding in wrangler.toml (one object per pool).
pub const POOL_BINDING: &str = "LEASES";

/// The object's name for (policy, key): `policy/key`. Policy names cannot contain `/`, so the
/// first `/` separates them and every (policy, key) pair has its own name.
pub fn object_name(policy: &str, key: &str) -> String {
    format!("{policy}/{key}")
}

/// Posts `body` to the object named `name` of the namespace `binding`: (status, body text).
pub(crate) async fn exchange(env: &Env, binding: &str, name: &str, body: String) -> Result<(u16, String), String> {
    let ns = env.durable_object(binding).map_err(|e| e.to_string())?;
    let stub = ns.id_from_name(name).and_then(|id| id.get_stub()).map_err(|e| e.to_string())?;
    let headers = Headers::new();
    headers.set("content-type", "application/json").map_err(|e| e.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers).with_body(Some(JsValue::from_str(&body)));
    let req = Request::new_with_init("https://limiter.internal/", &init).map_err(|e| e.to_string())?;
    let mut resp = stub.fetch_with_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status_code();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    Ok((status, text))
}

/// [`exchange`], bounded by `timeout_ms`: the answer's status and text, or why there was none.
async fn exchange_within(
    env: &Env,
    binding: &str,
    name: &str,
    body: String,
    timeout_ms: u64,
) -> Result<(u16, String), (Failure, String)> {
    let work = Box::pin(exchange(env, binding, name, body));
    let timer = Box::pin(Delay::from(Duration::from_millis(timeout_ms)));
    match select(work, timer).await {
        Either::Left((Ok(answer), _)) => Ok(answer),
        Either::Left((Err(e), _)) => Err((Failure::Error, e)),
        Either::Right(_) => Err((Failure::Timeout, format!("no answer within {timeout_ms} ms"))),
    }
}

/// Whether an object's answer says another request holds the key.
pub fn is_busy(status: u16, text: &str) -> bool {
    status == crate::wire::lock_wire::BUSY_STATUS
        && text.contains(&format!("\"{}\"", crate::wire::lock_wire::BUSY_CODE))
}

/// One exchange with the key object `name` ([`exchange_within`]), asked again while the object answers busy (another request holds the
/// key under the several-keys protocol) as the core's store protocol says for a busy object
/// (`Retry::BUSY_OBJECT`: its back-off, and when to give up: then `Failure::Contention`). A
/// lease ends within `object::lock::LEASE_MS`, so only a long queue of holders gives up.
pub(crate) async fn exchange_key_patiently(
    env: &Env,
    name: &str,
    body: &str,
    timeout_ms: u64,
) -> Result<(u16, String), (Failure, String)> {
    let ask = |_: u32| async move {
        let (status, text) = exchange_within(env, BINDING, name, body.to_string(), timeout_ms).await?;
        Ok(if is_busy(status, &text) { Tried::Lost } else { Tried::Done((status, text)) })
    };
    let pause = |p: Nanos| Delay::from(Duration::from_nanos(p.as_nanos()));
    drive(Retry::BUSY_OBJECT, crate::base::clock::clock, ask, pause)
        .await?
        .map_err(|g| (Failure::Contention, format!("the key stayed busy over {} attempts", g.attempts)))
}

/// Sends `req` to the object of (`req.policy`, `req.key`), waiting at most `timeout_ms` for
/// each answer (and asking again while the key is busy).
pub async fn call(env: &Env, req: &DoRequest, timeout_ms: u64) -> Result<DoReply, (Failure, String)> {
    let name = object_name(&req.policy, &req.key);
    let body = serde_json::to_string(req).map_err(|e| (Failure::Error, e.to_string()))?;
    let (status, text) = exchange_key_patiently(env, &name, &body, timeout_ms).await?;
    if status != 200 {
        return Err((Failure::Error, format!("status {status}: {text}")));
    }
    serde_json::from_str(&text).map_err(|e| (Failure::Error, format!("bad reply: {e}")))
}

/// The error codes a pool's object may answer that are the caller's, passed on as they are.
const POOL_CODES: [&str; 6] =
    ["lease_not_held", "invalid_holder", "invalid_partitions", "invalid_ttl", "unknown_pool", "test_mode_disabled"];

/// What a pool object's non-200 answer means for the client: its own 4xx error when the code
/// is one of [`POOL_CODES`], otherwise `503 unavailable`.
pub fn pool_failure(status: u16, text: &str) -> ApiError {
    let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let code = v["error"]["code"].as_str().unwrap_or("");
    match POOL_CODES.iter().find(|&&c| c == code) {
        Some(&c) if (400..500).contains(&status) => {
            ApiError::new(status, c, v["error"]["message"].as_str().unwrap_or(c).to_string())
        }
        _ => unavailable("pool", format!("status {status}: {text}")),
    }
}

/// 503 for a Durable Object that failed or did not answer (retry in a second). `detail` (the
/// object's own error, the runtime's message) is logged, not answered: it may name the
/// object (`policy/key`, a key often being a client's address) or hold a stack.
pub fn unavailable(what: &str, detail: String) -> ApiError {
    crate::base::log::error("object_unavailable", serde_json::json!({ "object": what, "detail": detail }));
    ApiError::new(503, "unavailable", format!("the {what}'s Durable Object failed or did not answer; retry"))
        .with_header("Retry-After", "1")
}

/// Sends `req` to the object of pool `req.pool`, waiting at most `timeout_ms`.
pub async fn call_pool(env: &Env, req: &PoolRequest, timeout_ms: u64) -> Result<PoolReply, ApiError> {
    let body = serde_json::to_string(req).map_err(|e| ApiError::internal(e.to_string()))?;
    match exchange_within(env, POOL_BINDING, &req.pool, body, timeout_ms).await {
        Ok((200, text)) => serde_json::from_str(&text).map_err(|e| unavailable("pool", format!("bad reply: {e}"))),
        Ok((status, text)) => Err(pool_failure(status, &text)),
        Err((_, e)) => Err(unavailable("pool", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unambiguous_because_policies_have_no_slash() {
        assert_eq!(object_name("api", "user:42"), "api/user:42");
        let name = object_name("api", "a/b");
        assert_eq!(name.split_once('/'), Some(("api", "a/b")));
    }

    #[test]
    fn a_pool_object_s_own_client_errors_pass_through_and_the_rest_is_503() {
        let e = pool_failure(404, r#"{"error":{"code":"lease_not_held","message":"gone"}}"#);
        assert_eq!((e.status, e.code, e.message.as_str()), (404, "lease_not_held", "gone"));
        assert_eq!(pool_failure(500, r#"{"error":{"code":"internal","message":"x"}}"#).code, "unavailable");
        assert_eq!(pool_failure(400, r#"{"error":{"code":"whatever","message":"x"}}"#).status, 503);
        assert_eq!(pool_failure(502, "<html>").code, "unavailable");
    }
}
