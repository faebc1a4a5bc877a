//! tollgate as a Cloudflare Worker: rate-limit decisions over HTTP, each key's state in its
//! own Durable Object (see worker/README.md for the API, configuration and deployment).
//!
//! Module map: `routes` (which path goes where), `api` (the `/v1` handlers), `api_request`
//! (body validation), `decide` (Durable Object, block cache, fail mode, sync mode),
//! `object` (the Durable Objects), `sync_mode` (isolate-side sync), `proxy` + `ip` (proxy
//! mode), `reserve_api` (reserve and settle), `auth`, `config` + `env_config`, `respond` (answers and headers), `wire` (the
//! Worker <-> object protocol), `errors`. Capacity leases: `pools_api` (handlers),
//! `pool_request` (paths and bodies), `pool_config` (the `POOLS` var), `pool_wire` (the
//! Worker <-> pool object protocol), `object::pool` (one Durable Object per pool). Leased
//! quota: `leased_mode` (isolate side), `quota_wire`, `object::quota` (the key's ledger),
//! `flight` (one exchange out per key and isolate).

pub mod api;
pub mod api_request;
pub mod auth;
pub mod block_cache;
pub mod config;
pub mod controls;
pub mod decide;
pub mod do_client;
pub mod env_config;
pub mod errors;
pub mod flight;
pub mod key_queue;
pub mod leased_mode;
pub mod lock_wire;
pub mod log;
pub mod multi_key;
pub mod object;
pub mod observe;
pub mod pool_config;
pub mod pool_request;
pub mod pool_wire;
pub mod pools_api;
pub mod proxy;
pub mod proxy_headers;
pub mod quota_wire;
pub mod reserve_api;
pub mod respond;
pub mod routes;
pub mod spec_input;
pub mod state_api;
pub mod sync_mode;
#[cfg(feature = "test-hooks")]
pub mod tests;
pub mod tiers;
pub mod vars;
pub mod wire;

use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    let path = req.path();
    // A configuration that does not parse has no prefix of its own: the default names the route.
    let api_route = match env_config::config(&env) {
        Ok(c) => c.api_route(&path).map(str::to_string),
        Err(_) => config::api_route(config::DEFAULT_API_PREFIX, &path).map(str::to_string),
    };
    let (method, route) = (req.method().to_string(), routes::label(&path, api_route.as_deref()));
    Ok(match routes::route(req, &env, &ctx).await {
        Ok(resp) => resp,
        Err(e) => {
            // One line per error answered: the route's shape, never its keys or holders.
            let fields = serde_json::json!({
                "status": e.status, "code": e.code, "message": e.message, "method": method, "route": route,
            });
            if e.status >= 500 {
                log::error("error", fields);
            } else {
                log::warn("error", fields);
            }
            e.to_response()
        }
    })
}
