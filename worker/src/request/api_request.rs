//! Parsing and validating the JSON body of `/v1/limit`, `/v1/peek` and `/v1/refund`.
//!
//! Everything is checked before any state is touched, so a bad request never changes state:
//! the body is JSON of at most [`MAX_BODY_BYTES`], an object with only known fields, a key of
//! 1 to `MAX_KEY_LEN` bytes (or `keys`, a list of such keys, distinct), a configured policy
//! and a whole cost the policy can hold.

use serde_json::{Map, Value};
use tollgate::limiter::{validate_keys, KeyError};
use tollgate::messages::{key_field, key_message};
use tollgate::quota::MAX_LIMIT;
use tollgate::Nanos;

use crate::base::errors::ApiError;
use crate::config::settings::{find_policy, Config, PolicyConfig};
use crate::config::spec_input::Json;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 8 * 1024;

/// A validated request.
#[derive(Clone, Debug)]
pub struct HitRequest<'c> {
    /// The policy.
    pub policy: &'c PolicyConfig,
    /// The key (with `keys`, the first of them).
    pub key: String,
    /// The body's `keys` when it names two or more (decided all or nothing, multi_key.rs);
    /// `None` for one key, however it was given.
    pub keys: Option<Vec<String>>,
    /// Units to take (or give back).
    pub cost: u64,
    /// The test clock (only with the test switch on).
    pub now: Option<Nanos>,
}

impl HitRequest<'_> {
    /// Every key of the request: `keys`, or the one `key`.
    pub fn all_keys(&self) -> &[String] {
        self.keys.as_deref().unwrap_or(std::slice::from_ref(&self.key))
    }
}

/// The fields of a `/v1/limit`, `/v1/peek` or `/v1/refund` body (docs/vocabulary.md).
pub const FIELDS: [&str; 5] = ["key", "keys", "policy", "cost", "now"];

/// The core's key error (its code, field and message) as an API error; `single`: one key was given.
pub fn key_error(e: &KeyError, single: bool) -> ApiError {
    ApiError::bad_request(e.code(), key_message(e, single)).with_field(key_field(e, single))
}

/// Checks a key against the core's rules, as an API error.
pub fn check_key(key: &str) -> Result<(), ApiError> {
    validate_keys(&[key]).map_err(|e| key_error(&e, true))
}

/// The JSON type of `v`, for a message: never the value, which may hold keys (often a
/// client's address) that an answer does not repeat.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A body's `keys`: an array of 1 to `MAX_KEYS_PER_HIT` distinct keys, each checked like
/// `key`, with the code and field the npm limiter gives the same list (`keys[2]`).
pub fn parse_keys(v: &Value) -> Result<Vec<String>, ApiError> {
    let items = v.as_array().ok_or_else(|| {
        ApiError::bad_request("invalid_type", format!("keys must be an array of strings, got {}", kind_of(v))).with_field("keys")
    })?;
    let mut keys = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(k) => keys.push(k.clone()),
            other => {
                let m = format!("keys[{i}] must be a string, got {}", kind_of(other));
                return Err(ApiError::bad_request("invalid_type", m).with_field(format!("keys[{i}]")));
            }
        }
    }
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    validate_keys(&refs).map_err(|e| key_error(&e, false))?;
    Ok(keys)
}

