//! A policy's options beside its limits for an edge that answers HTTP and shares its counts
//! (the Worker's `POLICIES`): which rate-limit headers its answers carry, with the npm
//! middleware's names and defaults, how often an isolate syncs with the key's store
//! (`syncRate`), the operator's controls (allow and deny lists, shadow mode), and how it is
//! served when the key's store fails or is slow (`failure`, `timeoutMs`, `statusCode`). Parsed
//! here, beside the limits, so that every edge takes and refuses them alike; and what a
//! limit's description shows ([`describe_limit`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::access::AccessList;

use super::around::{flag, parse_headers_at, parse_status, parse_timeout_at, sync_rate_ms, sync_shown, Edge};
use super::{code, config_name, duration, one_of, wrong_type, Input, SpecError, Value};
use crate::algorithms::LimitSpec;
use crate::headers::{HeaderOptions, Standard};
use crate::policy::Policy;
use crate::text::Msg;
use crate::time::Nanos;

/// A policy's header options (docs/headers.md).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HeaderSpec {
    /// The `RateLimit` draft (`standardHeaders`: "draft-6" to "draft-10", true = "draft-6" as
    /// in express-rate-limit, false = none); "draft-10" by default.
    pub standard: Option<Standard>,
    /// `X-RateLimit-*` (`legacyHeaders`, true by default).
    pub legacy: bool,
    /// Send the key, hashed, as `pk` (`partitionKey`, false by default).
    pub partition_key: bool,
    /// Spread `Retry-After` and `t` of denials (`jitter`, false by default).
    pub jitter: bool,
}

impl HeaderSpec {
    /// The options for one answer about `key`: `draw` gives the jitter's draw in `[0, 1)`,
    /// asked only when the answer is a denial and `jitter` is on.
    pub fn options<'k>(&self, key: &'k str, allowed: bool, draw: impl FnOnce() -> f64) -> HeaderOptions<'k> {
        HeaderOptions {
            standard: self.standard,
            legacy: self.legacy,
            partition_key: self.partition_key.then_some(key),
            jitter: (self.jitter && !allowed).then(draw),
        }
    }
}

/// The header options' fields.
pub const HEADER_FIELDS: [&str; 4] = super::typed::names(&super::typed::HEADERS);

/// `standardHeaders`, `legacyHeaders`, `partitionKey` and `jitter` as the Worker takes them.
pub fn parse_headers<I: Input>(input: &I) -> Result<HeaderSpec, SpecError> {
    parse_headers_at(input, Edge::Worker)
}

/// The controls' fields in a policy (docs/vocabulary.md).
pub const CONTROL_FIELDS: [&str; 3] = super::typed::names(&super::typed::CONTROL);

/// A policy's controls beside its limits: lists checked before them (`crate::access`), and
/// shadow mode (decide and count, never block).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ControlSpec {
    /// Decide and count, but admit every hit (`shadow = true`).
    pub shadow: bool,
    /// Keys, addresses and networks admitted without counting.
    pub allow: AccessList,
    /// Keys, addresses and networks denied without counting.
    pub deny: AccessList,
}

/// `shadow`, `allowList` and `denyList` (each list of non-empty keys, addresses and
/// networks), off and empty when absent.
pub fn parse_controls<I: Input>(input: &I) -> Result<ControlSpec, SpecError> {
    let shadow = parse_shadow(input)?;
    Ok(ControlSpec { shadow, allow: access_list(input, "allowList")?, deny: access_list(input, "denyList")? })
}

/// `shadow` alone, off when absent: what an edge without the lists (the lite wasm module,
/// which leaves out their address parser) parses.
pub fn parse_shadow<I: Input>(input: &I) -> Result<bool, SpecError> {
    flag(input, "shadow", false, "true or false")
}

fn access_list<I: Input>(input: &I, field: &str) -> Result<AccessList, SpecError> {
    let items = match input.get(field) {
        Value::Missing => return Ok(AccessList::default()),
        Value::List(items) => items,
        other => return Err(wrong_type(input, field, &other, "an array of keys, IP addresses and networks")),
    };
    let mut entries = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match item {
            Value::Text(s) if !s.is_empty() => entries.push(s),
            other => return Err(wrong_type(input, &entry_field(field, i), &other, "a non-empty string")),
        }
    }
    AccessList::parse(entries.iter().map(String::as_str)).map_err(|i| {
        let at = entry_field(field, i);
        let m = Msg::new(&at).s(" ").q(&entries[i]).s(" is not an IP network (address/prefix, e.g. \"10.0.0.0/8\")");
        SpecError::new(code::INVALID_VALUE, &at, m)
    })
}

