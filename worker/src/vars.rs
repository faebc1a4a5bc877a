//! The [`Config`] from var values, wherever they come from: the Worker's environment at run
//! time (`env_config`), and wrangler.toml's `[vars]` at build time (the `check-config`
//! example that `scripts/build.sh` runs), so a configuration the Worker would refuse fails the
//! build, with the same message, before it can serve.

use serde_json::Value;

use crate::config::{parse_policies, parse_proxy, parse_sample_rate, public_on, test_mode_on, Config};
use crate::pool_config::parse_pools;

/// A var as JSON: an object var as is, a string var parsed as JSON when it is not empty.
fn json_var(name: &str, raw: Option<Value>) -> Result<Option<Value>, String> {
    match raw {
        None => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => {
            serde_json::from_str(&s).map(Some).map_err(|e| format!("{name} is not valid JSON: {e}"))
        }
        Some(other) => Ok(Some(other)),
    }
}

/// A var as text (`true` and numbers, as TOML or JSON give them, as their text).
fn text_var(raw: Option<Value>) -> Option<String> {
    match raw? {
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

/// The configuration from `var` (a var's value by name: a string, or JSON for an object var)
/// and the `API_TOKEN` secret. Errors name the var (`POLICIES: policy "api": ...`).
pub fn read_config(var: &dyn Fn(&str) -> Option<Value>, api_token: Option<String>) -> Result<Config, String> {
    let policies = json_var("POLICIES", var("POLICIES"))?.ok_or("the POLICIES var is not set")?;
    let policies = parse_policies(&policies).map_err(|e| format!("POLICIES: {e}"))?;
    let pools = parse_pools(json_var("POOLS", var("POOLS"))?.as_ref()).map_err(|e| format!("POOLS: {e}"))?;
    let origin = text_var(var("ORIGIN"));
    let proxy = parse_proxy(origin.as_deref(), json_var("PROXY", var("PROXY"))?.as_ref(), &policies)?;
    let test_mode = test_mode_on(text_var(var("TEST_MODE")).as_deref());
    let public = public_on(text_var(var("PUBLIC")).as_deref());
    let denial_log_sample_rate = parse_sample_rate(text_var(var("DENIAL_LOG_SAMPLE_RATE")).as_deref())?;
    // An empty token is treated as unset: "" would otherwise accept `Bearer ` (no token).
    let api_token = api_token.filter(|t| !t.is_empty());
    Ok(Config { policies, pools, proxy, test_mode, api_token, public, denial_log_sample_rate })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(pairs: Value) -> impl Fn(&str) -> Option<Value> {
        move |name| pairs.get(name).cloned()
    }

    #[test]
    fn object_and_string_vars_read_alike() {
        let policies = json!({ "p": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }] } });
        let a = read_config(&vars(json!({ "POLICIES": policies })), None).unwrap();
        let b = read_config(&vars(json!({ "POLICIES": policies.to_string(), "PUBLIC": true })), Some(String::new()))
            .unwrap();
        assert_eq!(a.policies.keys().collect::<Vec<_>>(), b.policies.keys().collect::<Vec<_>>());
        assert!(!a.public && b.public);
        assert_eq!(a.denial_log_sample_rate, 0.01);
        let every = read_config(&vars(json!({ "POLICIES": policies, "DENIAL_LOG_SAMPLE_RATE": 1 })), None).unwrap();
        assert_eq!(every.denial_log_sample_rate, 1.0);
        let e = read_config(&vars(json!({ "POLICIES": policies, "DENIAL_LOG_SAMPLE_RATE": "2" })), None).unwrap_err();
        assert!(e.contains("DENIAL_LOG_SAMPLE_RATE"), "{e}");
        assert_eq!(b.api_token, None, "an empty token is no token");
    }

    #[test]
    fn errors_name_the_var_and_the_field() {
        let bad = json!({ "p": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s", "burst": 0 }] } });
        let e = read_config(&vars(json!({ "POLICIES": bad })), None).unwrap_err();
        assert!(e.starts_with("POLICIES: policy \"p\""), "{e}");
        let e = read_config(&vars(json!({})), None).unwrap_err();
        assert!(e.contains("POLICIES"), "{e}");
        let good = json!({ "p": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }] } });
        let e =
            read_config(&vars(json!({ "POLICIES": good, "POOLS": { "x": { "partitions": 0, "rate": "1/s" } } })), None)
                .unwrap_err();
        assert!(e.starts_with("POOLS: "), "{e}");
        let e = read_config(&vars(json!({ "POLICIES": good, "ORIGIN": "http://o", "PROXY": { "policy": "q" } })), None)
            .unwrap_err();
        assert!(e.contains("PROXY"), "{e}");
    }
}
