//! Turning decisions into HTTP answers: the JSON body clients read and the headers the core
//! computes (draft-10 `RateLimit`/`RateLimit-Policy`, legacy `X-RateLimit-*`, `Retry-After`).

use serde_json::{json, Value};
use tollgate::access::Listed;
use tollgate::{Decision, Nanos, PolicyDecision};
use worker::Response;

pub use crate::base::http::json_response;

pub use crate::calls::do_client::Failure;
use crate::config::settings::{FailMode, PolicyConfig};

/// The header marking an answer the Durable Object did not make.
pub const DEGRADED_HEADER: &str = "Tollgate-Degraded";
/// The header marking a denial answered from the isolate's blocked-key cache.
pub const CACHE_HEADER: &str = "Tollgate-Cache";
/// The header that marks an answer decided in shadow mode: `allow` or `deny`, what
/// enforcement would have answered.
pub const SHADOW_HEADER: &str = "Tollgate-Shadow";

/// An answer before it becomes a [`Response`]: proxy mode reuses the status and headers.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// 200 allowed, 429 denied, 503 failed closed.
    pub status: u16,
    /// The JSON body.
    pub body: Value,
    /// Headers to send (rate-limit headers and markers).
    pub headers: Vec<(&'static str, String)>,
    /// The limit the figures are about (the one that denied, or the one with the least left),
    /// for logs and data points; empty when no limit decided (a degraded answer).
    pub limit_name: String,
}

impl Answer {
    /// Whether the hit may proceed.
    pub fn allowed(&self) -> bool {
        self.body["allowed"].as_bool().unwrap_or(false)
    }

    /// Answers a denial (a 429 decision) with `status` instead: 200 on the decision API by
    /// default. Allowed answers and degraded ones (fail closed is 503) keep theirs; a deny
    /// list's denial (403, the proxy's status for it) is a denial like any other here.
    pub fn set_deny_status(&mut self, status: u16) {
        if self.status == 429 || self.status == 403 {
            self.status = status;
        }
    }

    /// The JSON response.
    pub fn to_response(&self) -> Response {
        json_response(self.status, &self.headers, self.body.to_string())
    }
}

/// What deciding a hit came to, before it is an answer: the one input of [`answer`].
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The key's Durable Object decided, or the core over the keys' states under their leases.
    Decided(PolicyDecision, Nanos),
    /// This isolate decided from what it last saw (the synced and leased modes): an estimate.
    Estimated(PolicyDecision, Nanos),
    /// The blocked-key cache answered with the object's last decision: an estimate too.
    Cached(PolicyDecision, Nanos),
    /// No store decided: the policy's fail mode answers (contention is a denial).
    Unmade(Failure, Nanos),
    /// A list answered; the limits were not asked.
    Listed(Listed, Nanos),
}

/// The answer to `outcome` over `keys`: the one place a decision becomes status, headers and
/// body, admitted in shadow mode ([`shadowed`]) unless a list answered.
pub fn answer(pc: &PolicyConfig, outcome: &Outcome, keys: &[String]) -> Answer {
    match outcome {
        Outcome::Listed(..) => as_enforced(pc, outcome, keys),
        _ => shadowed(pc, as_enforced(pc, outcome, keys)),
    }
}

/// The answer to `outcome` as the limits (or lists) gave it, never admitted by shadow mode:
/// the figures after a refund.
pub fn as_enforced(pc: &PolicyConfig, outcome: &Outcome, keys: &[String]) -> Answer {
    match outcome {
        Outcome::Listed(listed, now) => self::listed(pc, *listed, *now),
        Outcome::Decided(d, now) => of_keys(pc, d, *now, keys),
        Outcome::Estimated(d, now) => estimate(of_keys(pc, d, *now, keys)),
        Outcome::Cached(d, now) => {
            let mut answer = estimate(of_keys(pc, d, *now, keys));
            answer.headers.push((CACHE_HEADER, "hit".to_string()));
            answer
        }
        Outcome::Unmade(why, now) => degraded(pc, pc.on_error, *why, *now),
    }
}

