//! The options around the limits as every edge reads them: one parser, and each edge's domain
//! as data ([`Edge`]). The Worker's `wrangler.toml` policies go through it; the npm stores
//! (`RedisStore`, `WorkerStore`) and HTTP middlewares (`rateLimit`, `rateLimitFetch`,
//! `tollgate/hono`, `tollgate/fastify`) read the same options with these domains and the core's
//! words, generated into their contract (`SERVING_DOMAINS`, `WORDS`): a wasm entry for this
//! parser costs the limiter's module about 5 KB gzipped, beyond its size budget. Where the
//! edges' domains differ (the Worker's Durable Object has no outage to throw or insure; an HTTP
//! middleware denies with 429 where the Worker answers 200), the difference is a row of
//! [`Edge::domain`], not a second parser.

use alloc::vec::Vec;

use super::serving::{FailMode, HeaderSpec, DEFAULT_TIMEOUT_MS, MAX_SYNC_MS, MAX_TIMEOUT_MS};
use super::{code, duration, one_of, whole, whole_number, wrong_type, Input, SpecError, Value};
use crate::headers::Standard;
use crate::quota::MAX_LIMIT;
use crate::text::Msg;
use crate::time::Nanos;

/// An edge that reads the options around the limits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Edge {
    /// The Worker's `POLICIES` (wrangler.toml).
    Worker,
    /// An npm store (`RedisStore`, `WorkerStore`).
    Store,
    /// An npm HTTP middleware.
    Http,
    /// An npm WebSocket middleware (`tollgate/hono`'s `webSocketLimiter`).
    WebSocket,
}

/// What an edge takes of each option around the limits.
#[derive(Copy, Clone, Debug)]
pub struct Domain {
    /// The names `failure` takes (the first is the default).
    pub failures: &'static [&'static str],
    /// The longest `timeoutMs`.
    pub max_timeout_ms: u64,
    /// `statusCode` from, to, and its default.
    pub status: (u64, u64, u64),
    /// `statusCode` as a choice of these alone (the Worker's), when not empty.
    pub status_only: &'static [u64],
    /// What `jitter` may be here, as the message says it.
    pub jitter: &'static str,
}

/// The options every npm store reads the same way ([`parse_around`] with [`Edge::Store`]).
pub const STORE_FIELDS: [&str; 6] = super::typed::names(&super::typed::STORE);

/// The names `failure` takes at an npm store: also `"throw"` (reject with the store's error) and
/// `"insurance"` (decide in memory with a share of each limit).
pub const STORE_FAILURES: [&str; 4] = ["open", "closed", "throw", "insurance"];
/// The longest `timeoutMs` of a Node store: a timer's delay, which Node caps at 2^31 - 1 ms.
pub const MAX_TIMER_MS: u64 = (1 << 31) - 1;
/// `blockedCache: true`: how long a denial over cached bytes stands without a round trip after
/// the store last confirmed them (a `reset` by another process is seen within it).
pub const BLOCKED_CACHE_MS: u64 = 1000;
/// The default IPv6 grouping (`ipv6Subnet`, express-rate-limit v8's).
pub const DEFAULT_IPV6_SUBNET: u64 = crate::ip_key::DEFAULT_IPV6_SUBNET as u64;

