//! Reads the [`Config`] from the Worker's environment, once per isolate.
//!
//! Vars cannot change under a running isolate (a new deployment or `wrangler dev` restart
//! starts new isolates), so the parsed configuration is kept for the isolate's lifetime. A
//! broken configuration is kept too, as its error, and every request answers it (the build
//! refuses one first: see `vars`).

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;
use worker::Env;

use crate::base::errors::ApiError;
use crate::config::settings::Config;
use crate::config::vars::read_config;

thread_local! {
    static CONFIG: RefCell<Option<Result<Rc<Config>, String>>> = const { RefCell::new(None) };
}

/// A var's value: an object var as JSON, a string var as a JSON string.
fn var(env: &Env, name: &str) -> Option<Value> {
    match env.object_var::<Value>(name) {
        Ok(v) => Some(v),
        // A string var is not an object binding: read it as text.
        Err(_) => env.var(name).ok().map(|s| Value::String(s.to_string())),
    }
}

fn read(env: &Env) -> Result<Config, String> {
    let token = env.secret("API_TOKEN").ok().map(|s| s.to_string());
    read_config(&|name| var(env, name), token)
}

/// The configuration, or a 500 `config_error` naming what is wrong with it.
pub fn config(env: &Env) -> Result<Rc<Config>, ApiError> {
    CONFIG.with(|c| {
        let mut c = c.borrow_mut();
        let parsed = c.get_or_insert_with(|| read(env).map(Rc::new));
        parsed.clone().map_err(|e| ApiError::new(500, "config_error", format!("invalid configuration: {e}")))
    })
}
