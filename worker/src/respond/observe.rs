//! What each decision leaves behind for the operator: a data point in Workers Analytics
//! Engine when the optional `ANALYTICS` binding is configured (absent: nothing is written), and
//! a JSON log line for a sampled share of denials (`DENIAL_LOG_SAMPLE_RATE`).
//!
//! Data point (dataset of the `ANALYTICS` binding), one per `/v1/limit`, `/v1/peek` and proxied
//! request: `index1` the policy; `blob1` policy, `blob2` outcome (`allowed`, `denied`,
//! `fail-open`, `fail-closed`), `blob3` the route (`limit`, `peek`, `proxy`), `blob4` the
//! limit the figures are about; `double1` cost, `double2` remaining, `double3` retryAfter
//! (ms). Denials per policy per minute (worker/README.md, "Observability"):
//!
//! ```sql
//! SELECT toStartOfInterval(timestamp, INTERVAL '1' MINUTE) AS minute, blob1 AS policy,
//!        SUM(_sample_interval) AS denials
//! FROM tollgate WHERE blob2 = 'denied' AND timestamp > NOW() - INTERVAL '1' HOUR
//! GROUP BY minute, policy ORDER BY minute, policy
//! ```
//!
//! Neither ever holds a raw key: logs carry [`key_hash`].

use serde_json::json;
use sha2::{Digest, Sha256};
use worker::{AnalyticsEngineDataPointBuilder, Env};

use crate::base::log;
use crate::config::settings::{Config, PolicyConfig};
use crate::respond::answer::Answer;

/// The optional Analytics Engine binding in wrangler.toml.
pub const ANALYTICS: &str = "ANALYTICS";

/// Which endpoint decided.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `POST /v1/limit`.
    Limit,
    /// `POST /v1/peek` (nothing counted).
    Peek,
    /// A proxied request.
    Proxy,
}

impl Route {
    /// The name in data points and logs.
    pub fn name(self) -> &'static str {
        match self {
            Route::Limit => "limit",
            Route::Peek => "peek",
            Route::Proxy => "proxy",
        }
    }
}

/// A short hash of (policy, key) that lets logs follow one key without holding it: the first
/// 64 bits of SHA-256 over the API token (when set), the policy and the key. Keyed by the
/// token, a hash cannot be matched against guessed keys (every IPv4 address, say) without it.
pub fn key_hash(secret: Option<&str>, policy: &str, key: &str) -> String {
    let mut h = Sha256::new();
    if let Some(s) = secret {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    }
    h.update((policy.len() as u64).to_le_bytes());
    h.update(policy.as_bytes());
    h.update(key.as_bytes());
    h.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The outcome's name: `allowed`, `denied`, or the fail mode when the object did not decide.
pub fn outcome(answer: &Answer) -> &'static str {
    if answer.core.would_allow == Some(false) {
        return "shadow-denied";
    }
    match (answer.allowed(), answer.core.reason.degraded().is_some()) {
        (true, false) => "allowed",
        (false, false) => "denied",
        (true, true) => "fail-open",
        (false, true) => "fail-closed",
    }
}

/// Whether to log this denial, at `rate` (0 to 1) with `draw` uniform in [0, 1).
pub fn sampled(rate: f64, draw: f64) -> bool {
    rate >= 1.0 || draw < rate
}

/// Records one decision: the data point (binding present) and, for a sampled denial of a
/// counted hit, the log line.
pub fn decision(env: &Env, cfg: &Config, pc: &PolicyConfig, route: Route, key: &str, cost: u64, answer: &Answer) {
    let outcome = outcome(answer);
    let limit_name = answer.limit_name.as_str();
    let remaining = answer.core.decision.decision.remaining as f64;
    let retry_after = answer.core.retry_after_ms() as f64;
    if let Ok(dataset) = env.analytics_engine(ANALYTICS) {
        let point = AnalyticsEngineDataPointBuilder::new()
            .indexes([pc.name.as_str()])
            .blobs([pc.name.as_str(), outcome, route.name(), limit_name])
            .doubles([cost as f64, remaining, retry_after])
            .build();
        if let Err(e) = dataset.write_data_point(&point) {
            log::error("analytics_write_failed", json!({ "message": e.to_string() }));
        }
    }
    if (outcome == "denied" || outcome == "shadow-denied")
        && route != Route::Peek
        && sampled(cfg.denial_log_sample_rate, worker::js_sys::Math::random())
    {
        log::warn(
            if outcome == "denied" { "denied" } else { "shadow_denied" },
            json!({
                "policy": pc.name,
                "limit": limit_name,
                "keyHash": key_hash(cfg.api_token.as_deref(), &pc.name, key),
                "route": route.name(),
                "cost": cost,
                "retryAfterMs": retry_after,
                "sampleRate": cfg.denial_log_sample_rate,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hashes_follow_a_key_without_holding_it() {
        let a = key_hash(None, "api", "ip:203.0.113.7");
        assert_eq!(a.len(), 16);
        assert!(!a.contains("203"));
        assert_eq!(a, key_hash(None, "api", "ip:203.0.113.7"), "stable");
        assert_ne!(a, key_hash(None, "login", "ip:203.0.113.7"), "per policy");
        assert_ne!(a, key_hash(Some("t0ken"), "api", "ip:203.0.113.7"), "keyed by the token");
        assert_ne!(key_hash(None, "ab", "c"), key_hash(None, "a", "bc"), "unambiguous");
    }

    #[test]
    fn sampling_takes_the_rate_s_share() {
        assert!(sampled(1.0, 0.999_999));
        assert!(!sampled(0.0, 0.0));
        assert!(sampled(0.25, 0.2) && !sampled(0.25, 0.3));
    }
}
