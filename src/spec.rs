//! One spec: the schema of a limit, of a policy's limits and of a capacity pool
//! ([`parse_pool`]), parsed and validated once for every edge.
//!
//! The npm options (through the wasm module), the Worker's `wrangler.toml` policies and its
//! HTTP bodies all describe limits as data. Each edge implements [`Input`] over its own values
//! (a JS object, a `serde_json::Value`) and calls [`parse_policy`]; so every option exists
//! at every edge, spelt the same way, and the same mistake gets the same [`SpecError`]: one
//! `code` (lowercase snake_case, listed in [`CODES`]), the path of the field
//! (`limits[1].window`), and a message in the units the user wrote (`"300ms"` as written, or
//! `300 ms` for a number), never nanoseconds.
//!
//! ```
//! use tollgate::spec::{parse_policy, Input, Value};
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
//! let ok = Obj(vec![("algorithm", Value::Text("gcra".into())), ("quota", Value::Text("100/s".into()))]);
//! assert_eq!(parse_policy(&ok, &[]).unwrap().policy.limits()[0].name(), "default");
//! let bad = Obj(vec![("algorithm", Value::Text("sliding-buckets".into())), ("limit", Value::Number(10.0)),
//!                    ("window", Value::Text("1s".into())), ("precision", Value::Text("300ms".into()))]);
//! let e = parse_policy(&bad, &[]).unwrap_err();
//! assert_eq!((e.code, e.field.as_str()), ("out_of_range", "precision"));
//! assert_eq!(e.message, "precision 300ms must divide the window 1s exactly");
//! ```

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::algorithms::{AnyAlgorithm, Kind, LimitSpec};
use crate::calendar::{longest_days, Months, DAY_NS, MAX_MONTHS, MAX_MONTH_OFFSET_NS};
use crate::error::ConfigError;
use crate::policy::{Limit, Policy, MAX_LIMITS};
use crate::quota::{calendar_months, parse_duration_unchecked, MAX_LIMIT, MAX_WINDOW};
use crate::text::{push_u64, Msg};
use crate::time::Nanos;

mod around;
#[cfg(feature = "concurrency")]
mod concurrency;
mod pool;
#[cfg(feature = "concurrency")]
mod queue;
mod serving;
pub mod typed;
pub mod worker_vars;
pub use around::{
    parse_around, parse_headers_at, parse_ipv6_subnet, parse_status, parse_timeout_at, sync_rate_ms, Around, Domain, Edge,
    BLOCKED_CACHE_MS, DEFAULT_IPV6_SUBNET, MAX_TIMER_MS, STORE_FAILURES, STORE_FIELDS,
};
#[cfg(feature = "concurrency")]
pub use concurrency::{CONCURRENCY, DEFAULT_LEASE_TTL, LEASE_TTL_FIELD};
pub use pool::{parse_pool, PoolSpec, POOL_FIELDS};
#[cfg(feature = "concurrency")]
pub use queue::{parse_queue, QueueSpec, DEFAULT_MAX_QUEUE, MAX_WAIT, QUEUE_FIELDS};
pub use serving::{
    check_sync_rate, describe_limit, parse_controls, parse_headers, parse_lease_ttl, parse_serving, parse_shadow, parse_sync_rate,
    parse_timeout, ControlSpec, FailMode, HeaderSpec, Serving, Shown, CONTROL_FIELDS, DEFAULT_TIMEOUT_MS,
    HEADER_FIELDS, LEASE_FIELD, MAX_SYNC_MS, MAX_TIMEOUT_MS, SERVING_FIELDS,
};

/// Error codes of configuration mistakes, lowercase snake_case at every edge.
pub mod code {
    /// A value of the wrong kind (a string where a number goes). JS: `TypeError`.
    pub const INVALID_TYPE: &str = "invalid_type";
    /// A required field is absent.
    pub const MISSING_FIELD: &str = "missing_field";
    /// A field the schema does not have (a typo would otherwise be silently ignored).
    pub const UNKNOWN_FIELD: &str = "unknown_field";
    /// A name (of a field or a value) that is spelt differently here; the message says how.
    pub const RENAMED: &str = "renamed";
    /// Fields that cannot be given together (`quota` with `limit`).
    pub const CONFLICTING_FIELDS: &str = "conflicting_fields";
    /// A string that is not one of the allowed values, or does not parse.
    pub const INVALID_VALUE: &str = "invalid_value";
    /// A number or duration outside its range (including fractions). JS: `RangeError`.
    pub const OUT_OF_RANGE: &str = "out_of_range";
    /// An option the chosen algorithm does not take (`burst` on a fixed window).
    pub const UNSUPPORTED_OPTION: &str = "unsupported_option";
    /// Two limits of one policy with the same name.
    pub const DUPLICATE_NAME: &str = "duplicate_name";
}

