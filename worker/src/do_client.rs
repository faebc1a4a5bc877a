//! Calling a key's Durable Object from the Worker, bounded by the policy's timeout.

use std::time::Duration;

use futures_util::future::{select, Either};
use worker::{wasm_bindgen::JsValue, Delay, Env, Headers, Method, Request, RequestInit};

use crate::respond::Failure;
use crate::wire::{DoReply, DoRequest};

/// The Durable Object binding in wrangler.toml.
pub const BINDING: &str = "LIMITER";

/// The object's name for (policy, key): `policy/key`. Policy names cannot contain `/`, so the
/// first `/` separates them and every (policy, key) pair has its own name.
pub fn object_name(policy: &str, key: &str) -> String {
    format!("{policy}/{key}")
}

async fn send(env: &Env, name: String, body: String) -> Result<DoReply, String> {
    let ns = env.durable_object(BINDING).map_err(|e| e.to_string())?;
    let stub = ns.id_from_name(&name).and_then(|id| id.get_stub()).map_err(|e| e.to_string())?;
    let headers = Headers::new();
    headers.set("content-type", "application/json").map_err(|e| e.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(headers).with_body(Some(JsValue::from_str(&body)));
    let req = Request::new_with_init("https://limiter.internal/", &init).map_err(|e| e.to_string())?;
    let mut resp = stub.fetch_with_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status_code();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    if status != 200 {
        return Err(format!("status {status}: {text}"));
    }
    serde_json::from_str(&text).map_err(|e| format!("bad reply: {e}"))
}

/// Sends `req` to the object of (`req.policy`, `req.key`), waiting at most `timeout_ms`.
pub async fn call(env: &Env, req: &DoRequest, timeout_ms: u64) -> Result<DoReply, (Failure, String)> {
    let name = object_name(&req.policy, &req.key);
    let body = serde_json::to_string(req).map_err(|e| (Failure::Error, e.to_string()))?;
    let work = Box::pin(send(env, name, body));
    let timer = Box::pin(Delay::from(Duration::from_millis(timeout_ms)));
    match select(work, timer).await {
        Either::Left((Ok(reply), _)) => Ok(reply),
        Either::Left((Err(e), _)) => Err((Failure::Error, e)),
        Either::Right(_) => Err((Failure::Timeout, format!("no answer within {timeout_ms} ms"))),
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
}
