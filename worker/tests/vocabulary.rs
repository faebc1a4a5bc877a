//! docs/vocabulary.md against the Worker: its configuration (`toml`) and HTTP bodies and
//! answers (`http`) take and give exactly the names the table gives those edges. The npm
//! edges are held to the same table by tests/js/vocabulary.test.mjs.

use std::collections::BTreeSet;

use serde_json::json;
use tollgate::spec::{CODES, LIMIT_FIELDS, POLICY_OPTIONS, POOL_FIELDS, SERVING_FIELDS};
use tollgate::Nanos;

use tollgate::access::Listed;
use tollgate::answer::{WORKER_FIELDS, WORKER_FIELDS_ALWAYS, WORKER_LIMIT_FIELDS};
use tollgate_worker::config::pool_config::POOL_EDGE_FIELDS;
use tollgate_worker::config::settings::{parse_policy, PolicyConfig};
use tollgate_worker::respond::answer::{answer, Answer, Failure, Outcome};
use tollgate_worker::request::pool_request::{GRANT_FIELDS, RENEW_FIELDS};

/// The names of `kind` the table gives `edge`.
fn table(edge: &str, kind: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in include_str!("../../docs/vocabulary.md").lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `name` | kind | edges | meaning |
        if cells.len() < 5 || !cells[1].starts_with('`') {
            continue;
        }
        if cells[2] == kind && cells[3].split_whitespace().any(|e| e == edge) {
            out.insert(cells[1].trim_matches('`').to_string());
        }
    }
    out
}

fn set<'a>(lists: impl IntoIterator<Item = &'a [&'a str]>) -> BTreeSet<String> {
    lists.into_iter().flatten().map(|s| s.to_string()).collect()
}

/// wrangler.toml: a policy's fields (the core's limit schema, `limits` and the policy's
/// own) and a pool's. `PROXY`'s fields are listed by the proxy's owner.
#[test]
fn the_config_takes_exactly_the_tables_toml_options() {
    let accepted = set([
        &LIMIT_FIELDS[..],
        &["limits"][..],
        &POLICY_OPTIONS[..],
        &SERVING_FIELDS[..],
        &tollgate_worker::config::tiers::TIER_FIELDS[..],
        &POOL_FIELDS[..],
        &POOL_EDGE_FIELDS[..],
    ]);
    assert_eq!(accepted, table("toml", "option"));
}

#[test]
fn bodies_take_exactly_the_tables_http_options() {
    let accepted = set([
        &tollgate_worker::request::api_request::FIELDS[..],
        &tollgate_worker::handlers::state_api::FIELDS[..],
        &tollgate_worker::handlers::reserve_api::SETTLE_FIELDS[..],
        &tollgate_worker::handlers::concurrency_api::LEASE_BODY_FIELDS[..],
        &GRANT_FIELDS[..],
        &RENEW_FIELDS[..],
    ]);
    assert_eq!(accepted, table("http", "option"));
}

/// An answer's JSON body.
fn body(a: &Answer) -> serde_json::Value {
    serde_json::from_str(&a.body()).unwrap()
}

/// The answer to the limits' decision `d` over `keys`.
fn decided(pc: &PolicyConfig, d: &tollgate::PolicyDecision, now: Nanos, keys: &[String]) -> Answer {
    answer(pc, &Outcome::Decided(d.clone(), now), keys, 1)
}

/// Several keys' decision is one key's fields plus `limits`, the pairs of limit and key.
#[test]
fn several_keys_answer_one_keys_fields_and_limits() {
    let pc = parse_policy("api", &json!({ "algorithm": "gcra", "quota": "1/s" })).unwrap();
    let keys = ["k".to_string(), "o".to_string()];
    let mut states = [None];
    let mut both = [None, None];
    for _ in 0..2 {
        let now = Nanos::from_secs(1_000);
        let d = pc.policy.check(&mut states, now, 1).unwrap();
        let one: BTreeSet<String> = body(&decided(&pc, &d, now, &keys[..1])).as_object().unwrap().keys().cloned().collect();
        assert!(!one.contains("limits"), "one key answers without the pairs");
        let d = pc.policy.check(&mut both, now, 1).unwrap();
        let several = body(&decided(&pc, &d, now, &keys));
        let several_fields: BTreeSet<String> = several.as_object().unwrap().keys().cloned().collect();
        assert_eq!(several_fields, one.iter().cloned().chain(["limits".to_string()]).collect());
        assert_eq!(several["limits"][1]["key"], "o");
        let pair: Vec<&str> = several["limits"][0].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(set([&pair[..]]), set([&WORKER_LIMIT_FIELDS[..]]), "a pair's fields are the core's list");
    }
}

