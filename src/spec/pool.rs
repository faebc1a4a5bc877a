//! The schema of a capacity pool (`crate::lease`): a capacity split into partitions that
//! uncoordinated holders lease for a while. The Worker's `POOLS` var is the edge that reads
//! it today; its fields, ranges and mistakes are stated here, beside a policy's, so that a
//! pool is refused with the same codes, field names and wording wherever it is configured.
//!
//! ```
//! use tollgate::spec::{parse_pool, Input, Value};
//! use tollgate::Nanos;
//! # struct Obj(Vec<(&'static str, Value<Obj>)>);
//! # impl Input for Obj {
//! #     fn get(&self, field: &str) -> Value<Obj> {
//! #         self.0.iter().find(|(k, _)| *k == field).map_or(Value::Missing, |(_, v)| match v {
//! #             Value::Text(s) => Value::Text(s.clone()),
//! #             Value::Number(n) => Value::Number(*n),
//! #             _ => Value::Other,
//! #         })
//! #     }
//! #     fn field_names(&self) -> Vec<String> { self.0.iter().map(|(k, _)| k.to_string()).collect() }
//! # }
//! // 500/s as 20 partitions of 25/s.
//! let ok = Obj(vec![("partitions", Value::Number(20.0)), ("rate", Value::Text("25/s".into()))]);
//! let spec = parse_pool(&ok, &[]).unwrap();
//! assert_eq!((spec.pool.partitions(), spec.pool.partition_rate(), spec.capacity()), (20, 25, 500));
//! assert_eq!(spec.max_ttl, Nanos::from_secs(5 * 60));
//! let bad = Obj(vec![("partitions", Value::Number(20.0)), ("rate", Value::Text("25/s".into())),
//!                    ("maxTtl", Value::Text("2d".into()))]);
//! let e = parse_pool(&bad, &[]).unwrap_err();
//! assert_eq!((e.code, e.field.as_str()), ("out_of_range", "maxTtl"));
//! ```

use alloc::string::ToString;

use super::{code, duration, known_fields, quota, whole, wrong_type, Input, SpecError, Value};
use crate::lease::{LeasePool, DEFAULT_MAX_TTL, MAX_PARTITIONS, MAX_TTL};
use crate::quota::MAX_LIMIT;
use crate::text::Msg;
use crate::time::Nanos;

/// The fields of a pool, at every edge that configures one. An edge's own fields (the
/// Worker's `timeoutMs`: how long it waits for the pool's Durable Object) are passed to
/// [`parse_pool`] beside these.
pub const POOL_FIELDS: [&str; 3] = ["partitions", "rate", "maxTtl"];

/// A parsed pool: the empty pool of its shape, ready to lease, and the longest lease it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSpec {
    /// The pool with no lease held: its partitions, partition rate and window.
    pub pool: LeasePool,
    /// The longest TTL a lease request may ask for (`maxTtl`), at most [`MAX_TTL`].
    pub max_ttl: Nanos,
}

impl PoolSpec {
    /// How many partitions the capacity is split into.
    pub fn partitions(&self) -> u32 {
        self.pool.partitions()
    }

    /// Units per window one partition carries.
    pub fn partition_rate(&self) -> u64 {
        self.pool.partition_rate()
    }

    /// The window the rates are per.
    pub fn window(&self) -> Nanos {
        self.pool.window()
    }

    /// The longest TTL a lease request may ask for.
    pub fn max_ttl(&self) -> Nanos {
        self.max_ttl
    }

    /// A rate of `units` per window in units per second.
    pub fn per_second(&self, units: u64) -> f64 {
        units as f64 * 1e9 / self.window().as_nanos() as f64
    }

    /// The whole capacity: every partition's rate, units per window (at most
    /// [`MAX_LIMIT`], which [`parse_pool`] checks).
    pub fn capacity(&self) -> u64 {
        self.pool.partition_rate().saturating_mul(self.pool.partitions() as u64)
    }
}

fn required(field: &str, what: &str) -> SpecError {
    SpecError::new(code::MISSING_FIELD, field, Msg::new(field).s(" is required: ").s(what))
}

/// Parses a pool: `{ partitions, rate, maxTtl }` (`rate` the quota one partition carries,
/// `"25/s"`). `edge_fields` are the edge's own fields beside them: accepted here, parsed by
/// the edge. The whole capacity must be a limit the core can count (at most [`MAX_LIMIT`]
/// per window), and `maxTtl` from 1 ms to [`MAX_TTL`] ([`DEFAULT_MAX_TTL`] when absent).
pub fn parse_pool<I: Input>(input: &I, edge_fields: &[&str]) -> Result<PoolSpec, SpecError> {
    known_fields(input, &[&POOL_FIELDS, edge_fields], "")?;
    let partitions = whole(input, "partitions", 1, MAX_PARTITIONS as u64, "")?
        .ok_or_else(|| required("partitions", "how many partitions the capacity is split into"))?;
    let (rate, window) = match input.get("rate") {
        Value::Text(r) => quota("rate", &r)?,
        Value::Missing => return Err(required("rate", "the quota one partition carries, e.g. \"25/s\"")),
        other => return Err(wrong_type(input, "rate", &other, "a quota string such as \"25/s\"")),
    };
    // Both are bounded above (1024 partitions of at most 2^53 - 1), so the product fits.
    let capacity = rate.saturating_mul(partitions);
    if capacity > MAX_LIMIT {
        let m = Msg::new("capacity ").n(partitions).s(" x ").n(rate).s(" = ").n(capacity);
        let m = m.s(" is above the maximum ").n(MAX_LIMIT);
        return Err(SpecError::new(code::OUT_OF_RANGE, "rate", m));
    }
    let max_ttl = duration(input, "maxTtl", 1)?.unwrap_or(DEFAULT_MAX_TTL);
    if max_ttl < Nanos::from_millis(1) || max_ttl > MAX_TTL {
        let m = Msg::new("maxTtl must be from 1ms to 1d (").n(MAX_TTL.as_millis_floor()).s(" ms)");
        return Err(SpecError::new(code::OUT_OF_RANGE, "maxTtl", m));
    }
    // Every rule `LeasePool::new` checks was checked above with the field named.
    let pool = LeasePool::new(partitions as u32, rate, window)
        .map_err(|e| SpecError::new(code::OUT_OF_RANGE, "rate", Msg::new(&e.to_string())))?;
    Ok(PoolSpec { pool, max_ttl })
}
