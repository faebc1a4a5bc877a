//! Parsing and validating lease requests: the path under `/v1/pools/`, the JSON bodies and
//! the test clock. Everything is checked here, before the pool's object is called, so a bad
//! request never changes a pool.
//!
//! | method | path | body |
//! |---|---|---|
//! | GET | `/v1/pools/{pool}` | (status) |
//! | POST | `/v1/pools/{pool}/leases` | `{"holder","partitions","ttlMs"}` |
//! | POST | `/v1/pools/{pool}/leases/{holder}/renew` | `{"ttlMs"}` |
//! | DELETE | `/v1/pools/{pool}/leases/{holder}` | none |
//!
//! A holder in a path is percent-decoded (so it may hold `/` as `%2F`); everything between
//! `leases/` and `/renew` (or the end) is the holder.

use serde_json::{Map, Value};
use tollgate::lease::MAX_HOLDER_LEN;
use tollgate::Nanos;

use crate::base::errors::ApiError;
use crate::config::pool_config::PoolConfig;
use crate::config::settings::Config;
use crate::request::api_request::percent_decode;
use crate::request::api_request::{bad_path, json_object};
use crate::request::clock::requested;

/// What a path under `/v1/pools/` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PoolRoute {
    /// `GET /v1/pools/{pool}`.
    Status,
    /// `POST /v1/pools/{pool}/leases`.
    Grant,
    /// `POST /v1/pools/{pool}/leases/{holder}/renew`.
    Renew(String),
    /// `DELETE /v1/pools/{pool}/leases/{holder}`.
    Release(String),
}

impl PoolRoute {
    /// The one method the route takes, as for an `Allow` header.
    pub fn method(&self) -> &'static str {
        match self {
            PoolRoute::Status => "GET",
            PoolRoute::Grant | PoolRoute::Renew(_) => "POST",
            PoolRoute::Release(_) => "DELETE",
        }
    }
}

/// Checks a holder name against the core's rule (1 to [`MAX_HOLDER_LEN`] bytes of UTF-8).
pub fn check_holder(holder: &str) -> Result<(), ApiError> {
    if holder.is_empty() || holder.len() > MAX_HOLDER_LEN {
        return Err(ApiError::bad_request(
            "invalid_holder",
            format!("holder must be 1 to {MAX_HOLDER_LEN} bytes (UTF-8), not {} bytes", holder.len()),
        ));
    }
    Ok(())
}

/// Splits `rest` (the path after `/v1/pools/`) into the pool's name and the route.
/// `None`: no such route (404 `not_found`).
pub fn parse_route(rest: &str) -> Result<Option<(String, PoolRoute)>, ApiError> {
    let (pool, tail) = match rest.split_once('/') {
        Some((pool, tail)) => (pool, Some(tail)),
        None => (rest, None),
    };
    if pool.is_empty() {
        return Ok(None);
    }
    let pool = percent_decode(pool).ok_or_else(bad_path)?;
    let route = match tail {
        None | Some("") => PoolRoute::Status,
        Some("leases") | Some("leases/") => PoolRoute::Grant,
        Some(t) => {
            let Some(h) = t.strip_prefix("leases/") else { return Ok(None) };
            let (raw, renew) = match h.strip_suffix("/renew") {
                Some(raw) => (raw, true),
                None => (h, false),
            };
            let holder = percent_decode(raw).ok_or_else(bad_path)?;
            check_holder(&holder)?;
            if renew {
                PoolRoute::Renew(holder)
            } else {
                PoolRoute::Release(holder)
            }
        }
    };
    Ok(Some((pool, route)))
}

/// Looks a pool up by name (404 `unknown_pool`).
pub fn find_pool<'c>(config: &'c Config, name: &str) -> Result<&'c PoolConfig, ApiError> {
    config.pools.get(name).ok_or_else(|| {
        let known: Vec<&str> = config.pools.keys().map(String::as_str).collect();
        let known = if known.is_empty() { "none (set the POOLS var)".to_string() } else { known.join(", ") };
        ApiError::new(404, "unknown_pool", format!("no pool named {name:?}; configured: {known}"))
    })
}

/// A validated grant (`holder` and `partitions` are 0/empty for a renewal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseBody {
    /// Who asks.
    pub holder: String,
    /// Up to how many partitions, in all.
    pub partitions: u32,
    /// How long the leases last.
    pub ttl: Nanos,
    /// The test clock.
    pub now: Option<Nanos>,
}