/// The words of the spec's messages, which the npm layer's own checks word theirs with (the
/// contract's `WORDS`), so a mistake reads the same wherever it is caught.
pub mod words {
    /// `<field> must be <expected>, got <value>`.
    pub const MUST_BE: &str = " must be ";
    /// Before the value a message shows.
    pub const GOT: &str = ", got ";
    /// `<field> must be a whole number<what> from <min> to <max>, got <value>`.
    pub const WHOLE: &str = " must be a whole number";
    /// Between a range's ends.
    pub const FROM: &str = " from ";
    /// Between a range's ends.
    pub const TO: &str = " to ";
    /// Before a list of the strings a field takes.
    pub const ONE_OF: &str = "one of ";
    /// `<field> <value> is longer than the maximum <max> ms`.
    pub const LONGER: &str = " is longer than the maximum ";
    /// `<field> is not an option (the options are <names>)`.
    pub const NOT_AN_OPTION: &str = " is not an option (the options are ";
    /// `<field> is not an option here; write <instead>`.
    pub const WRITE_INSTEAD: &str = " is not an option here; write ";
}

/// Every code a [`SpecError`] can carry (docs/vocabulary.md lists them).
pub const CODES: [&str; 9] = [
    code::INVALID_TYPE,
    code::MISSING_FIELD,
    code::UNKNOWN_FIELD,
    code::RENAMED,
    code::CONFLICTING_FIELDS,
    code::INVALID_VALUE,
    code::OUT_OF_RANGE,
    code::UNSUPPORTED_OPTION,
    code::DUPLICATE_NAME,
];

/// The fields of one limit, at every edge.
pub const LIMIT_FIELDS: [&str; 10] = typed::names(&typed::LIMIT);

/// A policy's own options beside its limits, at every edge: the penalty (crate::penalty) and
/// its escalations.
pub const POLICY_OPTIONS: [&str; 4] = typed::names(&typed::PENALTY);

/// The longest block an `exponentialBackoff` penalty doubles to when `maxBlockDuration` is not
/// given (or the block duration, when that is longer): one day.
pub const DEFAULT_MAX_BLOCK_DURATION: Nanos = Nanos::from_secs(86_400);

/// The algorithms by the one name every edge's configuration uses: [`Kind::name`] of each of
/// [`KINDS`]. First-hit fixed windows are `fixed-window` with `align: "first-hit"` (the npm
/// package's spelling, which its users and the equivalence fixture already write).
pub const ALGORITHMS: [&str; 6] =
    [KINDS[0].name(), KINDS[1].name(), KINDS[2].name(), KINDS[3].name(), KINDS[4].name(), KINDS[5].name()];

/// The core algorithm of each name of [`ALGORITHMS`].
pub const KINDS: [Kind; 6] =
    [Kind::FixedWindow, Kind::SlidingLog, Kind::SlidingWindow, Kind::SlidingBuckets, Kind::TokenBucket, Kind::Gcra];

/// The values of `align` (fixed windows only): on the clock (the default) or from each key's
/// first hit.
pub const ALIGNS: [&str; 2] = ["clock", "first-hit"];

/// Names spelt differently here, and what to write instead: refused with [`code::RENAMED`]
/// rather than accepted as a second name, so each thing has one name everywhere.
pub const RENAMED: [(&str, &str); 6] = [
    ("fixed-window-first-hit", "algorithm \"fixed-window\" with align \"first-hit\""),
    ("moving-window", "algorithm \"sliding-log\""),
    ("sliding-window-counter", "algorithm \"sliding-window\""),
    ("leaky-bucket", "algorithm \"gcra\""),
    ("onError", "failure (\"open\" or \"closed\")"),
    ("sync", "syncRate (milliseconds: 0 every hit, > 0 periodic, < 0 local only)"),
];

/// The configuration name of an algorithm, and its `align` when it is not the default.
pub fn config_name(kind: Kind) -> (&'static str, Option<&'static str>) {
    match kind {
        Kind::FixedWindowFirstHit => ("fixed-window", Some("first-hit")),
        #[cfg(feature = "concurrency")]
        Kind::Concurrency => (CONCURRENCY, None),
        other => (KINDS.iter().position(|k| *k == other).map_or("", |i| ALGORITHMS[i]), None),
    }
}

/// A value as an edge holds it.
pub enum Value<I> {
    /// The field is absent (JS `undefined`).
    Missing,
    /// `null`.
    Null,
    /// A string.
    Text(String),
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// An array.
    List(Vec<Value<I>>),
    /// An object (a map of fields).
    Object(I),
    /// Anything else (a function, a symbol).
    Other,
}

/// An object of fields, as an edge holds it: a JS object, a JSON object. (Generic rather than
/// `dyn`: a trait object would give the wasm modules a function table.)
pub trait Input: Sized {
    /// The field `name` of this object.
    fn get(&self, name: &str) -> Value<Self>;
    /// The names of the fields present, for refusing unknown ones.
    fn field_names(&self) -> Vec<String>;
    /// A number as this edge's users write it (JavaScript: `1e+300`), for messages.
    fn show_number(&self, n: f64) -> String {
        show_number(n)
    }
}

