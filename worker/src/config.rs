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
//! syncRate = 0      # ms; 0 exact (every hit to the Durable Object), > 0 periodic, < 0 local
//! failure = "open"  # or "closed": what to answer when the Durable Object fails
//! timeoutMs = 1000  # how long to wait for the Durable Object
//! ```
//!
//! The limits are the core's schema (`tollgate::spec`, the same parser the npm package's
//! options go through): a policy is one limit's fields, or `limits`, a list of them. Every
//! number and name is validated here, so a bad configuration is a clear `config_error` on
//! every request rather than a surprise later.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};
use tollgate::spec::{
    code, config_name, duration, one_of, parse_policy as parse_spec, whole, wrong_type, Input, PolicySpec, SpecError,
    Value as Field,
};
use tollgate::sync::SyncRate;
use tollgate::text::Msg;
use tollgate::{LimitSpec, Nanos, Policy};

use crate::pool_config::PoolConfig;
use crate::spec_input::{field, Json};

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

fn ms(n: Nanos) -> Value {
    // Durations are shown in milliseconds; a sub-millisecond one as a fraction.
    if n.as_nanos() % 1_000_000 == 0 {
        json!(n.as_millis_floor())
    } else {
        json!(n.as_nanos() as f64 / 1e6)
    }
}

/// A policy's fields besides its limits (which `tollgate::spec` owns).
pub const POLICY_FIELDS: [&str; 3] = ["syncRate", "failure", "timeoutMs"];

/// What `GET /v1/policies` shows of one limit: its options as configured, durations in ms.
fn describe(name: &str, spec: &LimitSpec) -> Value {
    let (algorithm, align) = config_name(spec.algorithm);
    let mut d = json!({ "name": name, "algorithm": algorithm, "limit": spec.limit, "windowMs": ms(spec.window) });
    if let Some(a) = align {
        d["align"] = json!(a);
    }
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
    d
}

/// `syncRate`: whole milliseconds (0 exact, > 0 periodic, < 0 local only) or a duration.
fn sync_rate(input: &Json) -> Result<i64, SpecError> {
    let field = "syncRate";
    match input.get(field) {
        Field::Missing => Ok(0),
        Field::Number(n) if n.fract() == 0.0 && n.abs() <= MAX_SYNC_MS as f64 => Ok(n as i64),
        Field::Number(n) => Err(SpecError::new(
            code::OUT_OF_RANGE,
            field,
            Msg::new(&format!("syncRate must be a whole number of milliseconds from -{MAX_SYNC_MS} to {MAX_SYNC_MS}, got {}", input.show_number(n))),
        )),
        Field::Text(_) => {
            let d = duration(input, field, 1)?.unwrap_or(Nanos::ZERO);
            if d > Nanos::from_millis(MAX_SYNC_MS as u64) {
                let m = Msg::new(&format!("syncRate is above the maximum {MAX_SYNC_MS} ms"));
                return Err(SpecError::new(code::OUT_OF_RANGE, field, m));
            }
            Ok(d.as_millis_ceil() as i64)
        }
        other => Err(wrong_type(input, field, &other, "a number of milliseconds or a duration such as \"100ms\"")),
    }
}

