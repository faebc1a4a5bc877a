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
//! leaseTtl = "1s"   # leased mode: isolates decide from slices of the key's quota (leased_mode.rs)
//! failure = "open"  # or "closed": what to answer when the Durable Object fails
//! timeoutMs = 1000  # how long to wait for the Durable Object
//! statusCode = 200  # the HTTP status of a denial on /v1/limit and /v1/peek (200 or 429)
//! ```
//!
//! The limits are the core's schema (`tollgate::spec`, the same parser the npm package's
//! options go through): a policy is one limit's fields, or `limits`, a list of them. Every
//! number and name is validated here, so a bad configuration is a clear `config_error` on
//! every request rather than a surprise later.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};
pub use tollgate::spec::MAX_SYNC_MS;
use tollgate::spec::{
    describe_limit, parse_controls, parse_headers, parse_ipv6_subnet, parse_lease_ttl, parse_policy as parse_spec, parse_serving,
    parse_sync_rate, wrong_type, ControlSpec, HeaderSpec, PolicySpec, Serving, Shown, SpecError, LEASE_FIELD,
    SERVING_FIELDS,
};
use tollgate::sync::SyncRate;

use tollgate::{LimitSpec, Nanos, Policy};

use crate::base::errors::ApiError;
use crate::config::pool_config::PoolConfig;
use crate::config::spec_input::{field, Json};

pub use tollgate::spec::worker_vars::{
    api_route, parse_api_prefix, parse_sample_rate, switch_on, DEFAULT_API_PREFIX, DEFAULT_DENIAL_LOG_SAMPLE_RATE,
    ORIGIN_SECRET_HEADER,
};
use tollgate::spec::worker_vars::{parse_key_header, parse_origin};
pub use tollgate::spec::FailMode;

/// One named policy, validated.
#[derive(Clone, Debug)]
pub struct PolicyConfig {
    /// The policy's name (what a request names).
    pub name: String,
    /// The limits, built by the core.
    pub policy: Policy,
    /// The sync interval as configured (ms; 0 exact, > 0 periodic, < 0 local only).
    pub sync_ms: i64,
    /// Leased mode's lease (ms; 0: not leased): how long an isolate's slice of a key's quota
    /// lasts at most (leased_mode.rs).
    pub lease_ms: u64,
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
    /// Which rate-limit headers its answers carry (`standardHeaders`, `legacyHeaders`,
    /// `partitionKey`, `jitter`), the npm middleware's options of the same names.
    pub headers: HeaderSpec,
    /// Allow and deny lists, shadow mode (controls.rs).
    pub controls: ControlSpec,
    /// On a tiered policy's default tier: how a request chooses another tier (tiers.rs).
    pub tiers: Option<Tiers>,
}

/// How a policy's hits are decided, as its options choose: the one place `syncRate` and
/// `leaseTtl` are read as a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `syncRate = 0` (the default): the key's Durable Object decides every hit.
    Exact,
    /// `syncRate > 0`: this isolate decides from its counts, which it pushes to the key's
    /// object and merges back every `syncRate` ms.
    Synced,
    /// `syncRate < 0`: this isolate decides alone; no object is asked or written.
    Local,
    /// `leaseTtl`: this isolate decides from slices of the key's quota that its object grants.
    Leased,
}

impl PolicyConfig {
    /// The policy's mode.
    pub fn mode(&self) -> Mode {
        if self.lease_ms > 0 {
            Mode::Leased
        } else if self.sync_ms == 0 {
            Mode::Exact
        } else if self.sync_ms > 0 {
            Mode::Synced
        } else {
            Mode::Local
        }
    }

    /// The sync rate in the core's terms.
    pub fn sync_rate(&self) -> SyncRate {
        SyncRate::from_millis(self.sync_ms)
    }
}

/// How a tiered policy's requests find their tier.
#[derive(Clone, Debug, PartialEq)]
pub struct Tiers {
    /// The request header naming the tier.
    pub header: String,
    /// The tier of a request without the header (its state is under the policy's own name).
    pub default: String,
    /// Every tier's name.
    pub names: Vec<String>,
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
    /// The `ORIGIN_SECRET` secret, sent to the origin with every forwarded request as
    /// [`ORIGIN_SECRET_HEADER`], so the origin can refuse requests that did not come through the
    /// limiter. A client's own value of that header is never forwarded.
    pub origin_secret: Option<String>,
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
    /// The test switch (`TEST_MODE = "on"`, only in the test build): requests may carry `now`
    /// and inject faults. Read it through [`Config::test_hooks`].
    pub test_mode: bool,
    /// Where the admin API is served (`API_PREFIX`, default [`DEFAULT_API_PREFIX`]): its routes
    /// are this prefix followed by `/limit`, `/peek`, `/keys/...`; every other path is proxied
    /// (or the playground's assets).
    pub api_prefix: String,
    /// The bearer token `/v1` requires, when the `API_TOKEN` secret is set.
    pub api_token: Option<String>,
    /// `PUBLIC = "true"`: without `API_TOKEN`, `/v1` is open to anyone (local development).
    /// Off by default: without a token and without this switch `/v1` answers 503.
    pub public: bool,
    /// The share of denials logged (`DENIAL_LOG_SAMPLE_RATE`, 0 to 1, default
    /// [`DEFAULT_DENIAL_LOG_SAMPLE_RATE`]): one JSON line each, with the key's hash.
    pub denial_log_sample_rate: f64,
}

