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
//! statusCode = 200  # the HTTP status of a denial on /v1/limit and /v1/peek (200 or 429)
//! ```
//!
//! Every number and name is validated here, by the core's own constructors, so a bad
//! configuration is a clear `config_error` on every request rather than a surprise later.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};
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
    /// The HTTP status a denial is answered with on `/v1/limit` and `/v1/peek`: 200 (a denial
    /// is an answer, which HTTP clients do not retry on their own) unless the policy asks for
    /// 429. A request's `?status=` overrides it.
    pub deny_status: u16,
    /// The normalised description `GET /v1/policies` shows.
    pub description: Value,
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
    /// A request header whose value is the key (e.g. `x-api-key`), only when configured: a
    /// client can send any value, so it is trustworthy only behind a gateway that has already
    /// authenticated the value. The client IP otherwise (the default).
    pub key_header: Option<String>,
    /// IPv6 clients are keyed by their network of this prefix length (56 by default, as the
    /// npm middleware and express-rate-limit v8; 128 keys each address). IPv4 addresses are
    /// always whole.
    pub ipv6_subnet: u8,
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
    /// `PUBLIC = "true"`: without `API_TOKEN`, `/v1` is open to anyone (local development).
    /// Off by default: without a token and without this switch `/v1` answers 503.
    pub public: bool,
    /// The share of denials logged (`DENIAL_LOG_SAMPLE_RATE`, 0 to 1, default
    /// [`DEFAULT_DENIAL_LOG_SAMPLE_RATE`]): one JSON line each, with the key's hash.
    pub denial_log_sample_rate: f64,
}

/// One denial in a hundred is logged unless `DENIAL_LOG_SAMPLE_RATE` says otherwise: enough to
/// see who is limited, not a line per request of a client hammering a limit.
pub const DEFAULT_DENIAL_LOG_SAMPLE_RATE: f64 = 0.01;

/// Parses `DENIAL_LOG_SAMPLE_RATE`: a number from 0 (none) to 1 (every denial).
pub fn parse_sample_rate(v: Option<&str>) -> Result<f64, String> {
    match v.map(str::trim) {
        None | Some("") => Ok(DEFAULT_DENIAL_LOG_SAMPLE_RATE),
        Some(s) => s.parse::<f64>().ok().filter(|r| (0.0..=1.0).contains(r)).ok_or_else(|| {
            format!("DENIAL_LOG_SAMPLE_RATE must be a number from 0 (log no denial) to 1 (every denial), not {s:?}")
        }),
    }
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
    status_code: Option<u16>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ProxyJson {
    policy: String,
    #[serde(default)]
    key_header: Option<String>,
    /// A prefix length, or `false` for whole addresses (as express-rate-limit v8).
    #[serde(default)]
    ipv6_subnet: Option<Value>,
}

/// The IPv6 grouping of the npm middleware and express-rate-limit v8.
pub const DEFAULT_IPV6_SUBNET: u8 = 56;

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
    let deny_status = match p.status_code {
        None => 200,
        Some(s @ (200 | 429)) => s,
        Some(other) => return Err(format!("statusCode must be 200 or 429 (the status of a denial), not {other}")),
    };
    let description = json!({
        "limits": described, "sync": p.sync, "onError": on_error.name(), "timeoutMs": timeout_ms,
        "statusCode": deny_status,
    });
    Ok(PolicyConfig { name: name.to_string(), policy, sync_ms: p.sync, on_error, timeout_ms, deny_status, description })
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
    if let Some(old) = ["ipv6Prefix", "ipv4Prefix"].iter().find(|f| proxy.and_then(|p| p.get(**f)).is_some()) {
        return Err(format!(
            "PROXY.{old} is no longer an option: IPv6 clients are grouped by PROXY.ipv6Subnet (default \
             {DEFAULT_IPV6_SUBNET}, as the npm middleware) and IPv4 addresses are always whole"
        ));
    }
    let p: ProxyJson = match proxy {
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("PROXY: {e}"))?,
        None => return Err("ORIGIN is set but PROXY (which policy proxied requests use) is not".into()),
    };
    if !policies.contains_key(&p.policy) {
        return Err(format!("PROXY names the unknown policy {:?}", p.policy));
    }
    let ipv6_subnet = match &p.ipv6_subnet {
        None => DEFAULT_IPV6_SUBNET,
        Some(Value::Bool(false)) => 128,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=128).contains(n))
            .map(|n| n as u8)
            .ok_or_else(|| format!("PROXY.ipv6Subnet must be a whole number from 1 to 128, or false, not {v}"))?,
    };
    let key_header = match p.key_header.map(|h| h.trim().to_ascii_lowercase()) {
        None => None,
        Some(h) if valid_header_name(&h) => Some(h),
        Some(h) => return Err(format!("PROXY.keyHeader must be an HTTP header name, not {h:?}")),
    };
    Ok(Some(ProxyConfig { origin, policy: p.policy, key_header, ipv6_subnet }))
}