/// A configuration mistake: which rule (`code`), where (`field`, e.g. `limits[1].window`),
/// and a message for people that starts with the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// One of [`CODES`].
    pub code: &'static str,
    /// The path of the field, as the user wrote it (`limits[1].window`); empty for the whole.
    pub field: String,
    /// What is wrong, in the units the user wrote.
    pub message: String,
}

impl SpecError {
    /// An error of `code` at `field`.
    pub fn new(code: &'static str, field: &str, message: Msg) -> SpecError {
        SpecError { code, field: field.to_string(), message: message.0 }
    }
}

impl SpecError {
    /// The error as a line for people: the field's path first (`limits[0].burst: ...`),
    /// unless the message already starts with it.
    pub fn located(&self) -> String {
        if self.field.is_empty() || self.message.starts_with(self.field.as_str()) {
            self.message.clone()
        } else {
            Msg::new(&self.field).s(": ").s(&self.message).0
        }
    }
}

impl core::fmt::Display for SpecError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for SpecError {}

/// A parsed policy: the core's `Policy` and the limits it was made of, as described.
#[derive(Clone, Debug)]
pub struct PolicySpec {
    /// The policy, ready to decide.
    pub policy: Policy,
    /// Each limit's validated description, in order.
    pub limits: Vec<LimitSpec>,
}

/// A number as JavaScript would print the common cases (whole numbers, NaN, infinities);
/// fractions as their whole part and up to six decimals. Edges with `core::fmt` at hand
/// override [`Input::show_number`].
pub fn show_number(n: f64) -> String {
    let mut out = String::new();
    if n.is_nan() {
        return "NaN".into();
    }
    if n < 0.0 {
        out.push('-');
    }
    let a = if n < 0.0 { -n } else { n };
    if a.is_infinite() {
        out.push_str("Infinity");
    } else if a >= 1.8e19 {
        out.push_str("a number above 2^64");
    } else {
        let whole = a as u64;
        push_u64(&mut out, whole);
        let mut frac = a - whole as f64;
        if frac > 0.0 {
            out.push('.');
            for _ in 0..6 {
                frac *= 10.0;
                let d = frac as u8;
                out.push((b'0' + d) as char);
                frac -= d as f64;
                if frac <= 0.0 {
                    break;
                }
            }
        }
    }
    out
}

/// How the user wrote a duration: a number of milliseconds, or a duration string.
#[derive(Clone, Debug)]
enum Written {
    Ms(u64),
    Text(String),
}

impl Written {
    fn put(&self, m: Msg) -> Msg {
        match self {
            Written::Ms(n) => m.n(*n).s(" ms"),
            Written::Text(t) => m.s(t.trim()),
        }
    }
}