/// The answer to a decision over `keys`: as one key is answered, or several.
pub fn of_keys(pc: &PolicyConfig, d: &PolicyDecision, now: Nanos, keys: &[String]) -> Answer {
    match keys {
        [key] => decision(pc, d, now, key),
        _ => several(pc, d, now, keys),
    }
}

/// The answer to a decision made at `now`: 200 when allowed, 429 when denied.
///
/// Body: `allowed`, `limit`, `remaining`, `resetAt` (Unix ms, rounded up), `retryAfter` (ms,
/// rounded up, 0 when allowed), `policy`, `blockedBy` (the limit that denied the hit, null
/// when allowed: the npm decision's field), `limitName` (the limit the figures are about, so
/// a client never guesses it; `tollgate::answer::Answer::worker_json` writes the same), and `estimate`: false, the key's Durable Object
/// decided (see [`estimate`]). The figures are the binding limit's: the one that blocked, or
/// the one with the least left.
pub fn decision(pc: &PolicyConfig, d: &PolicyDecision, now: Nanos, key: &str) -> Answer {
    let s = &d.decision;
    let mut body = json!({
        "allowed": d.allowed,
        "limit": s.limit,
        "remaining": s.remaining,
        "resetAt": s.reset_at.as_millis_ceil(),
        "retryAfter": if d.allowed { 0 } else { s.retry_after.as_millis_ceil() },
        "policy": pc.name,
        "blockedBy": if d.allowed { None } else { Some(pc.policy.limit_name(d.binding)) },
        "limitName": pc.policy.limit_name(d.binding),
        "estimate": false,
    });
    if d.penalty {
        body["penalty"] = Value::Bool(true);
    }
    // In shadow mode the hit is admitted (controls.rs): the core writes an admitted hit's
    // headers over enforcement's figures, without Retry-After or jitter, as npm's shadow
    // decisions get them.
    let admitted;
    let shown = if pc.controls.shadow && !d.allowed {
        admitted = PolicyDecision { allowed: true, decision: Decision { allowed: true, ..d.decision }, ..d.clone() };
        &admitted
    } else {
        d
    };
    let options = pc.headers.options(key, shown.allowed, worker::js_sys::Math::random);
    Answer {
        status: if d.allowed { 200 } else { 429 },
        body,
        headers: pc.policy.headers(shown, now, &options),
        limit_name: pc.policy.limit_name(d.binding).to_string(),
    }
}

/// The answer to a decision over `keys`: the one-key answer's fields about the binding
/// (key, limit) pair, and `limits`, every pair's own answer with its `key`, as npm's decision
/// for several keys has them.
pub fn several(pc: &PolicyConfig, d: &PolicyDecision, now: Nanos, keys: &[String]) -> Answer {
    let binding_key = keys.get(d.binding.key).map_or("", String::as_str);
    let mut a = decision(pc, d, now, binding_key);
    let limits: Vec<Value> = d
        .limits
        .iter()
        .map(|l| {
            let x = &l.decision;
            json!({
                "name": pc.policy.limit_name(l.at),
                "key": keys.get(l.at.key),
                "allowed": x.allowed,
                "limit": x.limit,
                "remaining": x.remaining,
                "resetAt": x.reset_at.as_millis_ceil(),
                "retryAfter": if x.allowed { 0 } else { x.retry_after.as_millis_ceil() },
                "nextUnitAfter": x.next_unit_after.as_millis_ceil(),
            })
        })
        .collect();
    a.body["limits"] = Value::Array(limits);
    a
}

/// The answer for a hit a list answered (decide/controls.rs). A listed hit is counted
/// nowhere and its answer carries no rate-limit headers (no limit applied to it); `reason` says
/// which list answered (upstash/ratelimit's `reason`), and a denied one gets 403 from the proxy.
pub fn listed(pc: &PolicyConfig, listed: Listed, now: Nanos) -> Answer {
    let allowed = listed == Listed::Allow;
    let limit = pc.policy.limits().first().map_or(0, |l| tollgate::Algorithm::limit(l.algorithm()));
    let body = json!({
        "allowed": allowed,
        "limit": limit,
        "remaining": if allowed { limit } else { 0 },
        "resetAt": now.as_millis_ceil(),
        "retryAfter": 0,
        "policy": pc.name,
        "blockedBy": Value::Null,
        "estimate": false,
        "reason": listed.reason(),
    });
    Answer { status: if allowed { 200 } else { 403 }, body, headers: Vec::new(), limit_name: String::new() }
}