/// `field[i]`, built without `core::fmt` (the wasm modules parse the lists too).
fn entry_field(field: &str, i: usize) -> String {
    Msg::new(field).s("[").n(i as u64).s("]").0
}

/// The longest sync interval (one hour, in ms): longer is almost certainly a unit mistake.
pub const MAX_SYNC_MS: i64 = 3_600_000;

/// `syncRate` for `policy` ([`sync_rate_ms`], then [`check_sync_rate`]).
pub fn parse_sync_rate<I: Input>(input: &I, policy: &Policy) -> Result<i64, SpecError> {
    check_sync_rate(sync_rate_ms(input)?, policy)
}

/// What a `syncRate` of `ms` asks of `policy`: a synced policy needs every limit mergeable and
/// no penalty (`blockDuration`, which only the key's store can keep).
pub fn check_sync_rate(ms: i64, policy: &Policy) -> Result<i64, SpecError> {
    let field = "syncRate";
    if ms != 0 && !policy.is_mergeable() {
        let m = sync_shown(Msg::new(""), ms)
            .s(" needs every limit to be mergeable (fixed-window, sliding-window or sliding-buckets); \
             use syncRate = 0 with this policy");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, field, m));
    }
    if ms != 0 && policy.block_duration() > Nanos::ZERO {
        let m = Msg::new("blockDuration needs the key's Durable Object to decide every hit (syncRate = 0), got ");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, "blockDuration", sync_shown(m, ms)));
    }
    Ok(ms)
}

/// The field of leased mode: the longest lease of an isolate's slice of a key's quota.
pub const LEASE_FIELD: &str = "leaseTtl";

/// `leaseTtl` for `policy`, whose `syncRate` is `sync_ms` ([`parse_sync_rate`]): a duration
/// from 1 ms to [`MAX_SYNC_MS`] in whole milliseconds (rounded up), 0 when absent (the policy
/// is not leased). Leased mode takes every algorithm (the bound per algorithm is the core's),
/// but neither `syncRate` (another mode) nor `blockDuration` (which only the key's store can
/// keep).
pub fn parse_lease_ttl<I: Input>(input: &I, policy: &Policy, sync_ms: i64) -> Result<u64, SpecError> {
    // A concurrency limit written at the top carries its own `leaseTtl`; leased mode keeps a
    // key's quota in slices, which a count of live leases cannot be cut into.
    #[cfg(feature = "concurrency")]
    if policy.has_concurrency() {
        if super::concurrency::is_concurrency(input) || matches!(input.get(LEASE_FIELD), Value::Missing) {
            return Ok(0);
        }
        let m = Msg::new(LEASE_FIELD).s(" (leased mode) cannot hold a concurrency limit: give leaseTtl in the limit");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, LEASE_FIELD, m));
    }
    let Some(ttl) = duration(input, LEASE_FIELD, 1)? else { return Ok(0) };
    if ttl > Nanos::from_millis(MAX_SYNC_MS as u64) {
        let m = Msg::new(LEASE_FIELD).s(" is longer than the maximum ").n(MAX_SYNC_MS as u64).s(" ms");
        return Err(SpecError::new(code::OUT_OF_RANGE, LEASE_FIELD, m));
    }
    if sync_ms != 0 {
        let m = sync_shown(Msg::new(LEASE_FIELD).s(" (leased mode) and "), sync_ms)
            .s(" (synced mode) are two modes: choose one");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, LEASE_FIELD, m));
    }
    if policy.block_duration() > Nanos::ZERO {
        let m = Msg::new("blockDuration needs the key's Durable Object to decide every hit, not leased mode");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, "blockDuration", m));
    }
    Ok(ttl.as_millis_ceil())
}

/// A policy's fields beside its limits at an edge that serves HTTP (the Worker's `POLICIES`):
/// `syncRate`, `leaseTtl` (leased mode: how long an isolate's slice of a key's quota lasts at
/// most, which the Worker reads), [`parse_serving`]'s, [`HEADER_FIELDS`] and [`CONTROL_FIELDS`].
pub const SERVING_FIELDS: [&str; 12] = [
    "syncRate",
    LEASE_FIELD,
    "failure",
    "timeoutMs",
    "statusCode",
    HEADER_FIELDS[0],
    HEADER_FIELDS[1],
    HEADER_FIELDS[2],
    HEADER_FIELDS[3],
    CONTROL_FIELDS[0],
    CONTROL_FIELDS[1],
    CONTROL_FIELDS[2],
];

