//! Which path goes where: `/healthz` (liveness, open), `/v1/*` (behind the bearer token, or
//! open only with `PUBLIC`), then proxy mode (when `ORIGIN` is set) or the static assets (the
//! playground, `www/`).
//!
//! Routing is a plain `match` rather than workers-rs' `Router`, whose 404/405 answers are
//! plain text: here every error is the JSON shape.

use serde_json::json;
use worker::{Context, Env, Method, Request, Response};

use crate::api;
use crate::auth;
use crate::env_config::config;
use crate::errors::ApiError;
use crate::pools_api;
use crate::proxy;
use crate::state_api;
use crate::wire::Op;

/// The static assets binding in wrangler.toml.
pub const ASSETS: &str = "ASSETS";

fn only(method: &Method, allowed: Method, path: &str, allow: &'static str) -> Result<(), ApiError> {
    if *method == allowed {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed(method.as_ref(), path, allow))
    }
}

/// The route of `path` for logs: the API's paths with their variable parts as placeholders
/// (a key, a holder or a pool name never appears), `other` for everything else (proxied
/// paths, assets).
pub fn label(path: &str) -> &'static str {
    match path {
        "/healthz" => "/healthz",
        "/v1/limit" => "/v1/limit",
        "/v1/peek" => "/v1/peek",
        "/v1/refund" => "/v1/refund",
        "/v1/policies" => "/v1/policies",
        "/v1/pools" => "/v1/pools",
        p if p.starts_with("/v1/keys/") && p.ends_with(state_api::SUFFIX) => "/v1/keys/{policy}/{key}/state",
        p if p.starts_with("/v1/keys/") => "/v1/keys/{policy}/{key}",
        p if p.starts_with("/v1/pools/") => "/v1/pools/{pool}/...",
        p if p.starts_with("/v1/test/") => "/v1/test/...",
        p if p == "/v1" || p.starts_with("/v1/") => "/v1/...",
        _ => "other",
    }
}

/// Routes one request.
pub async fn route(req: Request, env: &Env, ctx: &Context) -> Result<Response, ApiError> {
    let path = req.path();
    let method = req.method();
    if path == "/healthz" {
        // Liveness only, for anyone: nothing about the configuration (that is behind auth).
        only(&method, Method::Get, &path, "GET")?;
        config(env)?;
        return api::json_response(200, &json!({ "ok": true }));
    }
    if path == "/v1" || path.starts_with("/v1/") {
        let cfg = config(env)?;
        auth::check(cfg.api_token.as_deref(), cfg.public, req.headers().get("authorization")?.as_deref())?;
        return match path.as_str() {
            "/v1/limit" => {
                only(&method, Method::Post, &path, "POST")?;
                api::limit(req, env, ctx, &cfg, Op::Check).await
            }
            "/v1/peek" => {
                only(&method, Method::Post, &path, "POST")?;
                api::limit(req, env, ctx, &cfg, Op::Peek).await
            }
            "/v1/refund" => {
                only(&method, Method::Post, &path, "POST")?;
                api::refund(req, env, &cfg).await
            }
            "/v1/policies" => {
                only(&method, Method::Get, &path, "GET")?;
                api::policies(&cfg)
            }
            p if p.starts_with("/v1/test/state/") && cfg.test_mode => {
                only(&method, Method::Get, &path, "GET")?;
                api::inspect(&p["/v1/test/state/".len()..], env, &cfg).await
            }
            "/v1/pools" => {
                only(&method, Method::Get, &path, "GET")?;
                pools_api::list(&cfg)
            }
            p if p.starts_with("/v1/pools/") => pools_api::handle(&p["/v1/pools/".len()..], req, env, &cfg).await,
            p if p.starts_with("/v1/test/lease/") && cfg.test_mode => {
                only(&method, Method::Post, &path, "POST")?;
                crate::lease_test_api::handle(&p["/v1/test/lease/".len()..], req, env, &cfg).await
            }
            p if p.starts_with("/v1/test/pools/") && cfg.test_mode => {
                pools_api::inspect(&p["/v1/test/pools/".len()..], &method, env, &cfg).await
            }
            p if p.starts_with("/v1/keys/") => {
                let rest = &p["/v1/keys/".len()..];
                match method {
                    Method::Delete => api::reset(rest, env, &cfg).await,
                    // `{key}/state`: the key's state out and in (the key itself may end in
                    // `/state`: DELETE takes everything after the policy as the key).
                    Method::Get | Method::Put if rest.ends_with(state_api::SUFFIX) => {
                        state_api::handle(rest, req, env, &cfg).await
                    }
                    _ if rest.ends_with(state_api::SUFFIX) => {
                        Err(ApiError::method_not_allowed(method.as_ref(), &path, "GET, PUT, DELETE"))
                    }
                    _ => Err(ApiError::method_not_allowed(method.as_ref(), &path, "DELETE")),
                }
            }
            _ => Err(ApiError::not_found(&path)),
        };
    }
    let cfg = config(env)?;
    if let Some(p) = &cfg.proxy {
        return proxy::forward(req, env, ctx, &cfg, p).await;
    }
    match env.assets(ASSETS) {
        Ok(assets) => Ok(assets.fetch_request(req).await?),
        Err(_) => Err(ApiError::not_found(&path)),
    }
}
