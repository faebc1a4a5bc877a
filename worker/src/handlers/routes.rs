//! Which path goes where: `/healthz` (liveness, open), the admin API under its prefix
//! (`API_PREFIX`, `/v1` by default; behind the bearer token, or open only with `PUBLIC`), then
//! proxy mode (when `ORIGIN` is set) or the static assets (the playground, `www/`).
//!
//! Routing is a plain `match` rather than workers-rs' `Router`, whose 404/405 answers are
//! plain text: here every error is the JSON shape.

use serde_json::json;
use worker::{Context, Env, Method, Request, Response};

use crate::base::errors::ApiError;
use crate::config::env_config::config;
use crate::handlers::api;
use crate::handlers::concurrency_api;
use crate::handlers::pools_api;
use crate::handlers::proxy;
use crate::handlers::reserve_api;
use crate::handlers::state_api;
use crate::request::auth;
use crate::wire::key_wire::Op;

/// The static assets binding in wrangler.toml.
pub const ASSETS: &str = "ASSETS";

fn only(method: &Method, allowed: Method, allow: &'static str) -> Result<(), ApiError> {
    if *method == allowed {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed(method.as_ref(), allow))
    }
}

/// The route of `path` for logs: the API's routes (`rest`, the path after the API prefix, as
/// [`Config::api_route`] gives it) named as the API's reference does, `/v1/...`, whatever
/// `API_PREFIX` is, with their variable parts as placeholders (a key, a holder or a pool name
/// never appears); `/healthz`; `other` for everything else (proxied paths, assets).
pub fn label(path: &str, rest: Option<&str>) -> &'static str {
    let Some(rest) = rest else { return if path == "/healthz" { "/healthz" } else { "other" } };
    match rest {
        "/limit" => "/v1/limit",
        "/peek" => "/v1/peek",
        "/refund" => "/v1/refund",
        "/reserve" => "/v1/reserve",
        "/settle" => "/v1/settle",
        "/acquire" => "/v1/acquire",
        "/release" => "/v1/release",
        "/renew" => "/v1/renew",
        "/policies" => "/v1/policies",
        "/pools" => "/v1/pools",
        p if p.starts_with("/keys/") && p.ends_with(state_api::SUFFIX) => "/v1/keys/{policy}/{key}/state",
        p if p.starts_with("/keys/") => "/v1/keys/{policy}/{key}",
        p if p.starts_with("/pools/") => "/v1/pools/{pool}/...",
        #[cfg(feature = "test-hooks")]
        p if p.starts_with(crate::tests::routes::PREFIX) => "/v1/test/...",
        _ => "/v1/...",
    }
}

/// Routes one request.
pub async fn route(req: Request, env: &Env, ctx: &Context) -> Result<Response, ApiError> {
    let path = req.path();
    let method = req.method();
    if path == "/healthz" {
        // Liveness only, for anyone: nothing about the configuration (that is behind auth).
        only(&method, Method::Get, "GET")?;
        config(env)?;
        return api::json_response(200, &json!({ "ok": true }));
    }
    let cfg = config(env)?;
    if let Some(rest) = cfg.api_route(&path) {
        auth::check(cfg.api_token.as_deref(), cfg.public, req.headers().get("authorization")?.as_deref())?;
        // The fixed routes each take one method.
        let one = match rest {
            "/limit" | "/peek" | "/refund" | "/reserve" | "/settle" | "/acquire" | "/release" | "/renew" => Some((Method::Post, "POST")),
            "/policies" | "/pools" => Some((Method::Get, "GET")),
            _ => None,
        };
        if let Some((allowed, allow)) = one {
            only(&method, allowed, allow)?;
        }
        return match rest {
            "/limit" => api::limit(req, env, ctx, &cfg, Op::Check).await,
            "/peek" => api::limit(req, env, ctx, &cfg, Op::Peek).await,
            "/refund" => api::refund(req, env, &cfg).await,
            "/reserve" => reserve_api::reserve(req, env, &cfg).await,
            "/settle" => reserve_api::settle(req, env, &cfg).await,
            "/acquire" => concurrency_api::acquire(req, env, &cfg).await,
            "/release" => concurrency_api::release(req, env, &cfg).await,
            "/renew" => concurrency_api::renew(req, env, &cfg).await,
            "/policies" => api::policies(&cfg),
            "/pools" => pools_api::list(&cfg),
            p if p.starts_with("/pools/") => pools_api::handle(&p["/pools/".len()..], req, env, &cfg).await,
            #[cfg(feature = "test-hooks")]
            p if p.starts_with(crate::tests::routes::PREFIX) && cfg.test_hooks() => {
                crate::tests::routes::route(&p[crate::tests::routes::PREFIX.len()..], req, env, &cfg).await
            }
            p if p.starts_with("/keys/") => {
                let rest = &p["/keys/".len()..];
                match method {
                    Method::Delete => api::reset(rest, env, &cfg).await,
                    // `{key}/state`: the key's state out and in (the key itself may end in
                    // `/state`: DELETE takes everything after the policy as the key).
                    Method::Get | Method::Put if rest.ends_with(state_api::SUFFIX) => {
                        state_api::handle(rest, req, env, &cfg).await
                    }
                    _ if rest.ends_with(state_api::SUFFIX) => {
                        Err(ApiError::method_not_allowed(method.as_ref(), "GET, PUT, DELETE"))
                    }
                    _ => Err(ApiError::method_not_allowed(method.as_ref(), "DELETE")),
                }
            }
            _ => Err(ApiError::not_found()),
        };
    }
    if let Some(p) = &cfg.proxy {
        return proxy::forward(req, env, ctx, &cfg, p).await;
    }
    match env.assets(ASSETS) {
        Ok(assets) => Ok(assets.fetch_request(req).await?),
        Err(_) => Err(ApiError::not_found()),
    }
}
