//! HTTP headers from a decision.
//!
//! - IETF draft-ietf-httpapi-ratelimit-headers-10: `RateLimit-Policy: "name";q=100;w=60` and
//!   `RateLimit: "name";r=50;t=30`, Structured Field Lists with one member per limit of the
//!   policy (`q` quota units per `w` seconds; `r` units remaining, `t` seconds until reset).
//! - `Retry-After` (whole seconds, rounded up) on a denial.
//! - The legacy `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` trio
//!   (reset as Unix seconds, rounded up, as GitHub and express-rate-limit send it), for the
//!   limit the decision is bound by.
//!
//! Seconds are always rounded up, so a client that waits what the headers say is never early.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::algorithm::Algorithm;
use crate::decision::Decision;
use crate::policy::{Policy, PolicyDecision};
use crate::time::Nanos;

/// One limit's part in the headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitStatus<'a> {
    /// The limit's name (a Structured Field string).
    pub name: &'a str,
    /// Quota units advertised per window (`q`).
    pub quota: u64,
    /// The window advertised (`w`).
    pub window: Nanos,
    /// The limit's answer for the key the headers are about.
    pub decision: Decision,
}

/// A Structured Field string: quoted, with `\` and `"` escaped. Other characters are
/// replaced by `?`, since an sf-string holds printable ASCII only.
fn sf_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push('"');
}

/// The headers for `limits` (one member each) and the `summary` decision, at `now`, as
/// `(name, value)` pairs in a stable order.
///
/// ```
/// use tollgate::{headers::{headers, LimitStatus}, Decision, Nanos};
/// let d = Decision { allowed: true, limit: 100, remaining: 50, reset_at: Nanos::from_secs(1030), retry_after: Nanos::ZERO };
/// let h = headers(&[LimitStatus { name: "api", quota: 100, window: Nanos::from_secs(60), decision: d }], &d, Nanos::from_secs(1000));
/// assert_eq!(h[0], ("RateLimit-Policy", "\"api\";q=100;w=60".to_string()));
/// assert_eq!(h[1], ("RateLimit", "\"api\";r=50;t=30".to_string()));
/// assert_eq!(h[4], ("X-RateLimit-Reset", "1030".to_string()));
/// ```
pub fn headers(limits: &[LimitStatus<'_>], summary: &Decision, now: Nanos) -> Vec<(&'static str, String)> {
    let mut policy = String::new();
    let mut remaining = String::new();
    for (i, l) in limits.iter().enumerate() {
        if i > 0 {
            policy.push_str(", ");
            remaining.push_str(", ");
        }
        sf_string(&mut policy, l.name);
        let _ = write!(policy, ";q={};w={}", l.quota, l.window.as_secs_ceil());
        sf_string(&mut remaining, l.name);
        let _ = write!(remaining, ";r={};t={}", l.decision.remaining, l.decision.reset_after(now).as_secs_ceil());
    }
    let mut out = alloc::vec![
        ("RateLimit-Policy", policy),
        ("RateLimit", remaining),
        ("X-RateLimit-Limit", format!("{}", summary.limit)),
        ("X-RateLimit-Remaining", format!("{}", summary.remaining)),
        ("X-RateLimit-Reset", format!("{}", summary.reset_at.as_secs_ceil())),
    ];
    if !summary.allowed {
        out.push(("Retry-After", format!("{}", summary.retry_after.as_secs_ceil().max(1))));
    }
    out
}

impl Policy {
    /// The headers for a decision of this policy: one member per limit, for the key that
    /// bound the decision.
    pub fn headers(&self, decision: &PolicyDecision, now: Nanos) -> Vec<(&'static str, String)> {
        let key = decision.binding.key;
        let limits: Vec<LimitStatus<'_>> = decision
            .limits
            .iter()
            .filter(|l| l.at.key == key)
            .filter_map(|l| {
                let limit = self.limits().get(l.at.limit)?;
                let (quota, window) = limit.algorithm().advertised_quota();
                Some(LimitStatus { name: limit.name(), quota, window, decision: l.decision })
            })
            .collect();
        headers(&limits, &decision.decision, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_as_structured_field_strings() {
        let mut s = String::new();
        sf_string(&mut s, "a\"b\\c\u{e9}");
        assert_eq!(s, "\"a\\\"b\\\\c?\"");
    }

    #[test]
    fn a_denial_carries_retry_after_rounded_up() {
        let d = Decision {
            allowed: false,
            limit: 10,
            remaining: 0,
            reset_at: Nanos::from_millis(1_500),
            retry_after: Nanos::from_millis(1),
        };
        let h = headers(&[], &d, Nanos::ZERO);
        assert!(h.contains(&("Retry-After", "1".into())));
        assert!(h.contains(&("X-RateLimit-Reset", "2".into())));
    }
}