fn show_kind<I: Input>(input: &I, v: &Value<I>) -> String {
    match v {
        Value::Missing => "undefined".into(),
        Value::Null => "null".into(),
        Value::Text(s) => Msg::new("").q(s).0,
        Value::Number(n) => input.show_number(*n),
        Value::Bool(true) => "true".into(),
        Value::Bool(false) => "false".into(),
        Value::List(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        Value::Other => "a value of another type".into(),
    }
}

/// `<field> must be <expected>, got <value>`: a value of the wrong kind.
pub fn wrong_type<I: Input>(input: &I, field: &str, v: &Value<I>, expected: &str) -> SpecError {
    SpecError::new(
        code::INVALID_TYPE,
        field,
        Msg::new(field).s(words::MUST_BE).s(expected).s(words::GOT).s(&show_kind(input, v)),
    )
}

/// A whole number from `min` to `max` (`what` follows "a whole number", e.g. " of
/// milliseconds"); `None` when absent.
pub fn whole<I: Input>(input: &I, field: &str, min: u64, max: u64, what: &str) -> Result<Option<u64>, SpecError> {
    match input.get(leaf(field)) {
        Value::Missing => Ok(None),
        Value::Number(n) => whole_number(input, field, n, min, max, what).map(Some),
        other => Err(wrong_type(input, field, &other, "a number")),
    }
}

/// `n` as a whole number from `min` to `max`, or an `out_of_range` error naming the range.
pub fn whole_number<I: Input>(
    input: &I,
    field: &str,
    n: f64,
    min: u64,
    max: u64,
    what: &str,
) -> Result<u64, SpecError> {
    let ok = n.is_finite() && n >= min as f64 && n <= max as f64 && (n as u64) as f64 == n;
    if ok {
        return Ok(n as u64);
    }
    Err(SpecError::new(
        code::OUT_OF_RANGE,
        field,
        Msg::new(field)
            .s(words::WHOLE)
            .s(what)
            .s(words::FROM)
            .n(min)
            .s(words::TO)
            .n(max)
            .s(words::GOT)
            .s(&input.show_number(n)),
    ))
}

/// The index in `allowed` of the string at `field`; `None` when absent. A value of
/// [`RENAMED`] is refused with what to write instead.
pub fn one_of<I: Input>(input: &I, field: &str, allowed: &[&'static str]) -> Result<Option<usize>, SpecError> {
    let v = input.get(leaf(field));
    let mut code = code::INVALID_TYPE;
    match &v {
        Value::Missing => return Ok(None),
        Value::Text(s) => {
            if let Some(i) = allowed.iter().position(|a| *a == s.as_str()) {
                return Ok(Some(i));
            }
            if let Some((_, instead)) = RENAMED.iter().find(|(old, _)| *old == s.as_str()) {
                let m = Msg::new(field).s(" ").q(s).s(" is not a name here; write ").s(instead);
                return Err(SpecError::new(code::RENAMED, field, m));
            }
            code = code::INVALID_VALUE;
        }
        _ => {}
    }
    let expected = Msg::new(words::ONE_OF).0 + &join(allowed, true);
    Err(SpecError { code, ..wrong_type(input, field, &v, &expected) })
}

/// `list` joined by ", ", each in quotes when `quoted`.
fn join(list: &[&str], quoted: bool) -> String {
    let mut m = Msg::new("");
    for (i, a) in list.iter().enumerate() {
        if i > 0 {
            m = m.s(", ");
        }
        m = if quoted { m.q(a) } else { m.s(a) };
    }
    m.0
}

/// A duration: a number of milliseconds or a string such as `"250ms"`, `"15m"`; `None` when
/// absent. `min_ms` is 0 for offsets, 1 otherwise; at most [`MAX_WINDOW`].
pub fn duration<I: Input>(input: &I, field: &str, min_ms: u64) -> Result<Option<Nanos>, SpecError> {
    Ok(duration_written(input, field, min_ms)?.map(|(n, _)| n))
}

fn duration_written<I: Input>(input: &I, field: &str, min_ms: u64) -> Result<Option<(Nanos, Written)>, SpecError> {
    Ok(duration_signed(input, field, min_ms, false)?.map(|(n, _, w)| (n, w)))
}

/// A duration as [`duration_written`]; when `signed`, also a negative one (`"-2h"`,
/// `-7200000`), as (magnitude, negative, as written).
fn duration_signed<I: Input>(
    input: &I,
    field: &str,
    min_ms: u64,
    signed: bool,
) -> Result<Option<(Nanos, bool, Written)>, SpecError> {
    let max_ms = MAX_WINDOW.as_millis_floor();
    let too_long = |w: &Written| {
        let m = match w {
            Written::Ms(n) => Msg::new(field).s(" of ").n(*n).s(" ms is longer than the maximum ").n(max_ms).s(" ms"),
            Written::Text(t) => Msg::new(field).s(" ").q(t).s(" is longer than the maximum 366 days"),
        };
        SpecError::new(code::OUT_OF_RANGE, field, m)
    };
    match input.get(leaf(field)) {
        Value::Missing => Ok(None),
        Value::Number(n) => {
            let negative = signed && n < 0.0;
            let ms = whole_number(input, field, if negative { -n } else { n }, min_ms, MAX_LIMIT, " of milliseconds")?;
            let w = if negative { Written::Text(Msg::new("-").n(ms).s(" ms").0) } else { Written::Ms(ms) };
            if ms > max_ms {
                return Err(too_long(&w));
            }
            Ok(Some((Nanos::from_millis(ms), negative, w)))
        }
        Value::Text(s) => {
            let w = Written::Text(s.clone());
            let negative = signed && s.as_bytes().first() == Some(&b'-');
            let n = parse_duration_unchecked(s.get(usize::from(negative)..).unwrap_or("")).map_err(|e| match e {
                ConfigError::InvalidQuota { reason, .. } => SpecError::new(
                    code::INVALID_VALUE,
                    field,
                    Msg::new(field).s(" ").q(&s).s(" is not a duration: ").s(reason),
                ),
                _ => too_long(&w),
            })?;
            if n > MAX_WINDOW {
                return Err(too_long(&w));
            }
            if min_ms > 0 && n == Nanos::ZERO {
                let m = Msg::new(field).s(" ").q(&s).s(" must be longer than zero");
                return Err(SpecError::new(code::OUT_OF_RANGE, field, m));
            }
            Ok(Some((n, negative, w)))
        }
        other => Err(wrong_type(input, field, &other, "a duration such as \"1s\" or a number of milliseconds")),
    }
}

/// The last segment of a field path: what the object holding it calls it.
fn leaf(path: &str) -> &str {
    // A byte scan, not `rsplit`: the fields are ASCII, and `rsplit` links a reverse searcher.
    match path.bytes().rposition(|b| b == b'.') {
        Some(dot) => path.get(dot + 1..).unwrap_or(path),
        None => path,
    }
}

/// Refuses fields of `input` outside `allowed` (a misspelt `brust` would otherwise be
/// ignored, and the limiter would admit other than what its user wrote). `at` is the path of
/// `input` (`limits[1]`), empty at the top.
pub fn known_fields<I: Input>(input: &I, allowed: &[&[&str]], at: &str) -> Result<(), SpecError> {
    for name in input.field_names() {
        if allowed.iter().any(|list| list.contains(&name.as_str())) {
            continue;
        }
        let field = path(at, &name);
        if let Some((_, instead)) = RENAMED.iter().find(|(old, _)| *old == name) {
            let m = Msg::new(&field).s(words::WRITE_INSTEAD).s(instead);
            return Err(SpecError::new(code::RENAMED, &field, m));
        }
        let all: Vec<&str> = allowed.iter().flat_map(|l| l.iter().copied()).collect();
        let m = Msg::new(&field).s(words::NOT_AN_OPTION).s(&join(&all, false)).s(")");
        return Err(SpecError::new(code::UNKNOWN_FIELD, &field, m));
    }
    Ok(())
}

fn path(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        Msg::new(at).s(".").s(name).0
    }
}

/// A policy of one limit at the top and no penalty: [`parse_policy`] without the code for a
/// list of limits or a penalty, for an edge that decides by one limit only (the npm package's
/// lite module, which refuses `limits` and the penalty's options itself before calling this,
/// and so carries neither parser). Here those fields are unknown fields.
pub fn parse_one_limit<I: Input>(input: &I, policy_fields: &[&str]) -> Result<PolicySpec, SpecError> {
    #[cfg(feature = "concurrency")]
    known_fields(input, &[&LIMIT_FIELDS, policy_fields, own_fields(input)], "")?;
    #[cfg(not(feature = "concurrency"))]
    known_fields(input, &[&LIMIT_FIELDS, policy_fields], "")?;
    let (_, spec, limit) = parse_limit(input, "", "default")?;
    let policy = Policy::new(alloc::vec![limit])
        .map_err(|_| SpecError::new(code::INVALID_VALUE, "limits", Msg::new("invalid limits")))?;
    Ok(PolicySpec { policy, limits: alloc::vec![spec] })
}

/// Parses a policy: one limit's fields at the top (`{ algorithm, quota }`), or `limits`, a
/// list of them. `policy_fields` are the edge's own fields beside the limits (the npm
/// limiter's `maxKeys`, the Worker's `syncRate`): accepted here, parsed by the edge.
pub fn parse_policy<I: Input>(input: &I, policy_fields: &[&str]) -> Result<PolicySpec, SpecError> {
    let limits_field: &[&str] = &["limits"];
    let penalty = penalty(input)?;
    let items = match input.get("limits") {
        Value::Missing => {
            #[cfg(feature = "concurrency")]
            known_fields(input, &[&LIMIT_FIELDS, limits_field, &POLICY_OPTIONS, policy_fields, own_fields(input)], "")?;
            #[cfg(not(feature = "concurrency"))]
            known_fields(input, &[&LIMIT_FIELDS, limits_field, &POLICY_OPTIONS, policy_fields], "")?;
            let (name, spec, limit) = parse_limit(input, "", "default")?;
            let _ = name;
            return finish(alloc::vec![limit], alloc::vec![spec], penalty);
        }
        Value::List(items) => items,
        other => return Err(wrong_type(input, "limits", &other, "a non-empty array of limits")),
    };
    if !matches!(input.get("algorithm"), Value::Missing) {
        let m = Msg::new("give either algorithm (one limit) or limits (several), not both");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, "algorithm", m));
    }
    if let Some(beside) = input.field_names().into_iter().find(|f| LIMIT_FIELDS.contains(&f.as_str())) {
        let m = Msg::new(&beside).s(" goes in each of limits, not beside them");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, &beside, m));
    }
    known_fields(input, &[limits_field, &POLICY_OPTIONS, policy_fields], "")?;
    if items.is_empty() || items.len() > MAX_LIMITS {
        let m = Msg::new("limits must hold 1 to ").n(MAX_LIMITS as u64).s(" limits, got ").n(items.len() as u64);
        return Err(SpecError::new(code::OUT_OF_RANGE, "limits", m));
    }
    let mut limits = Vec::with_capacity(items.len());
    let mut specs = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = Msg::new("limits[").n(i as u64).s("]").0;
        let Value::Object(obj) = item else {
            return Err(wrong_type(input, &at, &item, "an object"));
        };
        #[cfg(feature = "concurrency")]
        known_fields(&obj, &[&LIMIT_FIELDS, own_fields(&obj)], &at)?;
        #[cfg(not(feature = "concurrency"))]
        known_fields(&obj, &[&LIMIT_FIELDS], &at)?;
        let default = Msg::new("limit-").n(i as u64).0;
        let (name, spec, limit) = parse_limit(&obj, &at, &default)?;
        if limits.iter().any(|l: &Limit| l.name() == name) {
            let field = path(&at, "name");
            let m = Msg::new(&field).s(" ").q(&name).s(" is the name of an earlier limit; names must differ");
            return Err(SpecError::new(code::DUPLICATE_NAME, &field, m));
        }
        limits.push(limit);
        specs.push(spec);
    }
    finish(limits, specs, penalty)
}

