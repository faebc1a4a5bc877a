//! The configuration, read from the Worker's vars (wrangler.toml `[vars]`, JSON) once per
//! isolate: named policies, capacity pools (`pool_config`), proxy mode, the test switch and
//! the API token.
//!
//! ```toml
//! [vars.POLICIES.api]
//! limits = [{ name = "per-second", algorithm = "token-bucket", limit = 100, window = "1s", burst = 500 }]
//! [vars.POLICIES.login]
//! limits = [{ name = "per-minute", algorithm = "sliding-window", quota = "5/m" },
//!           { name = "per-hour", algorithm = "sliding-window", quota = "20/h" }]
//! sync = 0          # ms; 0 exact (every hit to the Durable Object), > 0 periodic, < 0 local
//! onError = "open"  # or "closed": what to answer when the Durable Object fails
//! timeoutMs = 1000  # how long to wait for the Durable Object
//! ```
//!
//! Every number and name is validated here, by the core's own constructors, so a bad
//! configuration is a clear `config_error` on every request rather than a surprise later.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};
use tollgate::headers::Standard;
use tollgate::quota::parse_duration;
use tollgate::sync::SyncRate;
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Nanos, Policy, Quota};

use crate::pool_config::PoolConfig;

/// The most milliseconds a policy may wait for its Durable Object.
pub const MAX_TIMEOUT_MS: u64 = 30_000;
/// Default wait for the Durable Object.
pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;
/// The longest sync interval (one hour): longer is almost certainly a unit mistake.
pub const MAX_SYNC_MS: i64 = 3_600_000;

/// What to answer when the Durable Object errors or does not answer in time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FailMode {
    /// Allow the hit (and mark the answer degraded).
    Open,
    /// Deny the hit (and mark the answer degraded).
    Closed,
}

impl FailMode {
    /// The name used in the config and the degraded header.
    pub fn name(self) -> &'static str {
        match self {
            FailMode::Open => "open",
            FailMode::Closed => "closed",
        }
    }
}

/// One named policy, validated.
#[derive(Clone, Debug)]
pub struct PolicyConfig {
    /// The policy's name (what a request names).
    pub name: String,
    /// The limits, built by the core.
    pub policy: Policy,
    /// The sync interval as configured (ms; 0 exact, > 0 periodic, < 0 local only).
    pub sync_ms: i64,
    /// Fail open or closed.
    pub on_error: FailMode,
    /// How long to wait for the Durable Object.
    pub timeout_ms: u64,
    /// The normalised description `GET /v1/policies` shows.
    pub description: Value,
    /// Which rate-limit headers its answers carry (`standardHeaders`, `legacyHeaders`,
    /// `partitionKey`, `jitter`), the npm middleware's options of the same names.
    pub headers: HeaderConfig,
}

/// A policy's header options (docs/headers.md).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HeaderConfig {
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

/// `standardHeaders` as the npm middleware reads it.
fn standard_headers(v: Option<&Value>) -> Result<Option<Standard>, String> {
    match v {
        None => Ok(Some(Standard::Draft10)),
        Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(Standard::Draft6)),
        Some(Value::String(s)) if Standard::parse(s).is_some() => Ok(Standard::parse(s)),
        Some(other) => Err(format!(
            "standardHeaders must be \"draft-6\", \"draft-7\", \"draft-8\", \"draft-10\", true or false, not {other}"
        )),
    }
}

impl PolicyConfig {
    /// The sync rate in the core's terms.
    pub fn sync_rate(&self) -> SyncRate {
        SyncRate::from_millis(self.sync_ms)
    }
}

/// Proxy mode: other paths are limited and forwarded to `origin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyConfig {
    /// Where allowed requests go (scheme, host, optional port and path prefix).
    pub origin: String,
    /// The policy proxied requests are limited by.
    pub policy: String,
    /// A request header whose value is the key (e.g. `x-api-key`); the client IP otherwise.
    pub key_header: Option<String>,
    /// IPv4 addresses are grouped by this prefix length (32: one key per address).
    pub ipv4_prefix: u8,
    /// IPv6 addresses are grouped by this prefix length (64 by default: one key per subnet a
    /// single customer usually gets).
    pub ipv6_prefix: u8,
}

