//! Capacity pools, read from the `POOLS` var: a capacity split into
//! partitions that uncoordinated holders lease for a while (`/v1/pools/...`).
//!
//! ```toml
//! [vars.POOLS.ingest]   # 500/s as 20 partitions of 25/s
//! partitions = 20
//! rate = "25/s"         # per partition: the quota one partition carries
//! maxTtl = "5m"         # the longest lease a request may ask for (default 5m, at most 1d)
//! timeoutMs = 1000      # how long to wait for the pool's Durable Object (default 1000)
//! ```
//!
//! The schema (`partitions`, `rate`, `maxTtl`: which fields, their ranges, their mistakes) is
//! the core's (`tollgate::spec::parse_pool`, beside the policies' parser), so a bad pool is
//! the same `config_error` on every route, and its mistakes carry the same codes as a
//! policy's. Only `timeoutMs` is the Worker's own: how long to wait for its Durable Object.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tollgate::lease::MAX_HOLDER_LEN;
use tollgate::spec::{parse_pool as parse_spec, parse_timeout, wrong_type, PoolSpec, SpecError};

use crate::config::spec_input::valid_policy_name;
use crate::config::spec_input::{field, Json};

/// One configured pool, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The pool's name (what the path names; also its Durable Object's name).
    pub name: String,
    /// The pool's shape and longest lease, as the core parsed them.
    pub spec: PoolSpec,
    /// How long to wait for the pool's Durable Object.
    pub timeout_ms: u64,
    /// The normalised description `GET /v1/pools` shows.
    pub description: Value,
}

/// The pool's figures are its spec's (`PoolSpec::partitions`, `capacity`, `per_second`...).
impl std::ops::Deref for PoolConfig {
    type Target = PoolSpec;

    fn deref(&self) -> &PoolSpec {
        &self.spec
    }
}

/// A pool's fields the Worker reads itself, beside the core's (`tollgate::spec::POOL_FIELDS`).
pub const POOL_EDGE_FIELDS: [&str; 1] = ["timeoutMs"];

/// Parses one pool: its schema by the core (`tollgate::spec::parse_pool`), `timeoutMs` here.
pub fn parse_pool(name: &str, v: &Value) -> Result<PoolConfig, SpecError> {
    let input = Json(v.clone());
    if !v.is_object() {
        return Err(wrong_type(&input, "", &field(v), "an object { partitions, rate }"));
    }
    let spec = parse_spec(&input, &POOL_EDGE_FIELDS)?;
    let timeout_ms = parse_timeout(&input)?;
    let mut pc = PoolConfig { name: name.to_string(), spec, timeout_ms, description: Value::Null };
    pc.description = json!({
        "partitions": pc.partitions(),
        "partitionRate": pc.partition_rate(),
        "window": pc.window().as_millis_floor(),
        "capacity": pc.capacity(),
        "ratePerSecond": pc.per_second(pc.capacity()),
        "maxTtlMs": pc.max_ttl().as_millis_floor(),
        "maxHolderBytes": MAX_HOLDER_LEN,
        "timeoutMs": timeout_ms,
    });
    Ok(pc)
}

/// Parses the `POOLS` var (an object of pool name to pool; absent means no pools).
pub fn parse_pools(v: Option<&Value>) -> Result<BTreeMap<String, PoolConfig>, String> {
    let Some(v) = v else { return Ok(BTreeMap::new()) };
    let obj = v.as_object().ok_or("POOLS must be an object of pool name to { partitions, rate }")?;
    let mut out = BTreeMap::new();
    for (name, p) in obj {
        if !valid_policy_name(name) {
            return Err(format!("pool name {name:?} must be 1 to 64 characters of A-Z a-z 0-9 - _ ."));
        }
        out.insert(name.clone(), parse_pool(name, p).map_err(|e| format!("pool {name:?}: {}", e.located()))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate::Nanos;

    #[test]
    fn the_pool_of_the_issue_parses() {
        let pools = parse_pools(Some(&json!({ "ingest": { "partitions": 20, "rate": "25/s" } }))).unwrap();
        let p = &pools["ingest"];
        assert_eq!((p.partitions(), p.partition_rate(), p.window(), p.capacity()), (20, 25, Nanos::from_secs(1), 500));
        assert_eq!(p.max_ttl(), tollgate::lease::DEFAULT_MAX_TTL);
        assert_eq!(p.per_second(p.capacity()), 500.0);
        assert_eq!(p.description["window"], 1000);
        assert_eq!(p.description["capacity"], 500);
        let p =
            parse_pool("m", &json!({ "partitions": 4, "rate": "600/m", "maxTtl": "30s", "timeoutMs": 250 })).unwrap();
        assert_eq!(
            (p.capacity(), p.per_second(150), p.max_ttl(), p.timeout_ms),
            (2400, 2.5, Nanos::from_secs(30), 250)
        );
    }

    #[test]
    fn no_pools_var_means_no_pools() {
        assert!(parse_pools(None).unwrap().is_empty());
    }

    #[test]
    fn bad_pools_say_what_is_wrong() {
        let cases = [
            (json!([1]), "must be an object"),
            (json!({ "a/b": { "partitions": 2, "rate": "1/s" } }), "pool name"),
            (json!({ "p": { "partitions": 0, "rate": "1/s" } }), "partitions"),
            (json!({ "p": { "partitions": 1025, "rate": "1/s" } }), "1 to 1024"),
            (json!({ "p": { "partitions": -1, "rate": "1/s" } }), "partitions must be a whole number"),
            (json!({ "p": { "partitions": 2 } }), "rate is required"),
            (json!({ "p": { "partitions": 2, "rate": "fast" } }), "rate \"fast\""),
            (json!({ "p": { "partitions": 2, "rate": "0/s" } }), "rate"),
            (json!({ "p": { "partitions": 1024, "rate": "9007199254740991/s" } }), "capacity"),
            (json!({ "p": { "partitions": 2, "rate": "1/s", "maxTtl": "2d" } }), "maxTtl"),
            (json!({ "p": { "partitions": 2, "rate": "1/s", "maxTtl": "soon" } }), "maxTtl"),
            (json!({ "p": { "partitions": 2, "rate": "1/s", "timeoutMs": 0 } }), "timeoutMs"),
            (json!({ "p": { "partitions": 2, "rate": "1/s", "ttl": "5s" } }), "ttl is not an option"),
        ];
        for (v, want) in cases {
            let err = parse_pools(Some(&v)).unwrap_err();
            assert!(err.contains(want), "{err:?} should mention {want:?}");
        }
    }
}
