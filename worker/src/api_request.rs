//! Parsing and validating the JSON body of `/v1/limit`, `/v1/peek` and `/v1/refund`.
//!
//! Everything is checked before any state is touched, so a bad request never changes state:
//! the body is JSON of at most [`MAX_BODY_BYTES`], an object with only known fields, a key of
//! 1 to [`MAX_KEY_LEN`] bytes, a configured policy and a whole cost the policy can hold.

use serde_json::{Map, Value};
use tollgate::limiter::{validate_keys, KeyError, MAX_KEY_LEN};
use tollgate::quota::MAX_LIMIT;
use tollgate::Nanos;

use crate::config::{Config, PolicyConfig};
use crate::errors::ApiError;
use crate::spec_input::Json;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 8 * 1024;

/// A validated request.
#[derive(Clone, Debug)]
pub struct HitRequest<'c> {
    /// The policy.
    pub policy: &'c PolicyConfig,
    /// The key.
    pub key: String,
    /// Units to take (or give back).
    pub cost: u64,
    /// The test clock (only with the test switch on).
    pub now: Option<Nanos>,
}

/// The fields of a `/v1/limit`, `/v1/peek` or `/v1/refund` body (docs/vocabulary.md).
pub const FIELDS: [&str; 4] = ["key", "policy", "cost", "now"];

/// Checks a key against the core's rules, as an API error.
pub fn check_key(key: &str) -> Result<(), ApiError> {
    validate_keys(&[key]).map_err(|e| match e {
        KeyError::TooLong { len, .. } => ApiError::bad_request(
            "key_too_long",
            format!("key is {len} bytes; at most {MAX_KEY_LEN} bytes (UTF-8) are allowed"),
        )
        .with_field("key"),
        _ => ApiError::bad_request("missing_key", "key must be a non-empty string").with_field("key"),
    })
}

/// Looks a policy up by name.
pub fn find_policy<'c>(config: &'c Config, name: &str) -> Result<&'c PolicyConfig, ApiError> {
    config.policies.get(name).ok_or_else(|| {
        let known: Vec<&str> = config.policies.keys().map(String::as_str).collect();
        ApiError::bad_request("unknown_policy", format!("no policy named {name:?}; configured: {}", known.join(", ")))
    })
}

fn whole(v: &Value, field: &str, code: &'static str) -> Result<u64, ApiError> {
    v.as_u64().filter(|&n| n <= MAX_LIMIT).ok_or_else(|| {
        ApiError::bad_request(code, format!("{field} must be a whole number from 0 to {MAX_LIMIT}, not {v}"))
            .with_field(field)
    })
}

/// The `?status=` of `/v1/limit` and `/v1/peek`: the HTTP status a denial is answered with,
/// 200 or 429 (`None`: the policy's `statusCode`).
pub fn deny_status_param(url: &worker::Url) -> Result<Option<u16>, ApiError> {
    let Some((_, v)) = url.query_pairs().find(|(k, _)| k == "status") else { return Ok(None) };
    match v.as_ref() {
        "200" => Ok(Some(200)),
        "429" => Ok(Some(429)),
        other => Err(ApiError::bad_request(
            "invalid_status",
            format!("status must be 200 or 429 (the HTTP status of a denial), not {other:?}"),
        )),
    }
}

