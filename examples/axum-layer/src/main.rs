//! A tower `Layer` for axum over tollgate's [`ShardedLimiter`]: every request is decided by its
//! client address (the connection's peer, never a value the client chooses), across the
//! runtime's worker threads without a global lock, and answered with the RateLimit headers the
//! core writes (`tollgate::headers`: draft-10 `RateLimit`/`RateLimit-Policy`, the legacy
//! `X-RateLimit-*`, `Retry-After` on a denial). A denial is a 429 that never reaches the app.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderName, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tollgate::headers::{headers, HeaderOptions, LimitStatus};
use tollgate::sharded::ShardedLimiter;
use tollgate::{Decision, Gcra, Nanos, Quota};
use tower::{Layer, Service};

/// The limiter and its quota, shared by every clone of the layer's service.
#[derive(Clone)]
pub struct RateLimitLayer {
    limiter: Arc<ShardedLimiter<Gcra, IpAddr>>,
    name: &'static str,
    quota: Quota,
}

impl RateLimitLayer {
    /// `quota` per client address, GCRA, named `name` in the headers.
    pub fn new(name: &'static str, quota: Quota) -> RateLimitLayer {
        let gcra = Gcra::new(quota).expect("a quota GCRA takes");
        RateLimitLayer { limiter: Arc::new(ShardedLimiter::with_key_type(gcra).with_max_keys(1_000_000)), name, quota }
    }

    /// The decision for a request from `ip` at `now`, and its headers.
    fn decide(&self, ip: IpAddr, now: Nanos) -> (Decision, Vec<(&'static str, String)>) {
        // A cost of 1 always fits a quota of at least 1, so the check answers a decision.
        let decision = self.limiter.check(&ip, now, 1).expect("a cost of 1 fits");
        let status = [LimitStatus { name: self.name, quota: self.quota.limit(), window: self.quota.window(), decision }];
        (decision, headers(&status, &decision, now, &HeaderOptions::default()))
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;

    fn layer(&self, inner: S) -> RateLimit<S> {
        RateLimit { inner, layer: self.clone() }
    }
}

/// The service the layer wraps around the app.
#[derive(Clone)]
pub struct RateLimit<S> {
    inner: S,
    layer: RateLimitLayer,
}

fn with_headers(mut response: Response, sent: Vec<(&'static str, String)>) -> Response {
    for (name, value) in sent {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(HeaderName::from_static(lower(name)), value);
        }
    }
    response
}

/// HTTP/1 header names as `HeaderName::from_static` takes them (lowercase).
fn lower(name: &'static str) -> &'static str {
    match name {
        "RateLimit-Policy" => "ratelimit-policy",
        "RateLimit" => "ratelimit",
        "RateLimit-Limit" => "ratelimit-limit",
        "RateLimit-Remaining" => "ratelimit-remaining",
        "RateLimit-Reset" => "ratelimit-reset",
        "X-RateLimit-Limit" => "x-ratelimit-limit",
        "X-RateLimit-Remaining" => "x-ratelimit-remaining",
        "X-RateLimit-Reset" => "x-ratelimit-reset",
        _ => "retry-after",
    }
}

impl<S> Service<Request<Body>> for RateLimit<S>
where
    S: Service<Request<Body>, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        // The connection's peer (`into_make_service_with_connect_info`); without it, no key:
        // a server mistake, not the client's, so a 500 rather than an open door.
        let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>().copied() else {
            return Box::pin(async { Ok(StatusCode::INTERNAL_SERVER_ERROR.into_response()) });
        };
        let (decision, sent) = self.layer.decide(peer.ip(), Nanos::now());
        if !decision.allowed {
            let denied = (StatusCode::TOO_MANY_REQUESTS, "Too many requests, please try again later.").into_response();
            return Box::pin(async move { Ok(with_headers(denied, sent)) });
        }
        // The clone that was polled ready serves this request (tower's rule for `call`).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move { Ok(with_headers(inner.call(request).await?, sent)) })
    }
}

/// The example app: one route behind 5 requests per 10 seconds per client address.
pub fn app() -> Router {
    let quota = Quota::new(5, Nanos::from_secs(10)).expect("5 per 10 s is a quota");
    Router::new().route("/", get(|| async { "hello\n" })).layer(RateLimitLayer::new("per-ip", quota))
}

#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await.expect("127.0.0.1:3000 is free");
    println!("listening on http://127.0.0.1:3000 (5 requests per 10 s per client address)");
    axum::serve(listener, app().into_make_service_with_connect_info::<SocketAddr>()).await.expect("serves");
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    fn from(ip: [u8; 4]) -> Request<Body> {
        let mut r = Request::get("/").body(Body::empty()).unwrap();
        r.extensions_mut().insert(ConnectInfo(SocketAddr::from((ip, 40000))));
        r
    }

    #[tokio::test]
    async fn five_pass_with_headers_then_429_with_retry_after_per_address() {
        let app = app();
        for left in (0..5).rev() {
            let r = app.clone().oneshot(from([10, 0, 0, 1])).await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            assert_eq!(r.headers()["ratelimit-policy"], "\"per-ip\";q=5;w=10");
            // `t`: whole seconds until one more request is admitted, 0 while some are left; the
            // layer reads the real clock, so after the fifth a second (2 s per request) or less.
            let t = if left > 0 { vec!["0"] } else { vec!["1", "2"] };
            let sent = r.headers()["ratelimit"].to_str().unwrap().to_string();
            assert!(t.iter().any(|t| sent == format!("\"per-ip\";r={left};t={t}")), "{sent}");
        }
        let denied = app.clone().oneshot(from([10, 0, 0, 1])).await.unwrap();
        assert_eq!(denied.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(["1", "2"].contains(&denied.headers()["retry-after"].to_str().unwrap()));
        let other = app.clone().oneshot(from([10, 0, 0, 2])).await.unwrap();
        assert_eq!(other.status(), StatusCode::OK, "every address has its own limit");
    }
}