/// The fields a limit object takes beyond [`LIMIT_FIELDS`]: a concurrency limit's `leaseTtl`.
#[cfg(feature = "concurrency")]
fn own_fields<I: Input>(o: &I) -> &'static [&'static str] {
    if concurrency::is_concurrency(o) {
        return &[LEASE_FIELD];
    }
    &[]
}

/// A policy's penalty as its options give it (crate::penalty): the block duration (zero for
/// none) and its escalation.
struct Penalty {
    block: Option<Nanos>,
    escalation: crate::penalty::Escalation,
}

/// Reads `blockDuration`, `continueExceeding`, `exponentialBackoff` and `maxBlockDuration`.
fn penalty<I: Input>(input: &I) -> Result<Penalty, SpecError> {
    use crate::penalty::Escalation;
    let block = duration(input, "blockDuration", 0)?.filter(|d| *d > Nanos::ZERO);
    let renew = flag(input, "continueExceeding")?;
    let double = flag(input, "exponentialBackoff")?;
    if renew && double {
        let m = Msg::new("give continueExceeding or exponentialBackoff, not both");
        return Err(SpecError::new(code::CONFLICTING_FIELDS, "exponentialBackoff", m));
    }
    let cap = duration(input, "maxBlockDuration", 1)?;
    if cap.is_some() && !double {
        let m = Msg::new("maxBlockDuration needs exponentialBackoff: true");
        return Err(SpecError::new(code::UNSUPPORTED_OPTION, "maxBlockDuration", m));
    }
    let escalation = match (renew, double) {
        (true, _) => Escalation::Renew,
        (_, true) => Escalation::Double { cap: cap.unwrap_or(DEFAULT_MAX_BLOCK_DURATION) },
        _ => Escalation::None,
    };
    Ok(Penalty { block, escalation })
}

