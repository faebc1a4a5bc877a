//! Checks a wrangler.toml's vars with the Worker's own configuration parser, as a production
//! build reads them, so that a bad `POLICIES`, `POOLS`, `PROXY` or `API_PREFIX`, or `TEST_MODE`
//! on (refused beside `ORIGIN` or `API_TOKEN`, and in any production build), fails the build (`scripts/build.sh`, which `make run`,
//! `wrangler dev` and `wrangler deploy` run) instead of answering `config_error` once
//! deployed.
//!
//! usage: cargo run -p tollgate-worker --example check_config -- [wrangler.toml]
//!
//! Checks `[vars]` and every `[env.<name>.vars]` (an environment's vars replace the top
//! level's), each with the `.dev.vars` file next to the config laid over it when there is one
//! (as `wrangler dev` does). Exits 1 naming the var, the field and the reason.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value};
use tollgate_worker::config::vars::read_config_for;

/// `KEY=value` lines of a `.dev.vars` file (quotes around a value removed, `#` comments).
fn dev_vars(path: &Path) -> Map<String, Value> {
    let Ok(text) = std::fs::read_to_string(path) else { return Map::new() };
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let (k, v) = line.split_once('=')?;
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            Some((k.trim().to_string(), Value::String(v.to_string())))
        })
        .collect()
}

/// Checks one set of vars; the error names where they are.
fn check(place: &str, vars: &Map<String, Value>, overrides: &Map<String, Value>) -> Result<String, String> {
    let mut all = vars.clone();
    all.extend(overrides.clone());
    let token = all.get("API_TOKEN").and_then(Value::as_str).map(str::to_string);
    // The vars of a production build: `wrangler dev` and `wrangler deploy` build that one.
    let cfg = read_config_for(&|name| all.get(name).cloned(), token, false).map_err(|e| format!("{place}: {e}"))?;
    Ok(format!(
        "{place}: {} policies, {} pools{}",
        cfg.policies.len(),
        cfg.pools.len(),
        if cfg.proxy.is_some() { ", proxy mode" } else { "" }
    ))
}

fn run(config: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(config).map_err(|e| format!("cannot read {}: {e}", config.display()))?;
    let doc: Value = toml::from_str(&text).map_err(|e| format!("{}: {e}", config.display()))?;
    let overrides = dev_vars(&config.with_file_name(".dev.vars"));
    let empty = Map::new();
    let mut checked = vec![check("[vars]", doc["vars"].as_object().unwrap_or(&empty), &overrides)?];
    if let Some(envs) = doc["env"].as_object() {
        for (name, env) in envs {
            // An environment without vars of its own has none (wrangler does not inherit them);
            // deploying it would fail at the first request, so it fails here too.
            let vars = env["vars"].as_object().unwrap_or(&empty);
            checked.push(check(&format!("[env.{name}.vars]"), vars, &overrides)?);
        }
    }
    Ok(checked)
}

fn main() -> ExitCode {
    let config = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("wrangler.toml"));
    match run(&config) {
        Ok(checked) => {
            eprintln!("configuration checked ({}): {}", config.display(), checked.join("; "));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("invalid configuration in {}: {e}", config.display());
            ExitCode::FAILURE
        }
    }
}