/// Parses and validates a body. `default_cost` applies when `cost` is absent.
pub fn parse<'c>(body: &[u8], config: &'c Config) -> Result<HitRequest<'c>, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            "body_too_large",
            format!("the body is {} bytes; at most {MAX_BODY_BYTES}", body.len()),
        ));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("the body is not valid JSON: {e}")))?;
    let obj: &Map<String, Value> = v.as_object().ok_or_else(|| {
        ApiError::bad_request(
            "invalid_body",
            r#"the body must be a JSON object like {"key":"user:42","policy":"api","cost":1}"#,
        )
    })?;
    // The core's spec rule for unknown fields: the same `unknown_field` (or `renamed`) as a
    // misspelt option gets in npm and wrangler.toml.
    tollgate::spec::known_fields(&Json(v.clone()), &[&FIELDS], "")
        .map_err(|e| ApiError::bad_request(e.code, e.message).with_field(e.field))?;
    let key = match obj.get("key") {
        Some(Value::String(k)) => k.clone(),
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request("missing_key", "key is required").with_field("key"))
        }
        Some(other) => {
            let m = format!("key must be a string, got {other}");
            return Err(ApiError::bad_request("invalid_type", m).with_field("key"));
        }
    };
    check_key(&key)?;
    let policy = match obj.get("policy") {
        Some(Value::String(p)) => find_policy(config, p)?,
        None | Some(Value::Null) => return Err(ApiError::bad_request("missing_policy", "policy is required")),
        Some(other) => {
            return Err(ApiError::bad_request("unknown_policy", format!("policy must be a string, not {other}")))
        }
    };
    let cost = match obj.get("cost") {
        None => 1,
        Some(c) => whole(c, "cost", "invalid_cost")?,
    };
    policy.policy.validate_cost(cost).map_err(|e| {
        let limit = match e {
            tollgate::CheckError::CostExceedsCapacity { limit, .. } => {
                format!(" (limit {:?})", policy.policy.limits().get(limit).map_or("", |l| l.name()))
            }
            _ => String::new(),
        };
        ApiError::bad_request("invalid_cost", format!("{e}{limit}")).with_field("cost")
    })?;
    let now = match obj.get("now") {
        None => None,
        Some(_) if !config.test_mode => {
            return Err(ApiError::bad_request(
                "test_mode_disabled",
                "now may only be given when the TEST_MODE var is on; the Durable Object's clock decides",
            ))
        }
        Some(n) => Some(Nanos::from_millis(whole(n, "now", "invalid_now")?)),
    };
    Ok(HitRequest { policy, key, cost, now })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_policies;
    use serde_json::json;

    fn config(test_mode: bool) -> Config {
        let policies = parse_policies(&json!({
            "api": { "limits": [{ "name": "per-second", "algorithm": "gcra", "limit": 100, "window": "1s", "burst": 500 }] }
        }))
        .unwrap();
        Config {
            policies,
            pools: Default::default(),
            proxy: None,
            test_mode,
            api_token: None,
            public: false,
            denial_log_sample_rate: 0.0,
        }
    }

    fn code(body: &str, test_mode: bool) -> &'static str {
        parse(body.as_bytes(), &config(test_mode)).unwrap_err().code
    }

    #[test]
    fn a_good_body_parses_with_cost_one_by_default() {
        let c = config(false);
        let r = parse(br#"{"key":"user:42","policy":"api"}"#, &c).unwrap();
        assert_eq!((r.key.as_str(), r.cost, r.now), ("user:42", 1, None));
        let c = config(true);
        let r = parse(br#"{"key":"k","policy":"api","cost":500,"now":1000}"#, &c).unwrap();
        assert_eq!((r.cost, r.now), (500, Some(Nanos::from_secs(1))));
    }

    #[test]
    fn every_mistake_has_its_code() {
        let long = format!(r#"{{"key":"{}","policy":"api"}}"#, "k".repeat(MAX_KEY_LEN + 1));
        let cases: [(&str, &str); 15] = [
            ("nope", "invalid_json"),
            ("[1]", "invalid_body"),
            (r#"{"key":"k","policy":"api","extra":1}"#, "unknown_field"),
            (r#"{"policy":"api"}"#, "missing_key"),
            (r#"{"key":"","policy":"api"}"#, "missing_key"),
            (r#"{"key":7,"policy":"api"}"#, "invalid_type"),
            (&long, "key_too_long"),
            (r#"{"key":"k"}"#, "missing_policy"),
            (r#"{"key":"k","policy":"nope"}"#, "unknown_policy"),
            (r#"{"key":"k","policy":"api","cost":0}"#, "invalid_cost"),
            (r#"{"key":"k","policy":"api","cost":-1}"#, "invalid_cost"),
            (r#"{"key":"k","policy":"api","cost":1.5}"#, "invalid_cost"),
            (r#"{"key":"k","policy":"api","cost":"1"}"#, "invalid_cost"),
            (r#"{"key":"k","policy":"api","cost":501}"#, "invalid_cost"),
            (r#"{"key":"k","policy":"api","now":5}"#, "test_mode_disabled"),
        ];
        for (body, want) in cases {
            assert_eq!(code(body, false), want, "{body}");
        }
        assert_eq!(code(r#"{"key":"k","policy":"api","now":-5}"#, true), "invalid_now");
        let huge = format!(r#"{{"key":"k","policy":"api","pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES));
        assert_eq!(code(&huge, false), "body_too_large");
    }

    #[test]
    fn the_status_parameter_is_200_or_429() {
        let url = |q: &str| worker::Url::parse(&format!("https://t/v1/limit{q}")).unwrap();
        assert_eq!(deny_status_param(&url("")).unwrap(), None);
        assert_eq!(deny_status_param(&url("?status=429")).unwrap(), Some(429));
        assert_eq!(deny_status_param(&url("?x=1&status=200")).unwrap(), Some(200));
        assert_eq!(deny_status_param(&url("?status=503")).unwrap_err().code, "invalid_status");
    }

    #[test]
    fn a_key_of_exactly_the_cap_is_accepted() {
        let c = config(false);
        let body = format!(r#"{{"key":"{}","policy":"api"}}"#, "é".repeat(MAX_KEY_LEN / 2));
        assert!(parse(body.as_bytes(), &c).is_ok());
    }
}