/// The whole configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Policies by name.
    pub policies: BTreeMap<String, PolicyConfig>,
    /// Capacity pools by name (the `POOLS` var; none when it is not set).
    pub pools: BTreeMap<String, PoolConfig>,
    /// Proxy mode, when `ORIGIN` is set.
    pub proxy: Option<ProxyConfig>,
    /// The test-only switch (`TEST_MODE = "on"`): requests may carry `now` and inject faults.
    pub test_mode: bool,
    /// The bearer token `/v1` requires, when the `API_TOKEN` secret is set.
    pub api_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LimitJson {
    name: String,
    algorithm: String,
    #[serde(default)]
    quota: Option<String>,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default)]
    window: Option<String>,
    #[serde(default)]
    burst: Option<u64>,
    #[serde(default)]
    refill_amount: Option<u64>,
    #[serde(default)]
    precision: Option<String>,
    #[serde(default)]
    offset: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PolicyJson {
    limits: Vec<LimitJson>,
    #[serde(default)]
    sync: i64,
    #[serde(default)]
    on_error: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    standard_headers: Option<Value>,
    #[serde(default)]
    legacy_headers: Option<bool>,
    #[serde(default)]
    partition_key: Option<bool>,
    #[serde(default)]
    jitter: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ProxyJson {
    policy: String,
    #[serde(default)]
    key_header: Option<String>,
    #[serde(default)]
    ipv4_prefix: Option<u8>,
    #[serde(default)]
    ipv6_prefix: Option<u8>,
}

/// Whether `name` is a valid policy name: 1 to 64 of `A-Z a-z 0-9 - _ .`. No `/`, which is
/// what makes `policy/key` an unambiguous Durable Object name.
pub fn valid_policy_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

fn duration(field: &str, s: &str) -> Result<Nanos, String> {
    parse_duration(s).map_err(|e| format!("{field}: {e}"))
}

fn ms(n: Nanos) -> Value {
    // Durations are shown in milliseconds; a sub-millisecond one as a fraction.
    if n.as_nanos() % 1_000_000 == 0 {
        json!(n.as_millis_floor())
    } else {
        json!(n.as_nanos() as f64 / 1e6)
    }
}

fn limit_spec(l: &LimitJson) -> Result<(LimitSpec, Value), String> {
    let algorithm: Kind = l.algorithm.parse().map_err(|e| format!("{e}"))?;
    let (limit, window) = match (&l.quota, l.limit, &l.window) {
        (Some(q), None, None) => {
            let q: Quota = q.parse().map_err(|e| format!("{e}"))?;
            (q.limit(), q.window())
        }
        (None, Some(limit), Some(w)) => (limit, duration("window", w)?),
        _ => return Err("give either quota (e.g. \"100/s\") or both limit and window (e.g. 100 and \"1s\")".into()),
    };
    let spec = LimitSpec {
        algorithm,
        limit,
        window,
        burst: l.burst,
        refill_amount: l.refill_amount,
        precision: l.precision.as_deref().map(|p| duration("precision", p)).transpose()?,
        offset: l.offset.as_deref().map(|o| duration("offset", o)).transpose()?,
    };
    let mut d = json!({ "name": l.name, "algorithm": algorithm.name(), "limit": limit, "windowMs": ms(window) });
    if let Some(b) = spec.burst {
        d["burst"] = json!(b);
    }
    if let Some(r) = spec.refill_amount {
        d["refillAmount"] = json!(r);
    }
    if let Some(p) = spec.precision {
        d["precisionMs"] = ms(p);
    }
    if let Some(o) = spec.offset {
        d["offsetMs"] = ms(o);
    }
    Ok((spec, d))
}

/// Parses one policy.
pub fn parse_policy(name: &str, v: &Value) -> Result<PolicyConfig, String> {
    let p: PolicyJson = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let mut limits = Vec::with_capacity(p.limits.len());
    let mut described = Vec::with_capacity(p.limits.len());
    for (i, l) in p.limits.iter().enumerate() {
        let (spec, d) = limit_spec(l).map_err(|e| format!("limit {i} ({}): {e}", l.name))?;
        let algorithm = AnyAlgorithm::from_spec(&spec).map_err(|e| format!("limit {i} ({}): {e}", l.name))?;
        limits.push(tollgate::Limit::new(&l.name, algorithm).map_err(|e| format!("limit {i}: {e}"))?);
        described.push(d);
    }
    let policy = Policy::new(limits).map_err(|e| e.to_string())?;
    if p.sync != 0 && !policy.is_mergeable() {
        return Err(format!(
            "sync = {} needs every limit to be mergeable (fixed-window, sliding-window or sliding-buckets); \
             use sync = 0 with this policy",
            p.sync
        ));
    }
    if p.sync > MAX_SYNC_MS {
        return Err(format!("sync = {} ms is above the maximum {MAX_SYNC_MS} ms", p.sync));
    }
    let on_error = match p.on_error.as_deref() {
        None | Some("open") => FailMode::Open,
        Some("closed") => FailMode::Closed,
        Some(other) => return Err(format!("onError must be \"open\" or \"closed\", not {other:?}")),
    };
    let timeout_ms = p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
        return Err(format!("timeoutMs must be between 1 and {MAX_TIMEOUT_MS}"));
    }
    let headers = HeaderConfig {
        standard: standard_headers(p.standard_headers.as_ref())?,
        legacy: p.legacy_headers.unwrap_or(true),
        partition_key: p.partition_key.unwrap_or(false),
        jitter: p.jitter.unwrap_or(false),
    };
    let description =
        json!({ "limits": described, "sync": p.sync, "onError": on_error.name(), "timeoutMs": timeout_ms });
    Ok(PolicyConfig { name: name.to_string(), policy, sync_ms: p.sync, on_error, timeout_ms, description, headers })
}

