//! A policy's operator controls beside its limits: allow and deny lists (checked before the
//! limits, by the core's `tollgate::access`) and shadow mode (decide and count, never block;
//! respond/answer.rs admits the answer); the core's spec parses them (`tollgate::spec::parse_controls`). The penalty
//! (`blockDuration`) is the core policy's own and needs nothing here.

use tollgate::access::{check_keys, Listed};

use crate::config::settings::PolicyConfig;

pub use tollgate::spec::CONTROL_FIELDS;

/// Which list answers a hit on `keys`, or `None` for the limits to decide (the core's
/// `check_keys`, as the npm limiter's: one denied key denies the hit). A listed hit is
/// counted nowhere (respond/answer.rs answers it).
pub fn lists(pc: &PolicyConfig, keys: &[String], ip: Option<&str>) -> Option<Listed> {
    check_keys(&pc.controls.allow, &pc.controls.deny, keys, ip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::parse_policy;
    use crate::respond::answer::{answer, Outcome, SHADOW_HEADER};
    use serde_json::json;
    use serde_json::Value;
    use tollgate::Nanos;

    /// The cases every edge is held to (tests/access-lists/cases.json), through the core's
    /// lists as the Worker parses them.
    #[test]
    fn the_shared_list_cases() {
        let cases: Value = serde_json::from_str(include_str!("../../../tests/access-lists/cases.json")).unwrap();
        let pc = parse_policy(
            "p",
            &json!({ "algorithm": "gcra", "quota": "1/s", "allowList": cases["allowList"], "denyList": cases["denyList"] }),
        )
        .unwrap();
        for c in cases["cases"].as_array().unwrap() {
            let keys = [c["key"].as_str().unwrap().to_string()];
            let l = lists(&pc, &keys, c["ip"].as_str());
            assert_eq!(l.map(Listed::reason), c["reason"].as_str(), "{c}");
            if let Some(l) = l {
                let a = answer(&pc, &Outcome::Listed(l, Nanos::from_secs(1)), &keys, 1);
                let body: Value = serde_json::from_str(&a.body()).unwrap();
                assert_eq!((body["reason"].as_str(), a.status), (Some(l.reason()), if l == Listed::Allow { 200 } else { 403 }));
                assert!(a.headers.is_empty(), "no limit applied to a listed hit");
            }
        }
        for bad in cases["invalid"].as_array().unwrap() {
            let e = parse_policy("p", &json!({ "algorithm": "gcra", "quota": "1/s", "denyList": ["ok", bad] }))
                .unwrap_err();
            assert_eq!((e.code, e.field.as_str()), ("invalid_value", "denyList[1]"), "{bad}");
        }
    }

    #[test]
    fn bad_controls_are_refused_with_their_field() {
        let p = |extra: Value| {
            let mut v = json!({ "algorithm": "gcra", "quota": "1/s" });
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            parse_policy("p", &v).map(|_| ()).map_err(|e| (e.code, e.field))
        };
        assert_eq!(p(json!({ "shadow": "yes" })), Err(("invalid_type", "shadow".into())));
        assert_eq!(p(json!({ "allowList": "10.0.0.0/8" })), Err(("invalid_type", "allowList".into())));
        assert_eq!(p(json!({ "allowList": [1] })), Err(("invalid_type", "allowList[0]".into())));
        assert_eq!(p(json!({ "allowList": [""] })), Err(("invalid_type", "allowList[0]".into())));
        assert_eq!(p(json!({ "shadow": true, "allowList": ["k"], "denyList": [] })), Ok(()));
    }

    #[test]
    fn a_shadowed_denial_admits_and_says_what_enforcement_answered() {
        let pc = parse_policy("p", &json!({ "algorithm": "gcra", "quota": "1/s", "shadow": true })).unwrap();
        let mut states = [None];
        let now = Nanos::from_secs(1_000);
        let first = pc.policy.check(&mut states, now, 1).unwrap();
        let second = pc.policy.check(&mut states, now, 1).unwrap();
        assert!(first.allowed && !second.allowed, "the limits decide as enforcement");
        let keys = ["k".to_string()];
        let a = answer(&pc, &Outcome::Decided(second.clone(), now), &keys, 1);
        let body: Value = serde_json::from_str(&a.body()).unwrap();
        assert_eq!((a.status, a.allowed()), (200, true));
        assert_eq!((body["shadow"].as_bool(), body["wouldAllow"].as_bool()), (Some(true), Some(false)));
        assert_eq!(body["blockedBy"], "default");
        assert!(a.headers.iter().all(|(n, _)| *n != "Retry-After"));
        assert!(a.headers.iter().any(|(n, v)| *n == SHADOW_HEADER && v == "deny"));
        assert!(a.headers.iter().any(|(n, _)| *n == "RateLimit"));
        // With jitter on, a would-be denial's headers are still exact: no one is to retry.
        let mut jittered = pc.clone();
        jittered.headers.jitter = true;
        let j = answer(&jittered, &Outcome::Decided(second, now), &keys, 1);
        assert_eq!(j.headers, a.headers);
    }
}