impl Edge {
    /// The edges by the names the wasm module takes, in the variants' order.
    pub const NAMES: [&'static str; 4] = ["worker", "store", "http", "websocket"];

    /// The edge of a name of [`Edge::NAMES`].
    pub fn named(name: &str) -> Option<Edge> {
        let all = [Edge::Worker, Edge::Store, Edge::Http, Edge::WebSocket];
        Edge::NAMES.iter().position(|n| *n == name).map(|i| all[i])
    }

    /// This edge's domains.
    pub const fn domain(self) -> Domain {
        let npm = "true, false or a function returning a number in [0, 1)";
        match self {
            Edge::Worker => Domain {
                failures: &FailMode::NAMES,
                max_timeout_ms: MAX_TIMEOUT_MS,
                status: (200, 429, 200),
                status_only: &[200, 429],
                jitter: "true or false",
            },
            Edge::Store => Domain {
                failures: &STORE_FAILURES,
                max_timeout_ms: MAX_TIMER_MS,
                status: (400, 599, 429),
                status_only: &[],
                jitter: npm,
            },
            Edge::Http => Domain { status: (400, 599, 429), ..Edge::Store.domain() },
            Edge::WebSocket => Domain { status: (1000, 4999, 1008), ..Edge::Store.domain() },
        }
    }
}

/// The options around the limits, normalised: each at its default when absent.
#[derive(Clone, Debug, PartialEq)]
pub struct Around {
    /// `failure`, by its index in the edge's [`Domain::failures`].
    pub failure: usize,
    /// `insurance`: the share of each limit one process admits during an outage (with failure
    /// `"insurance"` only).
    pub insurance: Option<f64>,
    /// `timeoutMs`, `None` when absent (each store has its own default; the Worker's is
    /// [`DEFAULT_TIMEOUT_MS`]).
    pub timeout_ms: Option<u64>,
    /// `statusCode` of a denial (or a WebSocket's close code).
    pub status: u64,
    /// `blockedCache` in ms (`true`: [`BLOCKED_CACHE_MS`], `false`: 0).
    pub blocked_cache_ms: u64,
    /// `maxCachedKeys` (10,000 by default).
    pub max_cached_keys: u64,
    /// `closedRetryMs` (1,000 by default).
    pub closed_retry_ms: u64,
    /// `syncRate` in ms ([`sync_rate_ms`]).
    pub sync_ms: i64,
    /// `ipv6Subnet` ([`parse_ipv6_subnet`]; 128 for `false`).
    pub ipv6_subnet: u64,
    /// The header options.
    pub headers: HeaderSpec,
}

/// Every option of `input` around the limits, as `edge` takes them.
pub fn parse_around<I: Input>(input: &I, edge: Edge) -> Result<Around, SpecError> {
    let d = edge.domain();
    let failure = one_of(input, "failure", d.failures)?.unwrap_or(0);
    Ok(Around {
        failure,
        insurance: insurance(input, d.failures.get(failure) == Some(&"insurance"))?,
        timeout_ms: whole(input, "timeoutMs", 1, d.max_timeout_ms, " of milliseconds")?,
        status: parse_status(input, edge)?,
        blocked_cache_ms: blocked_cache(input)?,
        max_cached_keys: whole(input, "maxCachedKeys", 0, MAX_LIMIT, "")?.unwrap_or(10_000),
        closed_retry_ms: whole(input, "closedRetryMs", 1, MAX_LIMIT, " of milliseconds")?.unwrap_or(1000),
        sync_ms: sync_rate_ms(input)?,
        ipv6_subnet: parse_ipv6_subnet(input)?,
        headers: parse_headers_at(input, edge)?,
    })
}

/// `timeoutMs` at `edge`: whole milliseconds from 1 to its longest, [`DEFAULT_TIMEOUT_MS`] when absent.
pub fn parse_timeout_at<I: Input>(input: &I, edge: Edge) -> Result<u64, SpecError> {
    Ok(whole(input, "timeoutMs", 1, edge.domain().max_timeout_ms, " of milliseconds")?.unwrap_or(DEFAULT_TIMEOUT_MS))
}

/// `statusCode` at `edge`: a whole number in its range (and of its choices, if it has some).
pub fn parse_status<I: Input>(input: &I, edge: Edge) -> Result<u64, SpecError> {
    let Domain { status: (min, max, default), status_only: only, .. } = edge.domain();
    match whole(input, "statusCode", min, max, "")? {
        None => Ok(default),
        Some(s) if only.is_empty() || only.contains(&s) => Ok(s),
        Some(other) => {
            let m = Msg::new("statusCode must be 200 or 429 (the status of a denial), got ").n(other);
            Err(SpecError::new(code::INVALID_VALUE, "statusCode", m))
        }
    }
}

/// `insurance`: more than 0 and at most 1; required by failure `"insurance"` (`insured`), refused
/// without it.
fn insurance<I: Input>(input: &I, insured: bool) -> Result<Option<f64>, SpecError> {
    const FIELD: &str = "insurance";
    match input.get(FIELD) {
        Value::Missing if insured => {
            let m = "insurance is required with failure \"insurance\": the share of each limit one process admits during an outage (e.g. 1 / processes)";
            Err(SpecError::new(code::MISSING_FIELD, FIELD, Msg::new(m)))
        }
        Value::Missing => Ok(None),
        _ if !insured => {
            let failure = match input.get("failure") {
                Value::Text(s) => Msg::new("").q(&s).0,
                _ => "\"open\"".into(),
            };
            let m = Msg::new("insurance applies with failure \"insurance\" only, not ").s(&failure);
            Err(SpecError::new(code::CONFLICTING_FIELDS, FIELD, m))
        }
        Value::Number(n) if n > 0.0 && n <= 1.0 => Ok(Some(n)),
        Value::Number(n) => {
            let m = Msg::new("insurance must be more than 0 and at most 1, got ").s(&input.show_number(n));
            Err(SpecError::new(code::OUT_OF_RANGE, FIELD, m))
        }
        other => Err(wrong_type(
            input,
            FIELD,
            &other,
            "a number, the share of each limit one process admits during an outage (e.g. 1 / processes)",
        )),
    }
}

/// `blockedCache`: true ([`BLOCKED_CACHE_MS`], the default), false (0), or a duration from 0 ms.
fn blocked_cache<I: Input>(input: &I) -> Result<u64, SpecError> {
    const FIELD: &str = "blockedCache";
    match input.get(FIELD) {
        Value::Missing | Value::Bool(true) => Ok(BLOCKED_CACHE_MS),
        Value::Bool(false) => Ok(0),
        Value::Number(n) => whole_number(input, FIELD, n, 0, MAX_LIMIT, " of milliseconds"),
        Value::Text(_) => Ok(duration(input, FIELD, 1)?.map_or(0, |d| d.as_millis_ceil())),
        other => {
            Err(wrong_type(input, FIELD, &other, "true, false, a number of milliseconds or a duration such as \"1s\""))
        }
    }
}

fn signed(m: Msg, n: i64) -> Msg {
    if n < 0 { m.s("-") } else { m }.n(n.unsigned_abs())
}

/// `syncRate` alone: whole milliseconds from -[`MAX_SYNC_MS`] to [`MAX_SYNC_MS`] (0 every hit
/// decided by the key's store, > 0 periodic, < 0 local only) or a duration; 0 when absent. What
/// it asks of the policy is [`super::parse_sync_rate`]'s, once the policy is known.
pub fn sync_rate_ms<I: Input>(input: &I) -> Result<i64, SpecError> {
    const FIELD: &str = "syncRate";
    Ok(match input.get(FIELD) {
        Value::Missing => 0,
        // Whole and in range (NaN is neither); `as` alone would round and saturate.
        Value::Number(n) if n.abs() <= MAX_SYNC_MS as f64 && n == (n as i64) as f64 => n as i64,
        Value::Number(n) => {
            let m = signed(Msg::new("syncRate must be a whole number of milliseconds from "), -MAX_SYNC_MS);
            let m = m.s(" to ").n(MAX_SYNC_MS as u64).s(", got ").s(&input.show_number(n));
            return Err(SpecError::new(code::OUT_OF_RANGE, FIELD, m));
        }
        Value::Text(written) => {
            // A duration is an interval: longer than zero (local only is a negative number).
            let d = duration(input, FIELD, 1)?.unwrap_or(Nanos::ZERO);
            if d > Nanos::from_millis(MAX_SYNC_MS as u64) {
                let m = Msg::new(FIELD).s(" ").q(&written).s(super::words::LONGER);
                return Err(SpecError::new(code::OUT_OF_RANGE, FIELD, m.n(MAX_SYNC_MS as u64).s(" ms")));
            }
            d.as_millis_ceil() as i64
        }
        other => return Err(wrong_type(input, FIELD, &other, "a number of milliseconds or a duration such as \"100ms\"")),
    })
}

/// `syncRate = <ms>` as the policy errors say it.
pub(super) fn sync_shown(m: Msg, ms: i64) -> Msg {
    signed(m.s("syncRate = "), ms)
}

/// `ipv6Subnet`: the prefix length IPv6 clients are keyed by, a whole number from 1 to 128, or
/// false (whole addresses, 128); [`DEFAULT_IPV6_SUBNET`] when absent.
pub fn parse_ipv6_subnet<I: Input>(input: &I) -> Result<u64, SpecError> {
    const FIELD: &str = "ipv6Subnet";
    const EXPECTED: &str = "a whole number from 1 to 128, or false";
    match input.get(FIELD) {
        Value::Missing => Ok(DEFAULT_IPV6_SUBNET),
        Value::Bool(false) => Ok(128),
        Value::Number(n) if n.is_finite() && n >= 1.0 && n <= 128.0 && n == (n as u64) as f64 => Ok(n as u64),
        v @ Value::Number(_) => Err(SpecError { code: code::OUT_OF_RANGE, ..wrong_type(input, FIELD, &v, EXPECTED) }),
        other => Err(wrong_type(input, FIELD, &other, EXPECTED)),
    }
}

/// The header options at `edge`: `standardHeaders`, `legacyHeaders`, `partitionKey` and `jitter`,
/// each at its default when absent.
pub fn parse_headers_at<I: Input>(input: &I, edge: Edge) -> Result<HeaderSpec, SpecError> {
    Ok(HeaderSpec {
        standard: standard_headers(input)?,
        legacy: flag(input, "legacyHeaders", true, "true or false")?,
        partition_key: flag(input, "partitionKey", false, "true or false")?,
        jitter: flag(input, "jitter", false, edge.domain().jitter)?,
    })
}

/// `standardHeaders` as the npm middleware reads it: "draft-10" when absent, `true` is
/// "draft-6" (express-rate-limit v8), `false` none.
fn standard_headers<I: Input>(input: &I) -> Result<Option<Standard>, SpecError> {
    const FIELD: &str = "standardHeaders";
    let names: Vec<_> = Standard::ALL.iter().map(|s| Msg::new("").q(s.name()).0).collect();
    let expected = Msg::new("").s(&names.join(", ")).s(", true or false").0;
    match input.get(FIELD) {
        Value::Missing => Ok(Some(Standard::Draft10)),
        Value::Bool(b) => Ok(b.then_some(Standard::Draft6)),
        Value::Text(s) => Standard::parse(&s).map(Some).ok_or_else(|| {
            let m = Msg::new(FIELD).s(" must be ").s(&expected).s(", got ").q(&s);
            SpecError::new(code::INVALID_VALUE, FIELD, m)
        }),
        other => Err(wrong_type(input, FIELD, &other, &expected)),
    }
}

/// A boolean option, `default` when absent.
pub(super) fn flag<I: Input>(input: &I, field: &str, default: bool, expected: &str) -> Result<bool, SpecError> {
    match input.get(field) {
        Value::Missing => Ok(default),
        Value::Bool(b) => Ok(b),
        other => Err(wrong_type(input, field, &other, expected)),
    }
}
