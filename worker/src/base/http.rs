//! The one shape of every HTTP answer the Worker makes, decisions and errors alike.

use worker::{Headers, Response};

/// A JSON answer as every endpoint sends one, decisions and errors alike: `status`, the body,
/// `content-type: application/json`, `cache-control: no-store` (a decision is never
/// reusable), and `headers` on top.
pub fn json_response(status: u16, headers: &[(&'static str, String)], body: String) -> Response {
    let all = Headers::new();
    let _ = all.set("content-type", "application/json");
    let _ = all.set("cache-control", "no-store");
    for (name, value) in headers {
        let _ = all.set(name, value);
    }
    Response::builder().with_status(status).with_headers(all).fixed(body.into_bytes())
}