/// Parses the `POLICIES` var: an object of policy name to policy.
pub fn parse_policies(v: &Value) -> Result<BTreeMap<String, PolicyConfig>, String> {
    let obj = v.as_object().ok_or("POLICIES must be an object of policy name to policy")?;
    if obj.is_empty() {
        return Err("POLICIES names no policy".into());
    }
    let mut out = BTreeMap::new();
    for (name, p) in obj {
        if !valid_policy_name(name) {
            return Err(format!("policy name {name:?} must be 1 to 64 characters of A-Z a-z 0-9 - _ ."));
        }
        out.insert(name.clone(), parse_policy(name, p).map_err(|e| format!("policy {name:?}: {e}"))?);
    }
    Ok(out)
}

/// Parses proxy mode from `ORIGIN` (empty: off) and the `PROXY` var.
pub fn parse_proxy(
    origin: Option<&str>,
    proxy: Option<&Value>,
    policies: &BTreeMap<String, PolicyConfig>,
) -> Result<Option<ProxyConfig>, String> {
    let origin = match origin.map(str::trim) {
        None | Some("") => return Ok(None),
        Some(o) => o.trim_end_matches('/').to_string(),
    };
    if !(origin.starts_with("http://") || origin.starts_with("https://")) {
        return Err(format!("ORIGIN must be an http:// or https:// URL, not {origin:?}"));
    }
    let p: ProxyJson = match proxy {
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("PROXY: {e}"))?,
        None => return Err("ORIGIN is set but PROXY (which policy proxied requests use) is not".into()),
    };
    if !policies.contains_key(&p.policy) {
        return Err(format!("PROXY names the unknown policy {:?}", p.policy));
    }
    let ipv4_prefix = p.ipv4_prefix.unwrap_or(32);
    let ipv6_prefix = p.ipv6_prefix.unwrap_or(64);
    if ipv4_prefix == 0 || ipv4_prefix > 32 || ipv6_prefix == 0 || ipv6_prefix > 128 {
        return Err("PROXY: ipv4Prefix must be 1..=32 and ipv6Prefix 1..=128".into());
    }
    let key_header = p.key_header.map(|h| h.trim().to_ascii_lowercase()).filter(|h| !h.is_empty());
    Ok(Some(ProxyConfig { origin, policy: p.policy, key_header, ipv4_prefix, ipv6_prefix }))
}