/// Whether `h` is a header name (an HTTP token).
fn valid_header_name(h: &str) -> bool {
    !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether a `PUBLIC` value opens `/v1` without a token (only `true`, `"true"`, `"on"`, `"1"`).
pub fn public_on(v: Option<&str>) -> bool {
    matches!(v.map(str::trim), Some("on" | "true" | "1"))
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
            (cfg.origin.as_str(), cfg.key_header.as_deref(), cfg.ipv6_subnet),
            ("http://127.0.0.1:9", Some("x-api-key"), 56)
        );
        let by_ip = parse_proxy(Some("http://o"), Some(&json!({ "policy": "api" })), &p).unwrap().unwrap();
        assert_eq!((by_ip.key_header, by_ip.ipv6_subnet), (None, 56), "the client IP by default, IPv6 by /56");
        let whole = parse_proxy(Some("http://o"), Some(&json!({ "policy": "api", "ipv6Subnet": false })), &p);
        assert_eq!(whole.unwrap().unwrap().ipv6_subnet, 128);
        let s64 = parse_proxy(Some("http://o"), Some(&json!({ "policy": "api", "ipv6Subnet": 64 })), &p);
        assert_eq!(s64.unwrap().unwrap().ipv6_subnet, 64);
        assert!(parse_proxy(Some("http://o"), Some(&json!({ "policy": "nope" })), &p).is_err());
        assert!(parse_proxy(Some("ftp://o"), Some(&json!({ "policy": "api" })), &p).is_err());
        for bad in [json!(129), json!(0), json!(true), json!("56")] {
            let e =
                parse_proxy(Some("http://o"), Some(&json!({ "policy": "api", "ipv6Subnet": bad })), &p).unwrap_err();
            assert!(e.contains("ipv6Subnet"), "{e}");
        }
        let old = parse_proxy(Some("http://o"), Some(&json!({ "policy": "api", "ipv6Prefix": 64 })), &p).unwrap_err();
        assert!(old.contains("ipv6Subnet"), "{old}");
        let e = parse_proxy(Some("http://o"), Some(&json!({ "policy": "api", "keyHeader": "a b" })), &p).unwrap_err();
        assert!(e.contains("keyHeader"), "{e}");
    }

    #[test]
    fn a_denial_is_answered_200_unless_the_policy_asks_for_429() {
        let p = parse_policies(&issue_policies()).unwrap();
        assert_eq!(p["api"].deny_status, 200);
        let limits = json!([{ "name": "a", "algorithm": "gcra", "quota": "1/s" }]);
        let p429 = parse_policy("x", &json!({ "limits": limits, "statusCode": 429 })).unwrap();
        assert_eq!((p429.deny_status, &p429.description["statusCode"]), (429, &json!(429)));
        let e = parse_policy("x", &json!({ "limits": limits, "statusCode": 403 })).unwrap_err();
        assert!(e.contains("statusCode"), "{e}");
    }

    #[test]
    fn public_is_off_unless_turned_on() {
        for (v, on) in
            [(None, false), (Some("false"), false), (Some(""), false), (Some("true"), true), (Some("1"), true)]
        {
            assert_eq!(public_on(v), on, "{v:?}");
        }
    }

    #[test]
    fn the_test_switch_is_off_unless_turned_on() {
        assert!(!test_mode_on(None));
        assert!(!test_mode_on(Some("off")));
        assert!(!test_mode_on(Some("")));
        assert!(test_mode_on(Some("on")));
    }
}
