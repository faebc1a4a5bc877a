//! The core's spec parser (`tollgate::spec`) over JSON: the Worker's vars (`POLICIES`,
//! `POOLS`) and request bodies are `serde_json::Value`s, read through this one adapter so
//! that they are parsed and refused exactly as the npm package's options are.

use serde_json::Value;
use tollgate::spec::{Input, Value as Field};

/// A JSON object (or any JSON value) as the core's spec parser reads it.
#[derive(Clone, Debug)]
pub struct Json(pub Value);

/// One JSON value as the parser's [`Field`].
pub fn field(v: &Value) -> Field<Json> {
    match v {
        Value::Null => Field::Null,
        Value::Bool(b) => Field::Bool(*b),
        // Integers past 2^53 become the nearest f64: still past every maximum, so still refused.
        Value::Number(n) => Field::Number(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => Field::Text(s.clone()),
        Value::Array(items) => Field::List(items.iter().map(field).collect()),
        Value::Object(_) => Field::Object(Json(v.clone())),
    }
}

impl Input for Json {
    fn get(&self, name: &str) -> Field<Json> {
        match self.0.get(name) {
            None => Field::Missing,
            Some(v) => field(v),
        }
    }

    fn field_names(&self) -> Vec<String> {
        self.0.as_object().map_or_else(Vec::new, |o| o.keys().cloned().collect())
    }

    fn show_number(&self, n: f64) -> String {
        if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e21 {
            format!("{n:.0}")
        } else {
            n.to_string()
        }
    }
}

/// Whether `name` is a valid policy name: 1 to 64 of `A-Z a-z 0-9 - _ .`. No `/`, which is
/// what makes `policy/key` an unambiguous Durable Object name.
pub fn valid_policy_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}
