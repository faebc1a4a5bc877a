//! Tiers: one policy whose limits depend on who asks (free, pro, ...), chosen per request by a
//! header the authenticated caller sets (`tierHeader`, default `Tollgate-Tier`).
//!
//! ```toml
//! [vars.POLICIES.api]
//! defaultTier = "free"
//! tiers = { free = { quota = "100/h", algorithm = "sliding-window" }, pro = { quota = "5000/h", algorithm = "gcra" } }
//! ```
//!
//! Each tier is a whole policy (limits and policy options) and keeps its own state per key: the
//! default tier's under the policy's name, another tier's under `"<policy>:<tier>"` (`:` is not
//! allowed in configured names, so it never collides). A key that changes tier therefore starts
//! with that tier's own usage of it (fresh the first time) and finds its old usage again if it
//! comes back; nothing is carried between tiers, so upgrading never inherits a free tier's
//! denials and downgrading never hands a key a full free quota it already spent on that tier.
//! Only `/v1` requests choose a tier, and `/v1` needs the API token: a client of the proxy
//! cannot (the proxy always decides by the default tier).
use std::collections::BTreeMap;

use serde_json::Value;
use tollgate::headers::is_field_name;

use crate::base::errors::ApiError;
use crate::config::settings::{find_policy, parse_policy, Config, PolicyConfig, Tiers};
use crate::config::spec_input::valid_policy_name;

/// The options of a tiered policy, beside which no other option is taken (each tier has its own).
pub const TIER_FIELDS: [&str; 3] = ["tiers", "tierHeader", "defaultTier"];

/// The header a tier is chosen by unless `tierHeader` names another.
pub const DEFAULT_TIER_HEADER: &str = "Tollgate-Tier";

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
        if p.get("tiers").is_some() {
            parse_tiered(name, p, &mut out)?;
            continue;
        }
        out.insert(name.clone(), parse_policy(name, p).map_err(|e| format!("policy {name:?}: {}", e.located()))?);
    }
    Ok(out)
}

/// Parses a policy with `tiers` into `out`: the default tier under `name` (with `tiers` set,
/// so requests naming the policy can be sent on), every other tier under `"<name>:<tier>"`.
pub fn parse_tiered(name: &str, v: &Value, out: &mut BTreeMap<String, PolicyConfig>) -> Result<(), String> {
    let obj = v.as_object().ok_or_else(|| format!("policy {name:?} must be an object"))?;
    if let Some(other) = obj.keys().find(|k| !TIER_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "policy {name:?}: {other} is not an option beside tiers (limits and options go in each tier; beside tiers: tierHeader, defaultTier)"
        ));
    }
    let tiers = match obj.get("tiers") {
        Some(Value::Object(t)) if !t.is_empty() => t,
        _ => {
            return Err(format!(
                "policy {name:?}: tiers must be an object of tier name to policy, with at least one tier"
            ))
        }
    };
    let header = match obj.get("tierHeader") {
        None => DEFAULT_TIER_HEADER.to_string(),
        Some(Value::String(h)) if h.len() <= 64 && is_field_name(h) => h.clone(),
        Some(other) => return Err(format!("policy {name:?}: tierHeader must be an HTTP header name, got {other}")),
    };
    let default = match obj.get("defaultTier") {
        Some(Value::String(d)) if tiers.contains_key(d) => d.clone(),
        Some(other) => return Err(format!("policy {name:?}: defaultTier must name one of its tiers, got {other}")),
        None => {
            return Err(format!(
                "policy {name:?}: defaultTier is required with tiers (the tier of a request without {header})"
            ))
        }
    };
    let names: Vec<String> = tiers.keys().cloned().collect();
    for (tier, spec) in tiers {
        if !valid_policy_name(tier) {
            return Err(format!("policy {name:?}: tier name {tier:?} must be 1 to 64 characters of A-Z a-z 0-9 - _ ."));
        }
        let stored = if *tier == default { name.to_string() } else { format!("{name}:{tier}") };
        let mut pc =
            parse_policy(&stored, spec).map_err(|e| format!("policy {name:?}: tier {tier:?}: {}", e.located()))?;
        pc.description["tier"] = Value::String(tier.clone());
        if *tier == default {
            pc.description["tiers"] =
                serde_json::json!({ "tierHeader": header, "defaultTier": default, "names": names });
            pc.tiers = Some(Tiers { header: header.clone(), default: default.clone(), names: names.clone() });
        }
        out.insert(stored, pc);
    }
    Ok(())
}