/// The fields of a lease request's body (docs/vocabulary.md).
pub const GRANT_FIELDS: [&str; 4] = ["holder", "partitions", "ttlMs", "now"];
/// The fields of a renewal's body.
pub const RENEW_FIELDS: [&str; 2] = ["ttlMs", "now"];

fn ttl(obj: &Map<String, Value>, pc: &PoolConfig) -> Result<Nanos, ApiError> {
    let max = pc.max_ttl().as_millis_floor();
    let bad = |what: String| {
        ApiError::bad_request(
            "invalid_ttl",
            format!("ttlMs must be a whole number of milliseconds from 1 to {max} (the pool's maxTtl), {what}"),
        )
    };
    match obj.get("ttlMs") {
        None | Some(Value::Null) => Err(bad("and is required".into())),
        Some(v) => match v.as_u64() {
            Some(ms) if (1..=max).contains(&ms) => Ok(Nanos::from_millis(ms)),
            _ => Err(bad(format!("not {v}"))),
        },
    }
}

/// The body of `POST /v1/pools/{pool}/leases`: `{"holder","partitions","ttlMs"}`.
pub fn parse_grant(body: &[u8], pc: &PoolConfig, test_mode: bool) -> Result<LeaseBody, ApiError> {
    let obj = json_object(body, &GRANT_FIELDS, r#"{"holder":"worker-1","partitions":4,"ttlMs":15000}"#)?;
    let holder = match obj.get("holder") {
        Some(Value::String(h)) => h.clone(),
        None | Some(Value::Null) => return Err(ApiError::bad_request("invalid_holder", "holder is required")),
        Some(other) => {
            return Err(ApiError::bad_request("invalid_holder", format!("holder must be a string, not {other}")))
        }
    };
    check_holder(&holder)?;
    let n = pc.partitions();
    let partitions = match obj.get("partitions") {
        None | Some(Value::Null) => return Err(ApiError::bad_request("invalid_partitions", "partitions is required")),
        Some(v) => v.as_u64().filter(|p| (1..=n as u64).contains(p)).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_partitions",
                format!("partitions must be a whole number from 1 to {n} (the pool's size), not {v}"),
            )
        })? as u32,
    };
    let ttl = ttl(&obj, pc)?;
    let now = requested(obj.get("now"), test_mode)?;
    Ok(LeaseBody { holder, partitions, ttl, now })
}