/// What to answer when the key's store errors or does not answer in time (`failure`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FailMode {
    /// Allow the hit (and mark the answer degraded): `"open"`, the default.
    Open,
    /// Deny the hit (and mark the answer degraded): `"closed"`.
    Closed,
}

impl FailMode {
    /// The names `failure` takes, in the variants' order.
    pub const NAMES: [&'static str; 2] = ["open", "closed"];

    /// The name used in the configuration and the degraded header.
    pub fn name(self) -> &'static str {
        FailMode::NAMES[self as usize]
    }
}

/// The most milliseconds a policy or a pool may wait for its store (`timeoutMs`).
pub const MAX_TIMEOUT_MS: u64 = 30_000;
/// The wait for the store when `timeoutMs` is absent.
pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;

/// How a policy is served beside its limits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Serving {
    /// `failure`: what to answer when the key's store fails.
    pub on_error: FailMode,
    /// `timeoutMs`: how long to wait for the key's store.
    pub timeout_ms: u64,
    /// `statusCode`: the HTTP status of a denial, 200 (an answer, which HTTP clients do not
    /// retry on their own; the default) or 429.
    pub deny_status: u16,
}

/// `timeoutMs`: whole milliseconds from 1 to [`MAX_TIMEOUT_MS`], [`DEFAULT_TIMEOUT_MS`] when absent.
pub fn parse_timeout<I: Input>(input: &I) -> Result<u64, SpecError> {
    parse_timeout_at(input, Edge::Worker)
}

/// `failure`, `timeoutMs` and `statusCode` as the Worker takes them ([`parse_around`]'s domains).
pub fn parse_serving<I: Input>(input: &I) -> Result<Serving, SpecError> {
    let on_error = match one_of(input, "failure", &FailMode::NAMES)? {
        None | Some(0) => FailMode::Open,
        _ => FailMode::Closed,
    };
    let (timeout_ms, deny_status) = (parse_timeout(input)?, parse_status(input, Edge::Worker)? as u16);
    Ok(Serving { on_error, timeout_ms, deny_status })
}

/// One value of a limit's description.
#[derive(Clone, Debug, PartialEq)]
pub enum Shown {
    /// A name.
    Text(String),
    /// A whole number.
    Whole(u64),
    /// A duration in milliseconds: whole, or a fraction for a sub-millisecond part.
    Ms(Nanos),
    /// A signed number of milliseconds (a calendar window's offset).
    Float(f64),
}

/// What a limit's description shows (`GET /v1/policies`): its options as configured,
/// durations in milliseconds (`windowMs`, `precisionMs`, `offsetMs`), a window of calendar
/// months as the spec writes it (`"1month"`, with the offset signed).
pub fn describe_limit(name: &str, spec: &LimitSpec) -> Vec<(&'static str, Shown)> {
    let (algorithm, align) = config_name(spec.algorithm);
    let mut d = Vec::from([
        ("name", Shown::Text(name.into())),
        ("algorithm", Shown::Text(algorithm.into())),
        ("limit", Shown::Whole(spec.limit)),
    ]);
    #[cfg(feature = "concurrency")]
    if spec.algorithm == crate::algorithms::Kind::Concurrency {
        d.push(("leaseTtlMs", Shown::Ms(spec.window)));
        return d;
    }
    if spec.months.is_none() {
        d.push(("windowMs", Shown::Ms(spec.window)));
    }
    d.extend(align.map(|a| ("align", Shown::Text(a.into()))));
    d.extend(spec.burst.map(|b| ("burst", Shown::Whole(b))));
    d.extend(spec.refill_amount.map(|r| ("refillAmount", Shown::Whole(r))));
    d.extend(spec.precision.map(|p| ("precisionMs", Shown::Ms(p))));
    d.extend(spec.offset.map(|o| ("offsetMs", Shown::Ms(o))));
    if let Some(m) = spec.months {
        let window = Msg::new("").n(m.count as u64).s(if m.count == 1 { "month" } else { "months" });
        d.push(("window", Shown::Text(window.0)));
        if m.offset_ns != 0 {
            d.push(("offsetMs", Shown::Float(m.offset_ns as f64 / 1e6)));
        }
    }
    d
}
