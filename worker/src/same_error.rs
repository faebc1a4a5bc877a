//! The same mistake gets the same code and field at every edge: the table of
//! `tests/same-error/mistakes.json` through the Worker's two parsers, `wrangler.toml`'s
//! policies (`config::parse_policy`) and a `/v1/limit` body (`api_request::parse`). The npm
//! package runs the same table in tests/js/same-error.test.mjs, and the running Worker in
//! worker/test/same-error.test.mjs.

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::api_request::parse;
    use crate::config::{parse_policies, parse_policy, Config};

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
            assert_eq!(
                (e.code, e.field.as_str()),
                (case["code"].as_str().unwrap(), case["field"].as_str().unwrap()),
                "{}: {}",
                case["mistake"],
                e.message
            );
        }
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
                    b[field] = case["key"].clone();
                    b["policy"] = json!("same");
                    b.to_string()
                }
            };
            let e = parse(body.as_bytes(), &config, &|_| None).expect_err(case["mistake"].as_str().unwrap());
            assert_eq!(e.code, case["code"].as_str().unwrap(), "{}: {}", case["mistake"], e.message);
            assert_eq!(e.field.as_deref(), case["field"].as_str(), "{}", case["mistake"]);
        }
    }
}
