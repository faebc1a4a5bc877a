//! tollgate as a Cloudflare Worker: rate-limit decisions over HTTP, each key's state in its
//! own Durable Object (see worker/README.md for the API, configuration and deployment).
//!
//! Layers, each using only those below it (CONTRIBUTING.md draws the map): `handlers` (routes
//! and the `/v1`, proxy, reserve, state and pool handlers) over `request` (parsing) and
//! `decide` (lists, shadow mode and the policy's mode) over `respond` (answers) over `calls`
//! (the isolate's calls to the Durable Objects) over `object` (the Durable Objects) over `wire`
//! (their protocols) over `config` over `base` (errors, logs, the clock).

pub mod base;
pub mod calls;
pub mod config;
pub mod decide;
pub mod handlers;
pub mod object;
pub mod request;
pub mod respond;
#[cfg(feature = "test-hooks")]
pub mod tests;
pub mod wire;

use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    let path = req.path();
    // A configuration that does not parse has no prefix of its own: the default names the route.
    let api_route = match config::env_config::config(&env) {
        Ok(c) => c.api_route(&path).map(str::to_string),
        Err(_) => config::settings::api_route(config::settings::DEFAULT_API_PREFIX, &path).map(str::to_string),
    };
    let (method, route) = (req.method().to_string(), handlers::routes::label(&path, api_route.as_deref()));
    Ok(match handlers::routes::route(req, &env, &ctx).await {
        Ok(resp) => resp,
        Err(e) => {
            // One line per error answered: the route's shape, never its keys or holders.
            let fields = serde_json::json!({
                "status": e.status, "code": e.code, "message": e.message, "method": method, "route": route,
            });
            if e.status >= 500 {
                base::log::error("error", fields);
            } else {
                base::log::warn("error", fields);
            }
            e.to_response()
        }
    })
}