/// Parses one policy. Its errors name the field within the policy (`limits[1].window`).
pub fn parse_policy(name: &str, v: &Value) -> Result<PolicyConfig, SpecError> {
    let input = Json(v.clone());
    if !v.is_object() {
        return Err(wrong_type(&input, "", &field(v), "an object of limits and policy options"));
    }
    let PolicySpec { policy, limits } = parse_spec(&input, &POLICY_FIELDS)?;
    let sync_ms = sync_rate(&input)?;
    if sync_ms != 0 && !policy.is_mergeable() {
        let m = Msg::new(&format!(
            "syncRate = {sync_ms} needs every limit to be mergeable (fixed-window, sliding-window or sliding-buckets); \
             use syncRate = 0 with this policy"
        ));
        return Err(SpecError::new(code::CONFLICTING_FIELDS, "syncRate", m));
    }
    let on_error = match one_of(&input, "failure", &["open", "closed"])? {
        None | Some(0) => FailMode::Open,
        _ => FailMode::Closed,
    };
    let timeout_ms = whole(&input, "timeoutMs", 1, MAX_TIMEOUT_MS, " of milliseconds")?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let described: Vec<Value> = policy.limits().iter().zip(&limits).map(|(l, s)| describe(l.name(), s)).collect();
    let description =
        json!({ "limits": described, "syncRate": sync_ms, "failure": on_error.name(), "timeoutMs": timeout_ms });
    Ok(PolicyConfig { name: name.to_string(), policy, sync_ms, on_error, timeout_ms, description })
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
        out.insert(name.clone(), parse_policy(name, p).map_err(|e| format!("policy {name:?}: {}", e.message))?);
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
    use tollgate::Kind;

    fn issue_policies() -> Value {
        json!({
            "api": { "limits": [{ "name": "per-second", "algorithm": "token-bucket", "limit": 100, "window": "1s", "burst": 500 }] },
            "login": { "limits": [
                { "name": "per-minute", "algorithm": "sliding-window", "quota": "5/m" },
                { "name": "per-hour", "algorithm": "sliding-window", "quota": "20/h" }
            ], "failure": "closed", "timeoutMs": 250, "syncRate": 100 }
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
            (json!({ "x": { "limits": [] } }), "limits must hold 1 to 16"),
            (json!({ "x": { "limits": [{ "name": "a", "algorithm": "nope", "quota": "1/s" }] } }), "algorithm must be one of"),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "syncRate": 100 } }),
                "mergeable",
            ),
            (json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "limit": 1 }] } }), "limits[0].window is required"),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "fixed-window", "quota": "1/s", "burst": 3 }] } }),
                "burst",
            ),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "failure": "maybe" } }),
                "failure must be one of",
            ),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "typo": 1 } }),
                "typo is not an option",
            ),
            (json!({ "a/b": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }] } }), "policy name"),
            (json!({}), "no policy"),
        ];
        for (v, want) in cases {
            let err = parse_policies(&v).unwrap_err();
            assert!(err.contains(want), "{err:?} should mention {want:?}");
        }
    }

    /// The names this edge spelt differently before are refused with what to write now.
    #[test]
    fn renamed_options_say_what_to_write() {
        let limits = json!([{ "algorithm": "gcra", "quota": "1/s" }]);
        for (old, new) in [("onError", "failure"), ("sync", "syncRate")] {
            let e = parse_policy("x", &json!({ "limits": limits, old: 1 })).unwrap_err();
            assert_eq!((e.code, e.field.as_str()), ("renamed", old));
            assert!(e.message.contains(new), "{}", e.message);
        }
        let e = parse_policy("x", &json!({ "algorithm": "fixed-window-first-hit", "quota": "1/s" })).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("renamed", "algorithm"));
    }

    /// Every limit option of the core's schema reaches the Worker, one limit's fields may
    /// stand alone, and durations may be numbers (ms) or strings.
    #[test]
    fn every_limit_option_and_form_is_accepted() {
        let p = parse_policy(
            "x",
            &json!({ "algorithm": "fixed-window", "align": "first-hit", "limit": 3, "window": 2000, "syncRate": 0 }),
        )
        .unwrap();
        assert_eq!(p.policy.limits()[0].name(), "default");
        assert_eq!(p.description["limits"][0]["align"], "first-hit");
        assert_eq!(p.description["limits"][0]["windowMs"], 2000);
        let p = parse_policy(
            "x",
            &json!({ "limits": [
                { "algorithm": "token-bucket", "quota": "10/s", "burst": 20, "refillAmount": 5 },
                { "algorithm": "sliding-buckets", "quota": "60/1m", "precision": "10s", "offset": 5000 }
            ], "syncRate": "100ms", "failure": "closed" }),
        );
        let e = p.unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("conflicting_fields", "syncRate"));
        let p = parse_policy(
            "x",
            &json!({ "limits": [
                { "algorithm": "fixed-window", "quota": "10/s" },
                { "algorithm": "sliding-buckets", "quota": "60/1m", "precision": "10s", "offset": 5000 }
            ], "syncRate": "100ms" }),
        )
        .unwrap();
        assert_eq!(p.sync_ms, 100);
        assert_eq!(p.description["limits"][1]["offsetMs"], 5000);
        assert_eq!(p.description["limits"][1]["precisionMs"], 10_000);
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
    fn the_test_switch_is_off_unless_turned_on() {
        assert!(!test_mode_on(None));
        assert!(!test_mode_on(Some("off")));
        assert!(!test_mode_on(Some("")));
        assert!(test_mode_on(Some("on")));
    }
}
