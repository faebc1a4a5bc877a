//! Proxy mode: with `ORIGIN` set, every path outside the admin API (`API_PREFIX`, `/v1` by
//! default) and `/healthz` is limited by the proxy policy, keyed by the client IP (IPv6 by its
//! `ipv6Subnet` network) or, only when configured, a request header, and forwarded to the
//! origin with the rate-limit headers added (to the request the origin sees and to the
//! response the client gets), or answered 429 (503 when the policy fails closed): here the
//! answer is the protected service's, so a denial is the 429 clients and crawlers know to back
//! off from. The origin gets the client's headers but the hop-by-hop ones and the limiter's
//! own (proxy_headers.rs), and `ORIGIN_SECRET`, when set, as `Tollgate-Origin-Secret`. No test
//! header is read here, in any build: a proxied request never injects a fault. A policy with a
//! concurrency limit holds a slot per proxied request until the origin's answer is over
//! (proxy_slot.rs).

use worker::{Context, Env, Fetch, Headers, Request, RequestInit, RequestRedirect, Response};

use crate::base::clock::RealClock;
use crate::base::errors::ApiError;
use crate::config::settings::{Config, Mode, ProxyConfig, ORIGIN_SECRET_HEADER};
use crate::decide::hit::{decide, Hit};
use crate::handlers::concurrency_api::acquire_answer;
use crate::handlers::proxy_slot;
use crate::request::api_request::check_key;
use crate::request::proxy_headers;
use crate::respond::observe::{self, Route};
use crate::wire::key_wire::Op;
use tollgate::ip_key::ip_key;

/// The header Cloudflare sets to the connecting client's address (the client cannot forge it
/// at the edge; locally, workerd sets it too).
pub const CLIENT_IP_HEADER: &str = "CF-Connecting-IP";

/// The key a proxied request is limited by: `key:<header value>` when a key header is
/// configured and present, else `ip:<address or network>`. The client cannot choose the IP
/// key: Cloudflare sets the address header itself, replacing any the client sent.
pub fn request_key(proxy: &ProxyConfig, headers: &Headers) -> Result<String, ApiError> {
    if let Some(h) = &proxy.key_header {
        if let Some(v) = headers.get(h)?.filter(|v| !v.trim().is_empty()) {
            let key = format!("key:{}", v.trim());
            check_key(&key)?;
            return Ok(key);
        }
    }
    let ip = headers.get(CLIENT_IP_HEADER)?.unwrap_or_default();
    ip_key(ip.trim(), proxy.ipv6_subnet).map(|k| format!("ip:{k}")).ok_or_else(|| {
        ApiError::bad_request("missing_client_ip", format!("no client address in {CLIENT_IP_HEADER} to limit by"))
    })
}

/// Limits and forwards one request.
pub async fn forward(
    req: Request,
    env: &Env,
    ctx: &Context,
    cfg: &Config,
    proxy: &ProxyConfig,
) -> Result<Response, ApiError> {
    let pc = cfg
        .policies
        .get(&proxy.policy)
        .ok_or_else(|| ApiError::new(500, "config_error", "the proxy policy is not configured"))?;
    let key = request_key(proxy, req.headers())?;
    let ip = req.headers().get(CLIENT_IP_HEADER)?;
    let keys = std::slice::from_ref(&key);
    // A concurrency limit's slot is held by a lease until the origin's answer is over
    // (proxy_slot.rs); any other policy decides a hit.
    let (answer, slot) = if pc.policy.has_concurrency() && pc.mode() == Mode::Exact {
        let (answer, taken) = acquire_answer(env, pc, keys, 1, &RealClock, ip.as_deref()).await?;
        (answer, taken.map(|(lease, _)| proxy_slot::hold(env, ctx, lease)))
    } else {
        let hit = Hit { keys, cost: 1, clock: &RealClock, fault: None, ip: ip.as_deref() };
        (decide(env, ctx, pc, &hit, Op::Check).await?, None)
    };
    observe::decision(env, cfg, pc, Route::Proxy, &key, 1, &answer);
    if !answer.allowed() {
        return Ok(answer.to_response());
    }
    let url = req.url()?;
    let target = match url.query() {
        Some(q) => format!("{}{}?{q}", proxy.origin, url.path()),
        None => format!("{}{}", proxy.origin, url.path()),
    };
    let upstream_headers = Headers::new();
    let connection = req.headers().get("connection")?;
    for (name, value) in req.headers().entries() {
        if proxy_headers::forwarded(&name, connection.as_deref()) {
            upstream_headers.append(&name, &value)?;
        }
    }
    for (name, value) in &answer.headers {
        upstream_headers.set(name, value)?;
    }
    if let Some(secret) = &proxy.origin_secret {
        upstream_headers.set(ORIGIN_SECRET_HEADER, secret)?;
    }
    let mut init = RequestInit::new();
    init.with_method(req.method()).with_headers(upstream_headers).with_redirect(RequestRedirect::Manual);
    if let Some(body) = req.inner().body() {
        init.with_body(Some(body.into()));
    }
    let upstream = Request::new_with_init(&target, &init)?;
    let mut resp = Fetch::Request(upstream)
        .send()
        .await
        .map_err(|e| {
            // The runtime's message may name the origin's address: logged, not answered.
            crate::base::log::error("origin_unreachable", serde_json::json!({ "detail": e.to_string() }));
            ApiError::new(502, "origin_unreachable", "the origin did not answer")
        })?;
    // The origin's headers are immutable: copy them and add the rate-limit headers.
    let headers = Headers::new();
    for (name, value) in resp.headers().entries() {
        headers.append(&name, &value)?;
    }
    for (name, value) in &answer.headers {
        headers.set(name, value)?;
    }
    match slot {
        // The body streams through, holding the slot until it ends, breaks or is cancelled.
        Some(slot) if matches!(resp.body(), worker::ResponseBody::Stream(_)) => {
            let status = resp.status_code();
            let body = proxy_slot::HeldBody { body: resp.stream()?, slot };
            Ok(Response::from_stream(body)?.with_status(status).with_headers(headers))
        }
        // No body: the origin's answer is over (the slot, if any, is released on return).
        _ => Ok(resp.with_headers(headers)),
    }
}
