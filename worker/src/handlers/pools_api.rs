//! The capacity-lease handlers (`/v1/pools`): validate (`pool_request`), ask the pool's
//! Durable Object (which runs the core's `LeasePool`), and answer JSON.
//!
//! Times in answers are Unix ms (`expiresAt` rounded down: a holder should treat its lease
//! as gone from then on) and `now` is the pool's clock at the operation, so a holder whose
//! own clock differs can use `ttlMs` (`expiresAt - now`) instead.

use serde_json::{json, Value};
use tollgate::lease::Grant;
use tollgate::Nanos;
use worker::{Env, Request, Response};

use crate::base::errors::ApiError;
use crate::calls::do_client::call_pool;
use crate::config::pool_config::PoolConfig;
use crate::config::settings::Config;
use crate::handlers::api::json_response;
use crate::request::clock::query_now;
use crate::request::pool_request::{find_pool, parse_grant, parse_renew, parse_route, PoolRoute};
use crate::wire::pool_wire::{PoolOp, PoolReply, PoolRequest};

fn ms(n: u64) -> u64 {
    Nanos::new(n).as_millis_floor()
}

/// The answer to a grant or renewal.
pub fn grant_body(pc: &PoolConfig, holder: &str, g: &Grant, reply: &PoolReply) -> Value {
    json!({
        "pool": pc.name,
        "holder": holder,
        "partitions": g.partitions,
        "expiresAt": g.expires_at.as_millis_floor(),
        "ttlMs": ms(g.expires_at.as_nanos().saturating_sub(reply.now)),
        "rate": g.rate,
        "ratePerSecond": pc.per_second(g.rate),
        "window": pc.window().as_millis_floor(),
        "capacity": pc.capacity(),
        "free": reply.free,
        "now": ms(reply.now),
    })
}

/// The answer to a status request: every live lease, by holder, and every live demand with
/// its fair share (why a holder may get less than is free: the rest is others' share).
pub fn status_body(pc: &PoolConfig, reply: &PoolReply) -> Value {
    let leases: Vec<Value> = reply
        .holders
        .iter()
        .map(|h| {
            let rate = pc.partition_rate() * h.partitions.len() as u64;
            json!({ "holder": h.holder, "partitions": h.partitions, "expiresAt": ms(h.expires_at.as_nanos()), "rate": rate })
        })
        .collect();
    let leased: u64 = reply.holders.iter().map(|h| pc.partition_rate() * h.partitions.len() as u64).sum();
    let demands: Vec<Value> = reply
        .demands
        .iter()
        .map(|d| json!({ "holder": d.holder, "want": d.want, "share": d.share, "until": ms(d.until.as_nanos()) }))
        .collect();
    json!({
        "pool": pc.name,
        "partitions": pc.partitions(),
        "free": reply.free,
        "partitionRate": pc.partition_rate(),
        "window": pc.window().as_millis_floor(),
        "capacity": pc.capacity(),
        "leased": leased,
        "leases": leases,
        "demands": demands,
        "now": ms(reply.now),
    })
}

fn pool_request(
    op: PoolOp,
    pc: &PoolConfig,
    holder: String,
    partitions: u32,
    ttl: Nanos,
    now: Option<Nanos>,
) -> PoolRequest {
    PoolRequest { op, pool: pc.name.clone(), holder, partitions, ttl: ttl.as_nanos(), now: now.map(Nanos::as_nanos) }
}