#[cfg(test)]
impl Config {
    /// The configuration the handlers' unit tests run under: `policies` (a `POLICIES` value),
    /// no pools, no proxy, no token, the `/v1` prefix.
    pub fn of_policies(policies: &serde_json::Value, test_mode: bool) -> Config {
        Config {
            policies: crate::config::tiers::parse_policies(policies).unwrap(),
            pools: Default::default(),
            proxy: None,
            test_mode,
            api_prefix: "/v1".into(),
            api_token: None,
            public: false,
            denial_log_sample_rate: 0.0,
        }
    }
}

impl Config {
    /// Whether the test hooks are on: the test build (feature `test-hooks`) with `TEST_MODE`
    /// on. Always `false` in a production build, whose test paths compile away with it.
    pub fn test_hooks(&self) -> bool {
        cfg!(feature = "test-hooks") && self.test_mode
    }

    /// The part of `path` after the API prefix (`""`, `"/limit"`, `"/keys/..."`), when `path`
    /// is the admin API's.
    pub fn api_route<'p>(&self, path: &'p str) -> Option<&'p str> {
        api_route(&self.api_prefix, path)
    }
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

pub use tollgate::ip_key::DEFAULT_IPV6_SUBNET;

/// What `GET /v1/policies` shows of one limit: the core's description as JSON.
fn describe(name: &str, spec: &LimitSpec) -> Value {
    let shown = |v: Shown| match v {
        Shown::Text(t) => json!(t),
        Shown::Whole(n) => json!(n),
        // Durations are shown in milliseconds; a sub-millisecond one as a fraction.
        Shown::Ms(n) if n.as_nanos() % 1_000_000 == 0 => json!(n.as_millis_floor()),
        Shown::Ms(n) => json!(n.as_nanos() as f64 / 1e6),
        Shown::Float(f) => json!(f),
    };
    Value::Object(describe_limit(name, spec).into_iter().map(|(k, v)| (k.to_string(), shown(v))).collect())
}

/// Parses one policy. Its errors name the field within the policy (`limits[1].window`).
pub fn parse_policy(name: &str, v: &Value) -> Result<PolicyConfig, SpecError> {
    let input = Json(v.clone());
    if !v.is_object() {
        return Err(wrong_type(&input, "", &field(v), "an object of limits and policy options"));
    }
    let PolicySpec { policy, limits } = parse_spec(&input, &SERVING_FIELDS)?;
    let sync_ms = parse_sync_rate(&input, &policy)?;
    let lease_ms = parse_lease_ttl(&input, &policy, sync_ms)?;
    let Serving { on_error, timeout_ms, deny_status } = parse_serving(&input)?;
    let described: Vec<Value> = policy.limits().iter().zip(&limits).map(|(l, s)| describe(l.name(), s)).collect();
    let mut description = json!({
        "limits": described, "syncRate": sync_ms, "failure": on_error.name(), "timeoutMs": timeout_ms,
        "statusCode": deny_status,
    });
    if lease_ms > 0 {
        description[LEASE_FIELD] = json!(lease_ms);
    }
    if policy.block_duration() > Nanos::ZERO {
        description["blockDuration"] = json!(policy.block_duration().as_millis_ceil());
    }
    let headers = parse_headers(&input)?;
    let controls = parse_controls(&input)?;
    if controls.shadow {
        description["shadow"] = json!(true);
    }
    Ok(PolicyConfig {
        name: name.to_string(),
        policy,
        sync_ms,
        lease_ms,
        on_error,
        timeout_ms,
        deny_status,
        description,
        headers,
        controls,
        tiers: None,
    })
}

/// Looks a policy up by name.
pub fn find_policy<'c>(config: &'c Config, name: &str) -> Result<&'c PolicyConfig, ApiError> {
    config.policies.get(name).ok_or_else(|| {
        let known: Vec<&str> = config.policies.keys().map(String::as_str).collect();
        ApiError::bad_request("unknown_policy", format!("no policy named {name:?}; configured: {}", known.join(", ")))
    })
}

