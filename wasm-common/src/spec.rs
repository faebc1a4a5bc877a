//! The core's spec parser (`tollgate::spec`) over JavaScript values: the options object users
//! write goes to the same parser as the Worker's `wrangler.toml`, so both take the same
//! options and refuse the same mistakes with the same `code` and field. Shared by both wasm
//! modules (the extras module builds its own copy of a policy from the same options).

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, Object, Reflect};
use tollgate::policy::Policy;
use tollgate::spec::{parse_one_limit, parse_policy, Input, SpecError, Value, POLICY_OPTIONS};
use wasm_bindgen::{JsCast, JsValue};

use crate::errors::spec_error;

/// A JavaScript object as the spec parser reads it.
pub struct Js(pub JsValue);

fn value(v: JsValue) -> Value<Js> {
    if v.is_undefined() {
        Value::Missing
    } else if v.is_null() {
        Value::Null
    } else if let Some(s) = v.as_string() {
        Value::Text(s)
    } else if let Some(n) = v.as_f64() {
        Value::Number(n)
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if Array::is_array(&v) {
        Value::List(Array::from(&v).iter().map(value).collect())
    } else if v.is_object() {
        Value::Object(Js(v))
    } else {
        Value::Other
    }
}

impl Input for Js {
    fn get(&self, name: &str) -> Value<Js> {
        value(Reflect::get(&self.0, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED))
    }

    fn field_names(&self) -> Vec<String> {
        match self.0.dyn_ref::<Object>() {
            Some(o) => Object::keys(o).iter().filter_map(|k| k.as_string()).collect(),
            None => Vec::new(),
        }
    }

    fn show_number(&self, n: f64) -> String {
        let mut s = String::new();
        crate::errors::push_number(&mut s, n);
        s
    }
}

/// The policy `options` describe; `fields` are the JavaScript edge's own options beside the
/// limits (the limiter's `maxKeys`, `store`), accepted and left to it.
pub fn build_policy(options: JsValue, fields: &[String]) -> Result<Policy, JsValue> {
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    let input = options_object(options)?;
    parse_policy(&input, &fields).map(|p| p.policy).map_err(|e: SpecError| spec_error(&e))
}

/// [`build_policy`] for an edge that decides by one limit without a penalty (the lite module):
/// options giving `limits` or a penalty option (`blockDuration`, ...) throw `refusal` as a
/// `TypeError`, and the parsers of both stay out of the module (`tollgate::spec::parse_one_limit`).
/// Their names stay options of this edge (refused here, by name), so an unknown option's error
/// lists the same options as the full module's.
pub fn build_one_limit(options: JsValue, fields: &[String], refusal: &str) -> Result<Policy, JsValue> {
    let mut names: Vec<&str> = fields.iter().map(String::as_str).collect();
    names.push("limits");
    names.extend_from_slice(&POLICY_OPTIONS);
    let input = options_object(options)?;
    if names[fields.len()..].iter().any(|f| !matches!(input.get(f), Value::Missing)) {
        return Err(js_sys::TypeError::new(refusal).into());
    }
    parse_one_limit(&input, &names).map(|p| p.policy).map_err(|e: SpecError| spec_error(&e))
}

/// `options` if it is an object (not an array), else the core's error naming `options`.
fn options_object(options: JsValue) -> Result<Js, JsValue> {
    let input = Js(options);
    if !input.0.is_object() || Array::is_array(&input.0) {
        let got = value(input.0.clone());
        return Err(spec_error(&tollgate::spec::wrong_type(&input, "options", &got, "an object")));
    }
    Ok(input)
}

/// A duration option around a limit written as a string (a store's `syncRate` or
/// `blockedCache`, `waitFor`'s `maxWait`) in whole milliseconds, rounded up: read by the core's
/// grammar and refused with its errors (`tollgate::spec::duration`: longer than zero, at most
/// 366 days), so the JavaScript layer never restates the grammar. A number stays with that
/// layer, which checks its range as the edge wants it.
/// `holder` is an object whose field `field` holds the string, named as the user named it, so
/// the error's field and message are the core's.
pub fn duration_text_ms(holder: JsValue, field: &str) -> Result<f64, JsValue> {
    match tollgate::spec::duration(&Js(holder), field, 1) {
        Ok(d) => Ok(d.map_or(0.0, |d| d.as_millis_ceil() as f64)),
        Err(e) => Err(spec_error(&e)),
    }
}