/// A boolean field, `false` when absent.
fn flag<I: Input>(input: &I, field: &str) -> Result<bool, SpecError> {
    match input.get(field) {
        Value::Missing => Ok(false),
        Value::Bool(b) => Ok(b),
        other => Err(wrong_type(input, field, &other, "true or false")),
    }
}

fn finish(limits: Vec<Limit>, specs: Vec<LimitSpec>, penalty: Penalty) -> Result<PolicySpec, SpecError> {
    use crate::penalty::Escalation;
    // Every rule `Policy::new` checks was checked above with the field named.
    let policy = Policy::new(limits)
        .map_err(|_| SpecError::new(code::INVALID_VALUE, "limits", Msg::new("invalid limits")))?;
    // An escalating penalty without a block duration blocks for the policy's longest window,
    // as the peers' options renew or double "the window".
    let block = match (penalty.block, penalty.escalation) {
        (Some(d), _) => d,
        (None, Escalation::None) => Nanos::ZERO,
        (None, _) => policy.longest_window(),
    };
    let mut policy = policy.with_block_duration(block);
    policy.penalty.escalation = penalty.escalation;
    Ok(PolicySpec { policy, limits: specs })
}

/// One limit at `at` (`limits[1]`, or empty at the top).
fn parse_limit<I: Input>(o: &I, at: &str, default_name: &str) -> Result<(String, LimitSpec, Limit), SpecError> {
    #[cfg(feature = "concurrency")]
    if concurrency::is_concurrency(o) {
        return concurrency::parse_concurrency(o, at, default_name);
    }
    let f = |name: &str| path(at, name);
    let algorithm_field = f("algorithm");
    let Some(i) = one_of(o, &algorithm_field, &ALGORITHMS)? else {
        let m = Msg::new(&algorithm_field).s(" is required: one of ").s(&join(&ALGORITHMS, true));
        return Err(SpecError::new(code::MISSING_FIELD, &algorithm_field, m));
    };
    let mut kind = KINDS[i];
    if let Some(align) = one_of(o, &f("align"), &ALIGNS)? {
        if kind != Kind::FixedWindow {
            return Err(unsupported(&f("align"), kind));
        }
        if align == 1 {
            kind = Kind::FixedWindowFirstHit;
        }
    }
    // The quota: "100/s", or limit and window; either may name calendar months.
    let quota_field = f("quota");
    let mut month_count_given: Option<u32> = None;
    let (limit, window, written, rate_field) = match o.get("quota") {
        Value::Missing => {
            let limit_field = f("limit");
            let limit = match whole(o, &limit_field, 1, MAX_LIMIT, "")? {
                Some(l) => l,
                None => {
                    let m = Msg::new(&limit_field).s(" is required (or give quota, e.g. \"100/s\")");
                    return Err(SpecError::new(code::MISSING_FIELD, &limit_field, m));
                }
            };
            let window_field = f("window");
            let months = match o.get("window") {
                Value::Text(w) => calendar_months(&w).map(|n| (n, w)),
                _ => None,
            };
            if let Some((n, w)) = months {
                month_count_given = Some(month_count(&window_field, &w, n, kind)?);
                (limit, Nanos::new(longest_days(n) * DAY_NS), Written::Text(w), limit_field)
            } else {
                let Some((window, written)) = duration_written(o, &window_field, 1)? else {
                    let m = Msg::new(&window_field).s(" is required with limit (or give quota)");
                    return Err(SpecError::new(code::MISSING_FIELD, &window_field, m));
                };
                (limit, window, written, limit_field)
            }
        }
        Value::Text(q) => {
            if !matches!(o.get("limit"), Value::Missing) || !matches!(o.get("window"), Value::Missing) {
                let m = Msg::new(&quota_field).s(" replaces limit and window; give one or the other");
                return Err(SpecError::new(code::CONFLICTING_FIELDS, &quota_field, m));
            }
            let (count, unit) = q.split_once('/').unwrap_or((&q, ""));
            let unit = unit.trim();
            let months = calendar_months(unit);
            let written = if !unit.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                Msg::new("1").s(unit).0
            } else {
                String::from(unit)
            };
            let (limit, window) = match months {
                Some(n) => {
                    month_count_given = Some(month_count(&quota_field, &q, n, kind)?);
                    // The limit as in any quota (its errors show the quota as written).
                    let (limit, _) = quota_shown(&quota_field, &Msg::new(count).s("/1d").0, &q)?;
                    (limit, Nanos::new(longest_days(n) * DAY_NS))
                }
                None => quota(&quota_field, &q)?,
            };
            (limit, window, Written::Text(written), quota_field)
        }
        other => return Err(wrong_type(o, &quota_field, &other, "a string such as \"100/s\"")),
    };
    let burst = whole(o, &f("burst"), 1, MAX_LIMIT, "")?;
    let refill_amount = whole(o, &f("refillAmount"), 1, MAX_LIMIT, "")?;
    let precision = duration_written(o, &f("precision"), 1)?;
    // Boundaries repeat every window, or every bucket for sliding buckets.
    let period = match (&precision, kind) {
        (Some((p, _)), Kind::SlidingBuckets) => *p,
        _ => window,
    };
    let mut months = None;
    let offset = match (month_count_given, duration_signed(o, &f("offset"), 0, true)?) {
        (Some(count), Some((mag, negative, w))) => {
            if mag.as_nanos() > MAX_MONTH_OFFSET_NS {
                let field = f("offset");
                let m =
                    w.put(Msg::new(&field).s(" ")).s(" must be shorter than 28 days (the shortest month), either way");
                return Err(SpecError::new(code::OUT_OF_RANGE, &field, m));
            }
            let ns = mag.as_nanos() as i64;
            months = Some(Months { count, offset_ns: if negative { -ns } else { ns } });
            None
        }
        (Some(count), None) => {
            months = Some(Months { count, offset_ns: 0 });
            None
        }
        // Before the UTC boundary by `mag` is after it by `period - mag`: one meaning, one
        // encoding. An offset at least the period is left as given, for the range error.
        (None, Some((mag, true, w))) if mag < period && mag > Nanos::ZERO => Some((period - mag, w)),
        (None, Some((mag, _, w))) => Some((mag, w)),
        (None, None) => None,
    };
    let name = match o.get("name") {
        Value::Missing => String::from(default_name),
        Value::Text(s) => s,
        other => return Err(wrong_type(o, &f("name"), &other, "a string")),
    };
    let spec = LimitSpec {
        algorithm: kind,
        limit,
        window,
        burst,
        refill_amount,
        precision: precision.as_ref().map(|p| p.0),
        offset: offset.as_ref().map(|p| p.0),
        months,
    };
    let algorithm = AnyAlgorithm::from_spec(&spec).map_err(|e| {
        let w = |x: &Option<(Nanos, Written)>, m: Msg| match x {
            Some((_, written)) => written.put(m),
            None => m,
        };
        match e {
            ConfigError::UnsupportedOption { option, .. } => unsupported(&f(option), kind),
            ConfigError::PrecisionNotDivisor { precision_ns: 0, .. } => {
                let field = f("precision");
                let m = Msg::new(&field).s(" is required with sliding-buckets (one bucket's length, e.g. \"100ms\")");
                SpecError::new(code::MISSING_FIELD, &field, m)
            }
            ConfigError::PrecisionNotDivisor { .. } => {
                let field = f("precision");
                let m = written.put(w(&precision, Msg::new(&field).s(" ")).s(" must divide the window ")).s(" exactly");
                SpecError::new(code::OUT_OF_RANGE, &field, m)
            }
            ConfigError::TooManyBuckets { buckets, max } => {
                let field = f("precision");
                let m = written.put(w(&precision, Msg::new(&field).s(" ")).s(" splits the window "));
                let m = m.s(" into ").n(buckets).s(" buckets; at most ").n(max).s(" are allowed");
                SpecError::new(code::OUT_OF_RANGE, &field, m)
            }
            ConfigError::OffsetTooLarge { .. } => {
                let field = f("offset");
                let m = written.put(w(&offset, Msg::new(&field).s(" ")).s(" must be shorter than the window "));
                SpecError::new(code::OUT_OF_RANGE, &field, m)
            }
            ConfigError::RateTooHigh { limit, .. } => {
                let m = written
                    .put(Msg::new("rate too high: ").n(limit).s(" hits in "))
                    .s(" is more than one per nanosecond");
                SpecError::new(code::OUT_OF_RANGE, &rate_field, m)
            }
            ConfigError::BadRefillAmount { amount, capacity } => {
                let field = f("refillAmount");
                let m = Msg::new(&field).s(" ").n(amount).s(" must be between 1 and the capacity ").n(capacity);
                SpecError::new(code::OUT_OF_RANGE, &field, m)
            }
            ConfigError::LimitTooLarge { limit, max } => {
                let m = Msg::new(&rate_field).s(": a limit of ").n(limit).s(" is above the maximum ").n(max);
                SpecError::new(code::OUT_OF_RANGE, &rate_field, m.s(" for ").s(config_name(kind).0))
            }
            _ => {
                let field = if refill_amount.is_some() { f("refillAmount") } else { rate_field.clone() };
                let m = Msg::new(&field).s(": the refill interval is out of range");
                SpecError::new(code::OUT_OF_RANGE, &field, m)
            }
        }
    })?;
    let limit = Limit::new(&name, algorithm).map_err(|_| {
        let field = f("name");
        let m = Msg::new(&field).s(" ").q(&name).s(" must be 1 to 64 characters of A-Z a-z 0-9 - _ . :");
        SpecError::new(code::INVALID_VALUE, &field, m)
    })?;
    Ok((name, spec, limit))
}

