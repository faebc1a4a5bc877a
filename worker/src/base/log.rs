//! Structured logs: one JSON object per line, which Workers Logs (`[observability]` in
//! wrangler.toml) indexes field by field and `wrangler tail` prints as it is.
//!
//! `{"level":"warn","event":"denied","policy":"login","keyHash":"9f2c..."}`: `event` names
//! what happened, the other fields are the event's own. Never a raw key (see `key_hash`), a
//! token or a request body.

use serde_json::{Map, Value};

/// The line for `event` at `level` with `fields` (an object; anything else is ignored).
pub fn line(level: &str, event: &str, fields: Value) -> String {
    let mut out = Map::new();
    out.insert("level".into(), Value::from(level));
    out.insert("event".into(), Value::from(event));
    if let Value::Object(fields) = fields {
        out.extend(fields);
    }
    Value::Object(out).to_string()
}

/// Logs at level `info` (console.log).
pub fn info(event: &str, fields: Value) {
    worker::console_log!("{}", line("info", event, fields));
}

/// Logs at level `warn` (console.warn).
pub fn warn(event: &str, fields: Value) {
    worker::console_warn!("{}", line("warn", event, fields));
}

/// Logs at level `error` (console.error; standard error in the crate's native unit tests,
/// where there is no console).
pub fn error(event: &str, fields: Value) {
    let line = line("error", event, fields);
    #[cfg(target_arch = "wasm32")]
    worker::console_error!("{}", line);
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_is_one_json_object_with_its_level_and_event() {
        let l = line("warn", "denied", json!({ "policy": "login", "note": "a \"quoted\"\nline" }));
        assert!(!l.contains('\n'), "one line");
        let v: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(
            (v["level"].as_str(), v["event"].as_str(), v["policy"].as_str()),
            (Some("warn"), Some("denied"), Some("login"))
        );
    }
}