/// A whole number from `min` to `MAX_LIMIT` (cost from 1, as the npm limiter's; now from 0).
pub fn whole(v: &Value, field: &str, min: u64, code: &'static str) -> Result<u64, ApiError> {
    v.as_u64().filter(|&n| (min..=MAX_LIMIT).contains(&n)).ok_or_else(|| {
        ApiError::bad_request(code, format!("{field} must be a whole number from {min} to {MAX_LIMIT}, not {v}"))
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

/// A `/v1/limit`-shaped request read whole: its body parsed, and its `?status=`.
pub async fn read_hit<'c>(req: &mut worker::Request, cfg: &'c Config) -> Result<(HitRequest<'c>, Option<u16>), ApiError> {
    let status = deny_status_param(&req.url()?)?;
    let bytes = read_body(req).await?;
    Ok((parse(&bytes, cfg, &|name| req.headers().get(name).ok().flatten())?, status))
}

/// A request's body, read whole.
pub async fn read_body(req: &mut worker::Request) -> Result<Vec<u8>, ApiError> {
    req.bytes().await.map_err(|e| ApiError::bad_request("invalid_body", format!("could not read the body: {e}")))
}

/// A path segment that is not a percent-encoded UTF-8 string.
pub fn bad_path() -> ApiError {
    ApiError::bad_request("invalid_path", "the path has an invalid %-escape or is not UTF-8")
}

/// Decodes `%XX` escapes (UTF-8); `None` on a bad escape or invalid UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The configured policy and the checked key of `rest`, `{policy}/{key}` (everything after
/// the policy's `/` is the key, percent-decoded, so keys may hold `/`); `missing` when there
/// is no `/`.
pub fn policy_and_key<'c>(
    rest: &str,
    cfg: &'c Config,
    missing: ApiError,
) -> Result<(&'c PolicyConfig, String), ApiError> {
    let (policy, key) = rest.split_once('/').ok_or(missing)?;
    let pc = find_policy(cfg, &percent_decode(policy).ok_or_else(bad_path)?)?;
    let key = percent_decode(key).ok_or_else(bad_path)?;
    check_key(&key)?;
    Ok((pc, key))
}

/// A request body as a JSON object, checked the one way every `/v1` body is: at most
/// [`MAX_BODY_BYTES`] (else 413 `body_too_large`), JSON (`invalid_json`), an object
/// (`invalid_body`, showing `example`), and only `fields` (the core's spec rule: the same
/// `unknown_field` or `renamed` as a misspelt option gets in npm and wrangler.toml).
pub fn json_object(body: &[u8], fields: &[&str], example: &str) -> Result<Map<String, Value>, ApiError> {
    json_object_within(body, MAX_BODY_BYTES, fields, example)
}

/// [`json_object`] for a body of at most `max` bytes.
pub fn json_object_within(
    body: &[u8],
    max: usize,
    fields: &[&str],
    example: &str,
) -> Result<Map<String, Value>, ApiError> {
    if body.len() > max {
        return Err(ApiError::new(413, "body_too_large", format!("the body is {} bytes; at most {max}", body.len())));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request("invalid_json", format!("the body is not valid JSON: {e}")))?;
    let Value::Object(obj) = v else {
        return Err(ApiError::bad_request("invalid_body", format!("the body must be a JSON object like {example}")));
    };
    tollgate::spec::known_fields(&Json(Value::Object(obj.clone())), &[fields], "")
        .map_err(|e| ApiError::bad_request(e.code, e.message).with_field(e.field))?;
    Ok(obj)
}

/// Parses and validates a body.
/// `header_of` reads a request header: a tiered policy's `tierHeader` chooses the tier (tiers.rs).
pub fn parse<'c>(
    body: &[u8],
    config: &'c Config,
    header_of: &dyn Fn(&str) -> Option<String>,
) -> Result<HitRequest<'c>, ApiError> {
    let obj = &json_object(body, &FIELDS, r#"{"key":"user:42","policy":"api","cost":1}"#)?;
    let (key, keys) = match (obj.get("key"), obj.get("keys")) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "conflicting_fields",
                "give either key (one key) or keys (several, all or nothing), not both",
            )
            .with_field("keys"))
        }
        (_, Some(v)) => {
            let mut keys = parse_keys(v)?;
            // One key, however given, is decided and answered as `key` is (as npm does).
            let first = keys[0].clone();
            (first, if keys.len() > 1 { Some(std::mem::take(&mut keys)) } else { None })
        }
        (Some(Value::String(k)), None) => (k.clone(), None),
        (None, None) => return Err(ApiError::bad_request("missing_key", "key is required").with_field("key")),
        (Some(other), None) => {
            let m = format!("key must be a string, got {}", kind_of(other));
            return Err(ApiError::bad_request("invalid_type", m).with_field("key"));
        }
    };
    check_key(&key)?;
    let policy = match obj.get("policy") {
        Some(Value::String(p)) => crate::config::tiers::resolve(config, p, header_of)?,
        None | Some(Value::Null) => return Err(ApiError::bad_request("missing_policy", "policy is required")),
        Some(other) => {
            return Err(ApiError::bad_request("unknown_policy", format!("policy must be a string, not {other}")))
        }
    };
    let cost = match obj.get("cost") {
        None => 1,
        Some(c) => whole(c, "cost", 1, "invalid_cost")?,
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
    let now = crate::request::clock::requested(obj.get("now"), config.test_hooks())?;
    Ok(HitRequest { policy, key, keys, cost, now })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("user%3A42").as_deref(), Some("user:42"));
        assert_eq!(percent_decode("a/b").as_deref(), Some("a/b"));
        assert_eq!(percent_decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%4"), None);
        assert_eq!(percent_decode("%FF"), None);
    }

    use serde_json::json;
    use tollgate::limiter::MAX_KEY_LEN;

    fn config(test_mode: bool) -> Config {
        Config::of_policies(&json!({
            "api": { "limits": [{ "name": "per-second", "algorithm": "gcra", "limit": 100, "window": "1s", "burst": 500 }] }
        }), test_mode)
    }

    fn code(body: &str, test_mode: bool) -> &'static str {
        parse(body.as_bytes(), &config(test_mode), &|_| None).unwrap_err().code
    }

    #[test]
    fn a_good_body_parses_with_cost_one_by_default() {
        let c = config(false);
        let r = parse(br#"{"key":"user:42","policy":"api"}"#, &c, &|_| None).unwrap();
        assert_eq!((r.key.as_str(), r.cost, r.now), ("user:42", 1, None));
        let c = config(true);
        let r = parse(br#"{"key":"k","policy":"api","cost":500,"now":1000}"#, &c, &|_| None).unwrap();
        assert_eq!((r.cost, r.now), (500, Some(Nanos::from_secs(1))));
    }

    #[test]
    fn every_mistake_has_its_code() {
        let long = format!(r#"{{"key":"{}","policy":"api"}}"#, "k".repeat(MAX_KEY_LEN + 1));
        let cases: [(&str, &str); 22] = [
            (r#"{"key":"k","keys":["a","b"],"policy":"api"}"#, "conflicting_fields"),
            (r#"{"keys":"a","policy":"api"}"#, "invalid_type"),
            (r#"{"keys":["a",1],"policy":"api"}"#, "invalid_type"),
            (r#"{"keys":[],"policy":"api"}"#, "invalid_value"),
            (r#"{"keys":["a","a"],"policy":"api"}"#, "invalid_value"),
            (r#"{"keys":["a",""],"policy":"api"}"#, "missing_key"),
            (
                r#"{"keys":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"],"policy":"api"}"#,
                "invalid_value",
            ),
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
        // A cost's range starts at 1, as the npm limiter's message says; a time's at 0.
        let c = config(true);
        let e = parse(br#"{"key":"k","policy":"api","cost":1.5}"#, &c, &|_| None).unwrap_err();
        assert_eq!(e.message, "cost must be a whole number from 1 to 9007199254740991, not 1.5");
        assert!(parse(br#"{"key":"k","policy":"api","now":0}"#, &c, &|_| None).is_ok());
        let huge = format!(r#"{{"key":"k","policy":"api","pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES));
        assert_eq!(code(&huge, false), "body_too_large");
    }

    #[test]
    fn several_keys_parse_and_one_key_in_keys_is_a_key() {
        let c = config(false);
        let r = parse(br#"{"keys":["u1","o1"],"policy":"api"}"#, &c, &|_| None).unwrap();
        assert_eq!((r.key.as_str(), r.keys), ("u1", Some(vec!["u1".to_string(), "o1".to_string()])));
        let sixteen: Vec<String> = (0..16).map(|i| format!("k{i}")).collect();
        let body = serde_json::json!({ "keys": sixteen, "policy": "api" }).to_string();
        assert_eq!(parse(body.as_bytes(), &c, &|_| None).unwrap().keys.map(|k| k.len()), Some(16));
        let r = parse(br#"{"keys":["u1"],"policy":"api"}"#, &c, &|_| None).unwrap();
        assert_eq!((r.key.as_str(), r.keys), ("u1", None));
        let e = parse(br#"{"keys":["a","b","a"],"policy":"api"}"#, &c, &|_| None).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), ("invalid_value", Some("keys[2]")));
        let e = parse(br#"{"key":"a","keys":["b"],"policy":"api"}"#, &c, &|_| None).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), ("conflicting_fields", Some("keys")));
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
        assert!(parse(body.as_bytes(), &c, &|_| None).is_ok());
    }
}