/// The body of `POST .../leases/{holder}/renew`: `{"ttlMs"}`.
pub fn parse_renew(body: &[u8], holder: String, pc: &PoolConfig, test_mode: bool) -> Result<LeaseBody, ApiError> {
    let obj = json_object(body, &RENEW_FIELDS, r#"{"ttlMs":15000}"#)?;
    let ttl = ttl(&obj, pc)?;
    let now = requested(obj.get("now"), test_mode)?;
    Ok(LeaseBody { holder, partitions: 0, ttl, now })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::pool_config::parse_pool;
    use crate::request::api_request::MAX_BODY_BYTES;
    use serde_json::json;

    fn ingest() -> PoolConfig {
        parse_pool("ingest", &json!({ "partitions": 20, "rate": "25/s", "maxTtl": "1m" })).unwrap()
    }

    #[test]
    fn routes() {
        let r = |s: &str| parse_route(s).unwrap();
        assert_eq!(r("ingest"), Some(("ingest".into(), PoolRoute::Status)));
        assert_eq!(r("ingest/"), Some(("ingest".into(), PoolRoute::Status)));
        assert_eq!(r("ingest/leases"), Some(("ingest".into(), PoolRoute::Grant)));
        assert_eq!(r("ingest/leases/w1/renew"), Some(("ingest".into(), PoolRoute::Renew("w1".into()))));
        assert_eq!(r("ingest/leases/w1"), Some(("ingest".into(), PoolRoute::Release("w1".into()))));
        assert_eq!(r("ingest/leases/a%2Fb%20c"), Some(("ingest".into(), PoolRoute::Release("a/b c".into()))));
        assert_eq!(r("ingest/leases/a/b/renew"), Some(("ingest".into(), PoolRoute::Renew("a/b".into()))));
        assert_eq!(r("ingest/other"), None);
        assert_eq!(r(""), None);
        assert_eq!(parse_route("ingest/leases/%zz").unwrap_err().code, "invalid_path");
        assert_eq!(parse_route("ingest/leases//renew").unwrap_err().code, "invalid_holder");
        let long = format!("ingest/leases/{}", "h".repeat(MAX_HOLDER_LEN + 1));
        assert_eq!(parse_route(&long).unwrap_err().code, "invalid_holder");
        assert_eq!(PoolRoute::Renew("x".into()).method(), "POST");
    }

    #[test]
    fn a_good_grant_parses() {
        let b = parse_grant(br#"{"holder":"w1","partitions":4,"ttlMs":15000}"#, &ingest(), false).unwrap();
        assert_eq!(b, LeaseBody { holder: "w1".into(), partitions: 4, ttl: Nanos::from_secs(15), now: None });
        let b = parse_grant(br#"{"holder":"w1","partitions":20,"ttlMs":60000,"now":1000}"#, &ingest(), true).unwrap();
        assert_eq!((b.partitions, b.now), (20, Some(Nanos::from_secs(1))));
        let r = parse_renew(br#"{"ttlMs":1}"#, "w1".into(), &ingest(), false).unwrap();
        assert_eq!(r.ttl, Nanos::from_millis(1));
    }

    #[test]
    fn every_mistake_has_its_code() {
        let long = format!(r#"{{"holder":"{}","partitions":1,"ttlMs":1}}"#, "h".repeat(MAX_HOLDER_LEN + 1));
        let cases: [(&str, &str); 16] = [
            ("nope", "invalid_json"),
            ("[1]", "invalid_body"),
            (r#"{"holder":"w","partitions":1,"ttlMs":1,"x":1}"#, "unknown_field"),
            (r#"{"partitions":1,"ttlMs":1}"#, "invalid_holder"),
            (r#"{"holder":"","partitions":1,"ttlMs":1}"#, "invalid_holder"),
            (r#"{"holder":7,"partitions":1,"ttlMs":1}"#, "invalid_holder"),
            (&long, "invalid_holder"),
            (r#"{"holder":"w","ttlMs":1}"#, "invalid_partitions"),
            (r#"{"holder":"w","partitions":0,"ttlMs":1}"#, "invalid_partitions"),
            (r#"{"holder":"w","partitions":21,"ttlMs":1}"#, "invalid_partitions"),
            (r#"{"holder":"w","partitions":1.5,"ttlMs":1}"#, "invalid_partitions"),
            (r#"{"holder":"w","partitions":1}"#, "invalid_ttl"),
            (r#"{"holder":"w","partitions":1,"ttlMs":0}"#, "invalid_ttl"),
            (r#"{"holder":"w","partitions":1,"ttlMs":60001}"#, "invalid_ttl"),
            (r#"{"holder":"w","partitions":1,"ttlMs":"5"}"#, "invalid_ttl"),
            (r#"{"holder":"w","partitions":1,"ttlMs":5,"now":5}"#, "test_mode_disabled"),
        ];
        for (body, want) in cases {
            assert_eq!(parse_grant(body.as_bytes(), &ingest(), false).unwrap_err().code, want, "{body}");
        }
        let err = parse_grant(br#"{"holder":"w","partitions":1,"ttlMs":5,"now":-5}"#, &ingest(), true).unwrap_err();
        assert_eq!(err.code, "invalid_now");
        let huge = format!(r#"{{"holder":"{}"}}"#, "x".repeat(MAX_BODY_BYTES));
        assert_eq!(parse_grant(huge.as_bytes(), &ingest(), false).unwrap_err().code, "body_too_large");
        assert_eq!(parse_renew(b"{}", "w".into(), &ingest(), false).unwrap_err().code, "invalid_ttl");
        assert_eq!(
            parse_renew(br#"{"ttlMs":5,"holder":"w"}"#, "w".into(), &ingest(), false).unwrap_err().code,
            "unknown_field"
        );
    }

    #[test]
    #[cfg(feature = "test-hooks")]
    fn now_in_a_query() {
        use crate::request::clock::query_now;
        assert_eq!(query_now(None, false).unwrap(), None);
        assert_eq!(query_now(Some("x=1"), false).unwrap(), None);
        assert_eq!(query_now(Some("x=1&now=2000"), true).unwrap(), Some(Nanos::from_secs(2)));
        assert_eq!(query_now(Some("now=2000"), false).unwrap_err().code, "test_mode_disabled");
        assert_eq!(query_now(Some("now=soon"), true).unwrap_err().code, "invalid_now");
        assert_eq!(query_now(Some("now"), true).unwrap_err().code, "invalid_now");
    }
}