/// A limit's `name` at `at`, `default_name` when absent (as `parse_limit` reads it).
#[cfg(feature = "concurrency")]
fn limit_name<I: Input>(o: &I, at: &str, default_name: &str) -> Result<String, SpecError> {
    match o.get("name") {
        Value::Missing => Ok(String::from(default_name)),
        Value::Text(s) => Ok(s),
        other => Err(wrong_type(o, &path(at, "name"), &other, "a string")),
    }
}

/// The limit `name` of `algorithm`, its name checked (`Limit::new`'s rule) at `at` (as
/// `parse_limit` checks it).
#[cfg(feature = "concurrency")]
fn named(at: &str, name: &str, algorithm: AnyAlgorithm) -> Result<Limit, SpecError> {
    Limit::new(name, algorithm).map_err(|_| {
        let field = path(at, "name");
        let m = Msg::new(&field).s(" ").q(name).s(" must be 1 to 64 characters of A-Z a-z 0-9 - _ . :");
        SpecError::new(code::INVALID_VALUE, &field, m)
    })
}

/// `n` calendar months at `field` (written `w`): 1 to 12, and only for a fixed window on the
/// clock (a month is not a duration: no other algorithm has a meaning for it).
fn month_count(field: &str, w: &str, n: u32, kind: Kind) -> Result<u32, SpecError> {
    if kind != Kind::FixedWindow {
        let (name, align) = config_name(kind);
        let mut m = Msg::new(field)
            .s(" ")
            .q(w)
            .s(": calendar months are a window of algorithm \"fixed-window\" only, not of ")
            .q(name);
        if let Some(a) = align {
            m = m.s(" with align ").q(a);
        }
        return Err(SpecError::new(code::UNSUPPORTED_OPTION, field, m));
    }
    if n == 0 || n > MAX_MONTHS {
        let m = Msg::new(field)
            .s(" ")
            .q(w)
            .s(": a window of calendar months holds 1 to ")
            .n(MAX_MONTHS as u64)
            .s(" months");
        return Err(SpecError::new(code::OUT_OF_RANGE, field, m));
    }
    Ok(n)
}