/// Every decision's fields are the table's, and between them a plain policy's, a
/// penalized one's, a shadowed one's, a listed hit's and several keys' answers, with the
/// state routes' answers, give every one of them.
#[test]
fn a_decision_answers_exactly_the_tables_http_fields() {
    let policy = |extra: serde_json::Value| {
        let mut v = json!({ "algorithm": "gcra", "quota": "1/s", "allowList": ["vip"], "denyList": ["bad"] });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        parse_policy("api", &v).unwrap()
    };
    let now = Nanos::from_secs(1_000);
    let mut all = BTreeSet::new();
    let mut add = |a: &Answer| {
        let fields: BTreeSet<String> = body(a).as_object().unwrap().keys().cloned().collect();
        assert!(fields.is_subset(&table("http", "field")), "{fields:?}");
        all.extend(fields);
    };
    let k = ["k".to_string()];
    for pc in [policy(json!({})), policy(json!({ "blockDuration": "1m" })), policy(json!({ "shadow": true }))] {
        let mut states = [None];
        for _ in 0..2 {
            let d = pc.policy.check(&mut states, now, 1).unwrap();
            add(&decided(&pc, &d, now, &k));
        }
        for listed in [Listed::Allow, Listed::Deny] {
            add(&answer(&pc, &Outcome::Listed(listed, now), &k, 1));
        }
    }
    let pc = policy(json!({}));
    let mut both = [None, None];
    let d = pc.policy.check(&mut both, now, 1).unwrap();
    add(&decided(&pc, &d, now, &["k".to_string(), "o".to_string()]));
    // A reservation's answer and a settlement's (reserve_api.rs).
    let mut states = [None];
    let d = pc.policy.reserve(&mut states, now, 1, 7).unwrap();
    add(&decided(&pc, &d, now, &k).with("reservation", json!("token")));
    let settled = pc.policy.settle(&mut states, now, 7, 1, 0).unwrap();
    add(&tollgate_worker::handlers::reserve_api::settled_answer(&pc, &settled, now, &k));
    // An acquisition's answer, a release's and a renewal's (concurrency_api.rs).
    let pc = parse_policy("gpu", &json!({ "algorithm": "concurrency", "limit": 2 })).unwrap();
    let mut states = [None];
    let d = pc.policy.acquire(&mut states, now, 1, 7).unwrap();
    let answer = tollgate_worker::respond::answer::of_keys(&pc, &d, now, &["k".to_string()]);
    add(&tollgate_worker::handlers::concurrency_api::with_lease(answer, Some(("token".into(), now))));
    let keys = ["k".to_string()];
    let renewed = pc.policy.renew(&mut states, now, 7).unwrap();
    add(&tollgate_worker::handlers::concurrency_api::renewed_answer(&pc, &renewed, now, &keys));
    let released = pc.policy.release(&mut states, now, 7);
    add(&tollgate_worker::handlers::concurrency_api::released_answer(&pc, &released, now, &keys));
    // GET /v1/keys/{policy}/{key}/state and PUT's answer (state_api.rs).
    all.extend(["policy", "key", "state", "imported"].map(String::from));
    assert_eq!(all, table("http", "field"));
}