/// Whether a `TEST_MODE` value turns the test switch on.
pub fn test_mode_on(v: Option<&str>) -> bool {
    matches!(v.map(str::trim), Some("on" | "true" | "1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue_policies() -> Value {
        json!({
            "api": { "limits": [{ "name": "per-second", "algorithm": "token-bucket", "limit": 100, "window": "1s", "burst": 500 }] },
            "login": { "limits": [
                { "name": "per-minute", "algorithm": "sliding-window", "quota": "5/m" },
                { "name": "per-hour", "algorithm": "sliding-window", "quota": "20/h" }
            ], "onError": "closed", "timeoutMs": 250, "sync": 100 }
        })
    }

    #[test]
    fn the_policies_of_the_issue_parse() {
        let p = parse_policies(&issue_policies()).unwrap();
        assert_eq!(p["api"].policy.limits()[0].algorithm().kind(), Kind::TokenBucket);
        assert_eq!(p["api"].description["limits"][0]["burst"], 500);
        assert_eq!(p["login"].policy.limits().len(), 2);
        assert_eq!(p["login"].on_error, FailMode::Closed);
        assert_eq!(p["login"].sync_rate(), SyncRate::Every(Nanos::from_millis(100)));
        assert_eq!(p["login"].description["limits"][1]["windowMs"], 3_600_000);
    }

    #[test]
    fn bad_configurations_say_what_is_wrong() {
        let cases = [
            (json!({ "x": { "limits": [] } }), "at least one limit"),
            (json!({ "x": { "limits": [{ "name": "a", "algorithm": "nope", "quota": "1/s" }] } }), "unknown algorithm"),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "sync": 100 } }),
                "mergeable",
            ),
            (json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "limit": 1 }] } }), "either quota"),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "fixed-window", "quota": "1/s", "burst": 3 }] } }),
                "burst",
            ),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "onError": "maybe" } }),
                "onError",
            ),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "typo": 1 } }),
                "unknown field",
            ),
            (json!({ "a/b": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }] } }), "policy name"),
            (json!({}), "no policy"),
        ];
        for (v, want) in cases {
            let err = parse_policies(&v).unwrap_err();
            assert!(err.contains(want), "{err:?} should mention {want:?}");
        }
    }

    #[test]
    fn proxy_mode_needs_a_known_policy_and_sane_prefixes() {
        let p = parse_policies(&issue_policies()).unwrap();
        assert_eq!(parse_proxy(None, None, &p), Ok(None));
        assert_eq!(parse_proxy(Some(""), None, &p), Ok(None));
        let cfg =
            parse_proxy(Some("http://127.0.0.1:9/"), Some(&json!({ "policy": "api", "keyHeader": "X-Api-Key" })), &p)
                .unwrap()
                .unwrap();
        assert_eq!(
            (cfg.origin.as_str(), cfg.key_header.as_deref(), cfg.ipv6_prefix),
            ("http://127.0.0.1:9", Some("x-api-key"), 64)
        );
        assert!(parse_proxy(Some("http://o"), Some(&json!({ "policy": "nope" })), &p).is_err());
        assert!(parse_proxy(Some("ftp://o"), Some(&json!({ "policy": "api" })), &p).is_err());
        assert!(parse_proxy(Some("http://o"), Some(&json!({ "policy": "api", "ipv6Prefix": 129 })), &p).is_err());
    }

    #[test]
    fn header_options_have_the_middleware_names_and_defaults() {
        let limits = json!([{ "name": "m", "algorithm": "fixed-window", "quota": "5/m" }]);
        let parse = |extra: Value| {
            let mut v = json!({ "limits": limits });
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            parse_policy("p", &v).map(|p| p.headers)
        };
        let default = parse(json!({})).unwrap();
        assert_eq!(
            default,
            HeaderConfig { standard: Some(Standard::Draft10), legacy: true, partition_key: false, jitter: false }
        );
        assert_eq!(parse(json!({ "standardHeaders": true })).unwrap().standard, Some(Standard::Draft6));
        assert_eq!(parse(json!({ "standardHeaders": false })).unwrap().standard, None);
        assert_eq!(parse(json!({ "standardHeaders": "draft-7" })).unwrap().standard, Some(Standard::Draft7));
        let all = parse(json!({ "legacyHeaders": false, "partitionKey": true, "jitter": true })).unwrap();
        assert!(!all.legacy && all.partition_key && all.jitter);
        assert!(parse(json!({ "standardHeaders": "draft-9" })).unwrap_err().contains("standardHeaders must be"));
        assert!(parse(json!({ "legacyHeaders": "no" })).is_err());
        assert!(parse(json!({ "headers": "both" })).is_err(), "the old name is not taken");
    }

    #[test]
    fn the_test_switch_is_off_unless_turned_on() {
        assert!(!test_mode_on(None));
        assert!(!test_mode_on(Some("off")));
        assert!(!test_mode_on(Some("")));
        assert!(test_mode_on(Some("on")));
    }
}