/// The policy a request naming `name` is decided by: for a tiered policy, the tier its
/// `tierHeader` names (`header_of` reads a request header), the default tier without one.
pub fn resolve<'c>(
    config: &'c Config,
    name: &str,
    header_of: &dyn Fn(&str) -> Option<String>,
) -> Result<&'c PolicyConfig, ApiError> {
    let pc = find_policy(config, name)?;
    let Some(t) = &pc.tiers else { return Ok(pc) };
    let Some(asked) = header_of(&t.header) else { return Ok(pc) };
    let asked = asked.trim();
    if asked == t.default {
        Ok(pc)
    } else if t.names.iter().any(|n| n == asked) {
        find_policy(config, &format!("{name}:{asked}"))
    } else {
        let shown: String = asked.chars().take(64).collect();
        let m = format!("{}: {shown:?} is not a tier of policy {name:?}; its tiers: {}", t.header, t.names.join(", "));
        Err(ApiError::bad_request("unknown_tier", m).with_field(t.header.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: Value) -> Config {
        let mut policies = BTreeMap::new();
        for (name, p) in v.as_object().unwrap() {
            parse_tiered(name, p, &mut policies).unwrap();
        }
        Config {
            policies,
            pools: BTreeMap::new(),
            proxy: None,
            test_mode: false,
            api_prefix: "/v1".into(),
            api_token: None,
            public: false,
            denial_log_sample_rate: 0.0,
        }
    }

    fn api() -> Value {
        json!({ "api": { "defaultTier": "free", "tierHeader": "X-Plan", "tiers": {
            "free": { "algorithm": "fixed-window", "quota": "2/m" },
            "pro": { "algorithm": "gcra", "quota": "10/m", "failure": "closed" },
        } } })
    }

    #[test]
    fn the_header_chooses_the_tier_and_the_default_keeps_the_policys_name() {
        let c = config(api());
        let none = |_: &str| None;
        assert_eq!(resolve(&c, "api", &none).unwrap().name, "api");
        let pro = |h: &str| (h == "X-Plan").then(|| " pro ".to_string());
        assert_eq!(resolve(&c, "api", &pro).unwrap().name, "api:pro");
        let free = |_: &str| Some("free".to_string());
        assert_eq!(resolve(&c, "api", &free).unwrap().name, "api");
        let gold = |_: &str| Some("gold".to_string());
        let e = resolve(&c, "api", &gold).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), ("unknown_tier", Some("X-Plan")));
    }

    #[test]
    fn mistakes_are_refused_with_what_to_write() {
        let bad = [
            json!({ "defaultTier": "a", "tiers": { "a": { "algorithm": "gcra", "quota": "1/s" } }, "failure": "closed" }),
            json!({ "defaultTier": "a", "tiers": {} }),
            json!({ "tiers": { "a": { "algorithm": "gcra", "quota": "1/s" } } }),
            json!({ "defaultTier": "b", "tiers": { "a": { "algorithm": "gcra", "quota": "1/s" } } }),
            json!({ "defaultTier": "a", "tierHeader": "bad header", "tiers": { "a": { "algorithm": "gcra", "quota": "1/s" } } }),
            json!({ "defaultTier": "a", "tiers": { "a": { "algorithm": "gcra", "quota": "0/s" } } }),
            json!({ "defaultTier": "a:b", "tiers": { "a:b": { "algorithm": "gcra", "quota": "1/s" } } }),
        ];
        for v in bad {
            assert!(parse_tiered("api", &v, &mut BTreeMap::new()).is_err(), "{v}");
        }
    }
}
