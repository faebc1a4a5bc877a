//! The [`Config`] from var values, wherever they come from: the Worker's environment at run
//! time (`env_config`), and wrangler.toml's `[vars]` at build time (the `check-config`
//! example that `scripts/build.sh` runs), so a configuration the Worker would refuse fails the
//! build, with the same message, before it can serve.

use serde_json::Value;

use crate::config::pool_config::parse_pools;
use crate::config::settings::{parse_api_prefix, parse_proxy, parse_sample_rate, switch_on, Config};
use crate::config::tiers::parse_policies;

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

/// Whether this build has the test hooks (feature `test-hooks`: the Worker's test build).
pub const TEST_HOOKS: bool = cfg!(feature = "test-hooks");

/// The configuration from `var` (a var's value by name: a string, or JSON for an object var)
/// and the `API_TOKEN` secret, for this build. Errors name the var
/// (`POLICIES: policy "api": ...`).
pub fn read_config(var: &dyn Fn(&str) -> Option<Value>, api_token: Option<String>) -> Result<Config, String> {
    read_config_for(var, api_token, TEST_HOOKS)
}

/// [`read_config`] for a build with (`hooks`) or without the test hooks.
///
/// `TEST_MODE` on is refused beside `ORIGIN` or `API_TOKEN` (with it, any client could set a
/// request's clock or fail a key's object: it is for local tests, never for a deployment that
/// serves anyone), and in a build without the hooks (where it would do nothing, and a
/// configuration that says otherwise is wrong).
pub fn read_config_for(
    var: &dyn Fn(&str) -> Option<Value>,
    api_token: Option<String>,
    hooks: bool,
) -> Result<Config, String> {
    let policies = json_var("POLICIES", var("POLICIES"))?.ok_or("the POLICIES var is not set")?;
    let policies = parse_policies(&policies).map_err(|e| format!("POLICIES: {e}"))?;
    let pools = parse_pools(json_var("POOLS", var("POOLS"))?.as_ref()).map_err(|e| format!("POOLS: {e}"))?;
    let origin = text_var(var("ORIGIN"));
    let mut proxy = parse_proxy(origin.as_deref(), json_var("PROXY", var("PROXY"))?.as_ref(), &policies)?;
    let origin_secret = text_var(var("ORIGIN_SECRET")).filter(|s| !s.is_empty());
    match (&mut proxy, origin_secret) {
        (Some(p), secret) => p.origin_secret = secret,
        (None, Some(_)) => return Err("ORIGIN_SECRET is set but ORIGIN is not: it is only sent to an origin".into()),
        (None, None) => {}
    }
    let api_prefix = parse_api_prefix(text_var(var("API_PREFIX")).as_deref())?;
    let public = switch_on(text_var(var("PUBLIC")).as_deref());
    let denial_log_sample_rate = parse_sample_rate(text_var(var("DENIAL_LOG_SAMPLE_RATE")).as_deref())?;
    // An empty token is treated as unset: "" would otherwise accept `Bearer ` (no token).
    let api_token = api_token.filter(|t| !t.is_empty());
    let test_mode = switch_on(text_var(var("TEST_MODE")).as_deref());
    if test_mode {
        let beside = if proxy.is_some() { Some("ORIGIN") } else { api_token.as_ref().map(|_| "API_TOKEN") };
        if let Some(other) = beside {
            return Err(format!(
                "TEST_MODE is on beside {other}: with it any client may set a request's clock or fail a key's \
                 Durable Object; it is for local tests only, never for a deployment that serves anyone: remove TEST_MODE"
            ));
        }
        if !hooks {
            return Err("TEST_MODE is on, but this is a production build, which has no test hooks: remove TEST_MODE \
                 (the workerd tests run the test build, worker/scripts/build.sh --test)"
                .into());
        }
    }
    Ok(Config { policies, pools, proxy, test_mode, api_prefix, api_token, public, denial_log_sample_rate })
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
        let e = read_config(&vars(json!({ "POLICIES": good, "API_PREFIX": "v1" })), None).unwrap_err();
        assert!(e.starts_with("API_PREFIX must be a path"), "{e}");
    }

    #[test]
    fn test_mode_is_refused_beside_an_origin_or_a_token_and_without_the_hooks() {
        let good = json!({ "p": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }] } });
        let test = json!({ "POLICIES": good, "TEST_MODE": "on" });
        assert!(read_config_for(&vars(test.clone()), None, true).unwrap().test_mode);
        let mut proxied = test.clone();
        proxied["ORIGIN"] = json!("https://api.example.com");
        proxied["PROXY"] = json!({ "policy": "p" });
        for hooks in [true, false] {
            let e = read_config_for(&vars(proxied.clone()), None, hooks).unwrap_err();
            assert!(e.starts_with("TEST_MODE is on beside ORIGIN"), "{e}");
            let e = read_config_for(&vars(test.clone()), Some("t0ken".into()), hooks).unwrap_err();
            assert!(e.starts_with("TEST_MODE is on beside API_TOKEN"), "{e}");
        }
        let e = read_config_for(&vars(test.clone()), None, false).unwrap_err();
        assert!(e.contains("production build"), "{e}");
        // Off (or unset) is accepted everywhere, beside anything.
        let mut off = proxied.clone();
        off["TEST_MODE"] = json!("off");
        let cfg = read_config_for(&vars(off), Some("t0ken".into()), false).unwrap();
        assert!(!cfg.test_mode && !cfg.test_hooks());
    }

    #[test]
    fn the_origin_secret_goes_with_an_origin_only() {
        let good = json!({ "p": { "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }] } });
        let proxied =
            json!({ "POLICIES": good, "ORIGIN": "https://o", "PROXY": { "policy": "p" }, "ORIGIN_SECRET": "s3" });
        let cfg = read_config(&vars(proxied), None).unwrap();
        assert_eq!(cfg.proxy.unwrap().origin_secret.as_deref(), Some("s3"));
        let e = read_config(&vars(json!({ "POLICIES": good, "ORIGIN_SECRET": "s3" })), None).unwrap_err();
        assert!(e.contains("ORIGIN_SECRET is set but ORIGIN is not"), "{e}");
        let unset = json!({ "POLICIES": good, "ORIGIN": "https://o", "PROXY": { "policy": "p" }, "ORIGIN_SECRET": "" });
        assert_eq!(read_config(&vars(unset), None).unwrap().proxy.unwrap().origin_secret, None);
    }
}
