//! Reads the [`Config`] from the Worker's environment, once per isolate.
//!
//! Vars cannot change under a running isolate (a new deployment or `wrangler dev` restart
//! starts new isolates), so the parsed configuration is kept for the isolate's lifetime. A
//! broken configuration is kept too, as its error, and every request answers it.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;
use worker::Env;

use crate::config::{parse_policies, parse_proxy, test_mode_on, Config};
use crate::errors::ApiError;
use crate::pool_config::parse_pools;

thread_local! {
    static CONFIG: RefCell<Option<Result<Rc<Config>, String>>> = const { RefCell::new(None) };
}

/// A var as JSON: an object var as is, a string var parsed as JSON when it looks like JSON.
fn json_var(env: &Env, name: &str) -> Result<Option<Value>, String> {
    let v = match env.object_var::<Value>(name) {
        Ok(v) => v,
        // A string var is not an object binding: read it as text.
        Err(_) => match env.var(name) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => return Ok(None),
        },
    };
    match v {
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => serde_json::from_str(&s).map(Some).map_err(|e| format!("{name} is not valid JSON: {e}")),
        other => Ok(Some(other)),
    }
}

fn string_var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string())
}

fn read(env: &Env) -> Result<Config, String> {
    let policies = json_var(env, "POLICIES")?.ok_or("the POLICIES var is not set")?;
    let policies = parse_policies(&policies)?;
    let pools = parse_pools(json_var(env, "POOLS")?.as_ref())?;
    let origin = string_var(env, "ORIGIN");
    let proxy = parse_proxy(origin.as_deref(), json_var(env, "PROXY")?.as_ref(), &policies)?;
    let test_mode = test_mode_on(string_var(env, "TEST_MODE").as_deref());
    // An empty token is treated as unset: "" would otherwise accept `Bearer ` (no token).
    let api_token = env.secret("API_TOKEN").ok().map(|s| s.to_string()).filter(|t| !t.is_empty());
    Ok(Config { policies, pools, proxy, test_mode, api_token })
}

/// The configuration, or a 500 `config_error` naming what is wrong with it.
pub fn config(env: &Env) -> Result<Rc<Config>, ApiError> {
    CONFIG.with(|c| {
        let mut c = c.borrow_mut();
        let parsed = c.get_or_insert_with(|| read(env).map(Rc::new));
        parsed.clone().map_err(|e| ApiError::new(500, "config_error", format!("invalid configuration: {e}")))
    })
}