fn unsupported(field: &str, kind: Kind) -> SpecError {
    let (name, align) = config_name(kind);
    let mut m = Msg::new("algorithm ").q(name);
    if let Some(a) = align {
        m = m.s(" with align ").q(a);
    }
    SpecError::new(code::UNSUPPORTED_OPTION, field, m.s(" does not take the option ").q(leaf(field)))
}

/// A quota string as (limit, window), its errors naming `field`.
pub fn quota(field: &str, q: &str) -> Result<(u64, Nanos), SpecError> {
    quota_shown(field, q, q)
}

/// [`quota`] of `parse`, its errors showing `shown`.
fn quota_shown(field: &str, parse: &str, shown: &str) -> Result<(u64, Nanos), SpecError> {
    let parsed: Result<crate::Quota, ConfigError> = parse.parse();
    let at = || Msg::new(field).s(" ").q(shown).s(": ");
    match parsed {
        Ok(quota) => Ok((quota.limit(), quota.window())),
        Err(ConfigError::InvalidQuota { reason, .. }) => {
            Err(SpecError::new(code::INVALID_VALUE, field, at().s(reason).s(" (write e.g. \"100/s\" or \"5000/1h\")")))
        }
        Err(ConfigError::ZeroLimit) => {
            Err(SpecError::new(code::OUT_OF_RANGE, field, at().s("the limit must be at least 1")))
        }
        Err(ConfigError::LimitTooLarge { max, .. }) => {
            Err(SpecError::new(code::OUT_OF_RANGE, field, at().s("the limit is above the maximum ").n(max)))
        }
        Err(ConfigError::ZeroWindow) => {
            Err(SpecError::new(code::OUT_OF_RANGE, field, at().s("the window must be longer than zero")))
        }
        Err(_) => {
            Err(SpecError::new(code::OUT_OF_RANGE, field, at().s("the window is longer than the maximum 366 days")))
        }
    }
}

#[cfg(test)]
mod tests;
