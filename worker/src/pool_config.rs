//! Capacity pools (notes, section 4), read from the `POOLS` var: a capacity split into
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
//! Validated like the policies, by the core's spec rules and constructors (`tollgate::spec`,
//! `LeasePool::new`), so a bad pool is the same `config_error` on every route, and its
//! mistakes carry the same codes as a policy's.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tollgate::lease::{LeasePool, MAX_HOLDER_LEN, MAX_PARTITIONS};
use tollgate::quota::MAX_LIMIT;
use tollgate::spec::{code, duration, known_fields, quota, whole, wrong_type, Input, SpecError, Value as Field};
use tollgate::text::Msg;
use tollgate::Nanos;

use crate::config::{valid_policy_name, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};
use crate::spec_input::{field, Json};

/// The longest lease any pool may allow: a crashed holder's partitions stay taken this long.
pub const MAX_TTL: Nanos = Nanos::from_secs(24 * 3600);
/// The longest lease a pool allows when `maxTtl` is not given.
pub const DEFAULT_MAX_TTL: Nanos = Nanos::from_secs(5 * 60);

/// One configured pool, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The pool's name (what the path names; also its Durable Object's name).
    pub name: String,
    /// How many partitions the capacity is split into.
    pub partitions: u32,
    /// Units per `window` one partition carries.
    pub partition_rate: u64,
    /// The window the rates are per.
    pub window: Nanos,
    /// The longest TTL a lease request may ask for.
    pub max_ttl: Nanos,
    /// How long to wait for the pool's Durable Object.
    pub timeout_ms: u64,
    /// The normalised description `GET /v1/pools` shows.
    pub description: Value,
}

impl PoolConfig {
    /// The whole capacity: every partition's rate, units per `window`.
    pub fn capacity(&self) -> u64 {
        self.partition_rate * self.partitions as u64
    }

    /// A rate of `units` per `window` in units per second.
    pub fn per_second(&self, units: u64) -> f64 {
        units as f64 * 1e9 / self.window.as_nanos() as f64
    }

    /// An empty pool of this shape (the core's state machine).
    pub fn empty_pool(&self) -> Result<LeasePool, String> {
        LeasePool::new(self.partitions, self.partition_rate, self.window).map_err(|e| e.to_string())
    }
}

/// A pool's fields.
pub const POOL_FIELDS: [&str; 4] = ["partitions", "rate", "maxTtl", "timeoutMs"];

fn required<T>(v: Option<T>, field: &str, what: &str) -> Result<T, SpecError> {
    v.ok_or_else(|| SpecError::new(code::MISSING_FIELD, field, Msg::new(field).s(" is required: ").s(what)))
}

/// Parses one pool, by the core's spec rules (`tollgate::spec`), so its errors carry the
/// same codes and field names as a policy's.
pub fn parse_pool(name: &str, v: &Value) -> Result<PoolConfig, SpecError> {
    let input = Json(v.clone());
    if !v.is_object() {
        return Err(wrong_type(&input, "", &field(v), "an object { partitions, rate }"));
    }
    known_fields(&input, &[&POOL_FIELDS], "")?;
    let partitions = whole(&input, "partitions", 1, MAX_PARTITIONS as u64, "")?;
    let partitions = required(partitions, "partitions", "how many partitions the capacity is split into")? as u32;
    let rate = match input.get("rate") {
        Field::Text(r) => quota("rate", &r)?,
        Field::Missing => return Err(required(None, "rate", "the quota one partition carries, e.g. \"25/s\"")?),
        other => return Err(wrong_type(&input, "rate", &other, "a quota string such as \"25/s\"")),
    };
    let capacity = rate.0 as u128 * partitions as u128;
    if capacity > MAX_LIMIT as u128 {
        let m = format!("capacity {partitions} x {} = {capacity} is above the maximum {MAX_LIMIT}", rate.0);
        return Err(SpecError::new(code::OUT_OF_RANGE, "rate", Msg::new(&m)));
    }
    let max_ttl = duration(&input, "maxTtl", 1)?.unwrap_or(DEFAULT_MAX_TTL);
    if max_ttl < Nanos::from_millis(1) || max_ttl > MAX_TTL {
        let m = format!("maxTtl must be from 1ms to 1d ({} ms)", MAX_TTL.as_millis_floor());
        return Err(SpecError::new(code::OUT_OF_RANGE, "maxTtl", Msg::new(&m)));
    }
    let timeout_ms = whole(&input, "timeoutMs", 1, MAX_TIMEOUT_MS, " of milliseconds")?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let mut pc = PoolConfig {
        name: name.to_string(),
        partitions,
        partition_rate: rate.0,
        window: rate.1,
        max_ttl,
        timeout_ms,
        description: Value::Null,
    };
    pc.empty_pool().map_err(|e| SpecError::new(code::OUT_OF_RANGE, "rate", Msg::new(&e)))?;
    pc.description = json!({
        "partitions": partitions,
        "partitionRate": pc.partition_rate,
        "window": pc.window.as_millis_floor(),
        "capacity": pc.capacity(),
        "ratePerSecond": pc.per_second(pc.capacity()),
        "maxTtlMs": max_ttl.as_millis_floor(),
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
        out.insert(
            name.clone(),
            parse_pool(name, p).map_err(|e| format!("pool {name:?}: {}", crate::config::located(&e)))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_of_the_issue_parses() {
        let pools = parse_pools(Some(&json!({ "ingest": { "partitions": 20, "rate": "25/s" } }))).unwrap();
        let p = &pools["ingest"];
        assert_eq!((p.partitions, p.partition_rate, p.window, p.capacity()), (20, 25, Nanos::from_secs(1), 500));
        assert_eq!(p.max_ttl, DEFAULT_MAX_TTL);
        assert_eq!(p.per_second(p.capacity()), 500.0);
        assert_eq!(p.description["window"], 1000);
        assert_eq!(p.description["capacity"], 500);
        let p =
            parse_pool("m", &json!({ "partitions": 4, "rate": "600/m", "maxTtl": "30s", "timeoutMs": 250 })).unwrap();
        assert_eq!((p.capacity(), p.per_second(150), p.max_ttl, p.timeout_ms), (2400, 2.5, Nanos::from_secs(30), 250));
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