/// Parses proxy mode from `ORIGIN` (empty: off) and the `PROXY` var.
pub fn parse_proxy(
    origin: Option<&str>,
    proxy: Option<&Value>,
    policies: &BTreeMap<String, PolicyConfig>,
) -> Result<Option<ProxyConfig>, String> {
    let Some(origin) = parse_origin(origin)? else { return Ok(None) };
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
    // The core's reading, as the npm middleware's (`tollgate::spec::parse_ipv6_subnet`).
    let subnet = Json(p.ipv6_subnet.map_or(json!({}), |v| json!({ "ipv6Subnet": v })));
    let ipv6_subnet = parse_ipv6_subnet(&subnet).map_err(|e| format!("PROXY.{}", e.message))? as u8;
    let key_header = parse_key_header(p.key_header.as_deref())?;
    Ok(Some(ProxyConfig { origin, policy: p.policy, key_header, ipv6_subnet, origin_secret: None }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tiers::parse_policies;
    use tollgate::headers::Standard;
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
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "nope", "quota": "1/s" }] } }),
                "algorithm must be one of",
            ),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }], "syncRate": 100 } }),
                "mergeable",
            ),
            (
                json!({ "x": { "limits": [{ "name": "a", "algorithm": "gcra", "limit": 1 }] } }),
                "limits[0].window is required",
            ),
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
    fn the_api_prefix_is_a_path_and_routes_only_its_own_paths() {
        assert_eq!(parse_api_prefix(None).as_deref(), Ok("/v1"));
        assert_eq!(parse_api_prefix(Some(" ")).as_deref(), Ok("/v1"));
        assert_eq!(parse_api_prefix(Some("/_tollgate/v1")).as_deref(), Ok("/_tollgate/v1"));
        for bad in ["v1", "/", "/v1/", "//v1", "/v1//x", "/a b", "/v1?x", "/healthz", "/../v1", "/x/."] {
            let e = parse_api_prefix(Some(bad)).unwrap_err();
            assert!(e.starts_with("API_PREFIX must be a path"), "{bad}: {e}");
        }
        let p = parse_policies(&issue_policies()).unwrap();
        let cfg = |prefix: &str| Config {
            policies: p.clone(),
            pools: Default::default(),
            proxy: None,
            test_mode: false,
            api_prefix: prefix.to_string(),
            api_token: None,
            public: false,
            denial_log_sample_rate: 0.0,
        };
        let v1 = cfg("/v1");
        assert_eq!(v1.api_route("/v1/limit"), Some("/limit"));
        assert_eq!(v1.api_route("/v1"), Some(""));
        assert_eq!(v1.api_route("/v10/limit"), None, "a prefix is whole segments");
        assert_eq!(v1.api_route("/orders"), None);
        let moved = cfg("/_tollgate");
        assert_eq!(moved.api_route("/v1/limit"), None, "the origin's own /v1 is not shadowed");
        assert_eq!(moved.api_route("/_tollgate/keys/api/k"), Some("/keys/api/k"));
        assert!(!v1.test_hooks(), "TEST_MODE off: no hooks in any build");
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
        assert_eq!(e.field, "statusCode", "{e}");
    }

    #[test]
    fn public_is_off_unless_turned_on() {
        for (v, on) in
            [(None, false), (Some("false"), false), (Some(""), false), (Some("true"), true), (Some("1"), true)]
        {
            assert_eq!(switch_on(v), on, "{v:?}");
        }
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
            HeaderSpec { standard: Some(Standard::Draft10), legacy: true, partition_key: false, jitter: false }
        );
        assert_eq!(parse(json!({ "standardHeaders": true })).unwrap().standard, Some(Standard::Draft6));
        assert_eq!(parse(json!({ "standardHeaders": false })).unwrap().standard, None);
        assert_eq!(parse(json!({ "standardHeaders": "draft-7" })).unwrap().standard, Some(Standard::Draft7));
        let all = parse(json!({ "legacyHeaders": false, "partitionKey": true, "jitter": true })).unwrap();
        assert!(!all.legacy && all.partition_key && all.jitter);
        assert!(parse(json!({ "standardHeaders": "draft-9" }))
            .unwrap_err()
            .message
            .contains("standardHeaders must be"));
        assert!(parse(json!({ "legacyHeaders": "no" })).is_err());
        assert!(parse(json!({ "headers": "both" })).is_err(), "the old name is not taken");
    }

    #[test]
    fn leased_mode_reads_a_field_the_core_lists() {
        assert!(SERVING_FIELDS.contains(&LEASE_FIELD));
    }

    #[test]
    fn the_test_switch_is_off_unless_turned_on() {
        assert!(!switch_on(None));
        assert!(!switch_on(Some("off")));
        assert!(!switch_on(Some("")));
        assert!(switch_on(Some("on")));
    }
}
