//! The same mistake gets the same code and field at every edge: the table of
//! `tests/same-error/mistakes.json` through the Worker's two parsers, `wrangler.toml`'s
//! policies (`config::parse_policy`, `config::parse_policies`) and a `/v1/limit` body
//! (`api_request::parse`). The table's `store` and `middleware` sections, the options around a
//! limit, run here at their `toml` edge: the npm `RedisStore`, `WorkerStore` and middleware run
//! them in tests/js/same-error.test.mjs, the running Worker the rest in
//! worker/test/same-error.test.mjs.

use serde_json::{json, Value};

use tollgate_worker::config::settings::{parse_policy, Config};
use tollgate_worker::config::tiers::parse_policies;
use tollgate_worker::request::api_request::parse;

fn table() -> Value {
    serde_json::from_str(include_str!("../../tests/same-error/mistakes.json")).unwrap()
}

fn applies_here(case: &Value, edge: &str) -> bool {
    case.get("edges").and_then(Value::as_array).is_none_or(|e| e.iter().any(|x| x == edge))
}

#[test]
fn a_policy_mistake_gets_the_tables_code_and_field() {
    let t = table();
    for case in t["config"].as_array().unwrap() {
        let e = parse_policy("same", &case["options"]).expect_err(case["mistake"].as_str().unwrap());
        assert_the_tables(case, &e);
    }
}

/// `e` has the code and field the table gives `case`.
fn assert_the_tables(case: &Value, e: &tollgate::spec::SpecError) {
    assert_eq!(
        (e.code, e.field.as_str()),
        (case["code"].as_str().unwrap(), case["field"].as_str().unwrap()),
        "{}: {}",
        case["mistake"],
        e.message
    );
}

/// A `store` or `middleware` case as a wrangler.toml policy: the case's limits (the table's
/// `policy` unless it gives its own) with its options beside them.
fn toml_policy(t: &Value, case: &Value) -> Value {
    let mut policy = case.get("limits").unwrap_or(&t["policy"]).clone();
    for (name, v) in case["options"].as_object().unwrap() {
        policy[name] = v.clone();
    }
    policy
}

#[test]
fn a_mistake_around_a_limit_gets_the_tables_code_and_field() {
    let t = table();
    let mut cases = 0;
    for section in ["store", "middleware"] {
        for case in t[section].as_array().unwrap() {
            if !applies_here(case, "toml") {
                continue;
            }
            cases += 1;
            let policy = toml_policy(&t, case);
            let e = parse_policy("same", &policy).expect_err(case["mistake"].as_str().unwrap());
            assert_the_tables(case, &e);
            assert!(e.message.starts_with(e.field.as_str()), "the message starts with the field: {}", e.message);
            // And as the POLICIES var: the error names the policy and the field.
            let all = parse_policies(&json!({ "same": policy })).expect_err(case["mistake"].as_str().unwrap());
            assert!(all.starts_with(&format!("policy \"same\": {}", e.field)), "{all}");
        }
    }
    assert!(cases >= 20, "{cases} toml cases");
}

#[test]
fn a_body_mistake_gets_the_tables_code_and_field() {
    let t = table();
    let policies = parse_policies(&json!({ "same": t["policy"] })).unwrap();
    let config = Config {
        policies,
        pools: Default::default(),
        proxy: None,
        test_mode: true,
        api_prefix: "/v1".into(),
        api_token: None,
        public: true,
        denial_log_sample_rate: 0.0,
    };
    for case in t["hit"].as_array().unwrap() {
        if !applies_here(case, "http") {
            continue;
        }
        let body = match case.get("raw") {
            Some(raw) => raw.as_str().unwrap().to_string(),
            None => {
                let mut b = case["options"].clone();
                // A list of keys is npm's `limit([k1, k2])` and the body's `keys`.
                let field = if case["key"].is_array() { "keys" } else { "key" };
                // No `key` in the case is a body without one (npm: `limit(undefined)`).
                if let Some(key) = case.get("key") {
                    b[field] = key.clone();
                }
                b["policy"] = json!("same");
                b.to_string()
            }
        };
        let e = parse(body.as_bytes(), &config, &|_| None).expect_err(case["mistake"].as_str().unwrap());
        assert_eq!(e.code, case["code"].as_str().unwrap(), "{}: {}", case["mistake"], e.message);
        assert_eq!(e.field.as_deref(), case["field"].as_str(), "{}", case["mistake"]);
    }
}