/// The Worker's JSON answer is the core's: every outcome (decided, estimated, cached, listed,
/// shadowed, penalized, a failed object's either way, contention, several keys) writes fields
/// of `tollgate::answer::WORKER_FIELDS`, the first `WORKER_FIELDS_ALWAYS` in each, and together
/// every one of them.
#[test]
fn the_worker_json_fields_are_the_cores_list() {
    let policy = |extra: serde_json::Value| {
        let mut v = json!({ "limits": [{ "name": "a", "algorithm": "gcra", "quota": "1/s" }, { "name": "b", "algorithm": "fixed-window", "quota": "5/m" }] });
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        parse_policy("api", &v).unwrap()
    };
    let now = Nanos::from_secs(1_000);
    let keys = ["k".to_string(), "o".to_string()];
    let mut seen = BTreeSet::new();
    for pc in [policy(json!({})), policy(json!({ "shadow": true, "failure": "closed" })), policy(json!({ "blockDuration": "1m" }))] {
        let mut states = [None];
        let mut outcomes = vec![Outcome::Listed(Listed::Deny, now), Outcome::Unmade(Failure::Error, now), Outcome::Unmade(Failure::Contention, now)];
        for _ in 0..2 {
            let d = pc.policy.check(&mut states, now, 1).unwrap();
            outcomes.extend([Outcome::Decided(d.clone(), now), Outcome::Estimated(d.clone(), now), Outcome::Cached(d, now)]);
        }
        for o in &outcomes {
            for n in [1, 2] {
                let a = answer(&pc, o, &keys[..n], 1);
                let fields: Vec<String> = body(&a).as_object().unwrap().keys().cloned().collect();
                assert!(set([&WORKER_FIELDS[..WORKER_FIELDS_ALWAYS]]).iter().all(|f| fields.contains(f)), "{fields:?}");
                assert!(fields.iter().all(|f| WORKER_FIELDS.contains(&f.as_str())), "{fields:?}");
                seen.extend(fields);
            }
        }
    }
    assert_eq!(seen, set([&WORKER_FIELDS[..]]));
}

/// Every code of a configuration mistake is in the table for both Worker edges.
#[test]
fn the_spec_codes_are_the_tables() {
    for edge in ["toml", "http"] {
        let codes = table(edge, "code");
        for code in CODES {
            if edge == "http" && !["invalid_type", "missing_field", "unknown_field", "renamed"].contains(&code) {
                continue; // bodies hold no limits: only these spec rules apply to them
            }
            assert!(codes.contains(code), "{code} is not listed for {edge} in docs/vocabulary.md");
        }
    }
}

/// Every code the Worker's sources answer with is in the table.
#[test]
fn every_code_the_worker_answers_is_in_the_table() {
    let sources = [
        include_str!("../src/handlers/api.rs"),
        include_str!("../src/request/api_request.rs"),
        // find_policy's unknown_policy
        include_str!("../src/config/settings.rs"),
        include_str!("../src/request/auth.rs"),
        include_str!("../src/calls/do_client.rs"),
        include_str!("../src/config/env_config.rs"),
        include_str!("../src/base/errors.rs"),
        include_str!("../src/request/pool_request.rs"),
        include_str!("../src/handlers/pools_api.rs"),
        include_str!("../src/handlers/proxy.rs"),
        include_str!("../src/handlers/routes.rs"),
        include_str!("../src/decide/multi_key.rs"),
        include_str!("../src/handlers/state_api.rs"),
        include_str!("../src/handlers/reserve_api.rs"),
        include_str!("../src/object/lock.rs"),
    ];
    let codes = table("http", "code");
    for src in sources {
        // The code, not its tests or comments.
        let code_only = src.split("#[cfg(test)]").next().unwrap_or("");
        let src: String =
            code_only.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let src = src.as_str();
        for call in ["bad_request(", "ApiError::new("] {
            for (at, _) in src.match_indices(call) {
                let rest = &src[at + call.len()..];
                // The code is the first string literal of the call (after a status, for new).
                let Some(open) = rest.find('"') else { continue };
                // Only a literal right after the parenthesis (or a status): a code variable
                // passed along (`c`, `e.code`) is someone else's literal.
                let before = rest[..open].trim();
                if !(before.is_empty() || before.trim_end_matches(',').trim().parse::<u16>().is_ok()) {
                    continue;
                }
                let lit = &rest[open + 1..];
                let code = &lit[..lit.find('"').unwrap_or(0)];
                if code.is_empty() || !code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                    continue;
                }
                assert!(codes.contains(code), "{code} is answered but not listed for http in docs/vocabulary.md");
            }
        }
    }
}