/// In shadow mode, `answer` as enforcement made it, but admitting the hit: `allowed: true`,
/// `shadow: true` and `wouldAllow` (what enforcement answered); its figures, `blockedBy` and
/// rate-limit headers stay enforcement's (written as an admitted hit's, respond.rs), and a
/// failed object's `Retry-After` goes too (nothing is to be retried).
/// What was counted is what enforcement counted: a would-be denial counts nowhere.
pub fn shadowed(pc: &PolicyConfig, mut answer: Answer) -> Answer {
    if !pc.controls.shadow {
        return answer;
    }
    let would_allow = answer.allowed();
    answer.body["allowed"] = Value::Bool(true);
    answer.body["shadow"] = Value::Bool(true);
    answer.body["wouldAllow"] = Value::Bool(would_allow);
    answer.status = 200;
    answer.headers.retain(|(name, _)| *name != "Retry-After");
    answer.headers.push((SHADOW_HEADER, if would_allow { "allow" } else { "deny" }.to_string()));
    answer
}

/// Marks an answer the key's Durable Object did not make (the blocked-key cache, the sync
/// modes' local decisions): `"estimate": true`. Its `allowed` stands; its figures are the
/// object's as of the state this isolate last saw, and other isolates may have taken more
/// since (so `retryAfter` may be shorter and `remaining` larger than the object's).
pub fn estimate(mut answer: Answer) -> Answer {
    answer.body["estimate"] = Value::Bool(true);
    answer
}

/// The answer when the Durable Object failed: allowed (fail open, 200) or denied (fail
/// closed, 503 with `Retry-After: 1`), marked `Tollgate-Degraded: fail-open;reason="timeout"`
/// and `"degraded":"unavailable"` in the body (the npm stores' word for a store that failed;
/// the header says how). Its figures are not real: `limit` is the first
/// limit's, `remaining` is 0 and `resetAt` is now. No `RateLimit` header is sent, since
/// there is no state to describe.
pub fn degraded(pc: &PolicyConfig, mode: FailMode, why: Failure, now: Nanos) -> Answer {
    if why == Failure::Contention {
        return contention(pc, now);
    }
    let allowed = mode == FailMode::Open;
    let marker = format!("fail-{};reason=\"{}\"", mode.name(), why.name());
    unmade(pc, allowed, if allowed { 200 } else { 503 }, now, "unavailable", marker)
}

/// The answer when other requests kept the key busy past what the core's store protocol waits
/// (`tollgate::store_protocol::Retry::BUSY_OBJECT`, or its several-keys rounds):
/// a denial (429, a 200 on the decision API) marked `"degraded":"contention"`, the npm Redis
/// store's answer to the same thing. Contention is never taken for an outage.
pub fn contention(pc: &PolicyConfig, now: Nanos) -> Answer {
    unmade(pc, false, 429, now, "contention", "contention".to_string())
}

/// An answer no store made: the first limit's `limit`, nothing remaining, reset `now`,
/// `"degraded"` saying why and the [`DEGRADED_HEADER`] `marker`; a denial asks to come back
/// in a second.
fn unmade(pc: &PolicyConfig, allowed: bool, status: u16, now: Nanos, degraded: &str, marker: String) -> Answer {
    let limit = pc.policy.limits().first().map_or(0, |l| tollgate::Algorithm::limit(l.algorithm()));
    let body = json!({
        "allowed": allowed,
        "limit": limit,
        "remaining": 0,
        "resetAt": now.as_millis_ceil(),
        "retryAfter": if allowed { 0 } else { 1000 },
        "policy": pc.name,
        "degraded": degraded,
    });
    let mut headers = vec![(DEGRADED_HEADER, marker)];
    if !allowed {
        headers.push(("Retry-After", "1".to_string()));
    }
    Answer { status, body, headers, limit_name: String::new() }
}