/// Everything under `/v1/pools/` (`rest` is the path after it).
pub async fn handle(rest: &str, mut req: Request, env: &Env, cfg: &Config) -> Result<Response, ApiError> {
    let Some((pool, route)) = parse_route(rest)? else { return Err(ApiError::not_found()) };
    let method = req.method();
    if method.as_ref() != route.method() {
        return Err(ApiError::method_not_allowed(method.as_ref(), route.method()));
    }
    let pc = find_pool(cfg, &pool)?;
    let query = req.url()?.query().map(str::to_string);
    match route {
        PoolRoute::Status => {
            let now = query_now(query.as_deref(), cfg.test_hooks())?;
            let reply =
                call_pool(env, &pool_request(PoolOp::Status, pc, String::new(), 0, Nanos::ZERO, now), pc.timeout_ms)
                    .await?;
            json_response(200, &status_body(pc, &reply))
        }
        PoolRoute::Grant | PoolRoute::Renew(_) => {
            let body = crate::request::api_request::read_body(&mut req).await?;
            let (op, b) = match route {
                PoolRoute::Renew(holder) => (PoolOp::Renew, parse_renew(&body, holder, pc, cfg.test_hooks())?),
                _ => (PoolOp::Grant, parse_grant(&body, pc, cfg.test_hooks())?),
            };
            let r = pool_request(op, pc, b.holder, b.partitions, b.ttl, b.now);
            let reply = call_pool(env, &r, pc.timeout_ms).await?;
            let g = reply.grant.as_ref().ok_or_else(|| ApiError::internal("the pool answered no grant"))?;
            json_response(200, &grant_body(pc, &r.holder, g, &reply))
        }
        PoolRoute::Release(holder) => {
            let now = query_now(query.as_deref(), cfg.test_hooks())?;
            let r = pool_request(PoolOp::Release, pc, holder, 0, Nanos::ZERO, now);
            let reply = call_pool(env, &r, pc.timeout_ms).await?;
            let released = reply.released.unwrap_or(0);
            json_response(
                200,
                &json!({ "pool": pc.name, "holder": r.holder, "released": released, "free": reply.free, "now": ms(reply.now) }),
            )
        }
    }
}

/// `GET /v1/pools`: every pool, normalised.
pub fn list(cfg: &Config) -> Result<Response, ApiError> {
    let map: serde_json::Map<String, Value> =
        cfg.pools.iter().map(|(name, pc)| (name.clone(), pc.description.clone())).collect();
    json_response(200, &json!({ "pools": map }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::pool_config::parse_pool;
    use tollgate::lease::{Holding, Share};

    #[test]
    fn a_grant_answers_rates_in_the_pool_s_units() {
        let pc = parse_pool("ingest", &json!({ "partitions": 20, "rate": "25/s" })).unwrap();
        let now = 1_800_000_000_000_000_000;
        let g = pc.pool.clone().grant("w1", 4, Nanos::from_secs(15), Nanos::new(now)).unwrap();
        let reply = PoolReply { now, free: 16, grant: Some(g.clone()), ..PoolReply::default() };
        let b = grant_body(&pc, "w1", &g, &reply);
        assert_eq!(b["rate"], 100);
        assert_eq!(b["ratePerSecond"], 100.0);
        assert_eq!((b["window"].clone(), b["capacity"].clone()), (json!(1000), json!(500)));
        assert_eq!(
            (b["expiresAt"].clone(), b["ttlMs"].clone(), b["now"].clone()),
            (json!(1_800_000_015_000u64), json!(15_000), json!(1_800_000_000_000u64))
        );
        assert_eq!(b["partitions"], json!([0, 1, 2, 3]));
    }

    #[test]
    fn status_sums_the_leased_rate() {
        let pc = parse_pool("p", &json!({ "partitions": 4, "rate": "600/m" })).unwrap();
        let holders = vec![
            Holding { holder: "a".into(), partitions: vec![0, 2], expires_at: Nanos::new(5_000_000) },
            Holding { holder: "b".into(), partitions: vec![1], expires_at: Nanos::new(7_000_000) },
        ];
        let demands = vec![Share { holder: "c".into(), want: 3, share: 1, until: Nanos::new(9_000_000) }];
        let reply = PoolReply { now: 1_000_000, free: 1, holders, demands, ..PoolReply::default() };
        let b = status_body(&pc, &reply);
        assert_eq!(
            (b["leased"].clone(), b["capacity"].clone(), b["window"].clone()),
            (json!(1800), json!(2400), json!(60_000))
        );
        assert_eq!(b["leases"][0], json!({ "holder": "a", "partitions": [0, 2], "expiresAt": 5, "rate": 1200 }));
        assert_eq!(b["demands"], json!([{ "holder": "c", "want": 3, "share": 1, "until": 9 }]));
    }
}
