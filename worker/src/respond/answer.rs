//! Turning what deciding a hit came to into an HTTP answer. The core builds the answer
//! (`tollgate::answer`: the decision, its reason, status, headers and the Worker's JSON body);
//! this file picks the core's constructor for each [`Outcome`], serialises the answer, and adds
//! the Worker's own markers (`Tollgate-Degraded`, `Tollgate-Cache`) and route fields
//! (`reservation`, `refunded`, ...). It sets no `allowed` and computes no figure.

use serde_json::Value;
use tollgate::access::Listed;
use tollgate::answer::{self as core, Answer as CoreAnswer, Status};
use tollgate::{Nanos, PolicyDecision};
use worker::Response;

pub use crate::base::http::json_response;

pub use crate::calls::do_client::Failure;
use crate::config::settings::{FailMode, PolicyConfig};

/// The header marking an answer the Durable Object did not make.
pub const DEGRADED_HEADER: &str = "Tollgate-Degraded";
/// The header marking a denial answered from the isolate's blocked-key cache.
pub const CACHE_HEADER: &str = "Tollgate-Cache";
pub use tollgate::answer::SHADOW_HEADER;

/// How long a failure mode's denial and contention's ask the client to wait, at least.
pub const UNMADE_RETRY: Nanos = Nanos::from_millis(1000);

/// An answer as it is sent: the core's answer, serialised. Proxy mode reuses the status and
/// headers.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The core's answer (decision, reason, figures).
    pub core: CoreAnswer,
    /// The HTTP status: the core's, or the route's for a denial ([`Answer::set_deny_status`]).
    pub status: u16,
    /// The core's headers, then the Worker's markers.
    pub headers: Vec<(&'static str, String)>,
    /// The core's JSON body ([`CoreAnswer::worker_json`]).
    json: String,
    /// The route's own fields after the core's.
    extra: Vec<(&'static str, Value)>,
    /// The limit the figures are about, for logs and data points; empty when no limit decided.
    pub limit_name: String,
}

impl Answer {
    /// Whether the hit may proceed.
    pub fn allowed(&self) -> bool {
        self.core.allowed()
    }

    /// Answers a denial (a 429 or a deny list's 403) with `status` instead: 200 on the
    /// decision API by default. Allowed answers and a closed failure mode's 503 keep theirs.
    pub fn set_deny_status(&mut self, status: u16) {
        if self.status == 429 || self.status == 403 {
            self.status = status;
        }
    }

    /// This answer with the route's field `name` after the core's.
    pub fn with(mut self, name: &'static str, value: Value) -> Answer {
        self.extra.push((name, value));
        self
    }

    /// The JSON body: the core's fields, then the route's.
    pub fn body(&self) -> String {
        if self.extra.is_empty() {
            return self.json.clone();
        }
        let mut s = self.json.clone();
        s.pop();
        for (name, value) in &self.extra {
            s.push_str(&format!(",{}:{value}", Value::from(*name)));
        }
        s.push('}');
        s
    }

    /// The JSON response.
    pub fn to_response(&self) -> Response {
        json_response(self.status, &self.headers, self.body())
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

/// The answer to `outcome` over `keys` for a hit of `cost`: the one place a decision becomes
/// status, headers and body, admitted in shadow mode (`tollgate::answer::Answer::shadowed`)
/// unless a list answered.
pub fn answer(pc: &PolicyConfig, outcome: &Outcome, keys: &[String], cost: u64) -> Answer {
    let (mut made, now, estimate, marker) = core_answer(pc, outcome, keys, cost);
    if pc.controls.shadow && !matches!(outcome, Outcome::Listed(..)) {
        made = made.shadowed();
    }
    serialise(pc, made, now, keys, estimate, marker)
}

/// The answer to `outcome` as the limits (or lists) gave it, never admitted by shadow mode:
/// the figures after a refund.
pub fn as_enforced(pc: &PolicyConfig, outcome: &Outcome, keys: &[String], cost: u64) -> Answer {
    let (made, now, estimate, marker) = core_answer(pc, outcome, keys, cost);
    serialise(pc, made, now, keys, estimate, marker)
}

/// The answer to a decision over `keys` made at `now` (the limits' answer, not shadowed).
pub fn of_keys(pc: &PolicyConfig, d: &PolicyDecision, now: Nanos, keys: &[String]) -> Answer {
    serialise(pc, CoreAnswer::decided(d.clone(), Status::default()), now, keys, false, None)
}

/// The core's answer to `outcome`, its instant, whether its figures are an estimate (not the
/// key's own object's: the blocked-key cache, the sync and leased modes) and the Worker's
/// marker header. A store that did not decide answers over fresh keys' figures
/// (`tollgate::answer::fresh`): the failure mode's (`"degraded":"unavailable"`), or
/// contention's, a denial whatever the fail mode (`"degraded":"contention"`, the npm Redis
/// store's answer to the same thing: busy is never taken for an outage).
fn core_answer(
    pc: &PolicyConfig,
    outcome: &Outcome,
    keys: &[String],
    cost: u64,
) -> (CoreAnswer, Nanos, bool, Option<(&'static str, String)>) {
    let decided = |d: &PolicyDecision| CoreAnswer::decided(d.clone(), Status::default());
    match outcome {
        Outcome::Listed(listed, now) => {
            let limit = pc.policy.limits().first().map_or(0, |l| tollgate::Algorithm::limit(l.algorithm()));
            (CoreAnswer::listed(*listed, limit, *now), *now, false, None)
        }
        Outcome::Decided(d, now) => (decided(d), *now, false, None),
        Outcome::Estimated(d, now) => (decided(d), *now, true, None),
        Outcome::Cached(d, now) => (decided(d), *now, true, Some((CACHE_HEADER, "hit".to_string()))),
        Outcome::Unmade(why, now) => {
            let fresh = core::fresh(&pc.policy, keys.len(), *now, cost);
            if *why == Failure::Contention {
                let marker = Some((DEGRADED_HEADER, "contention".to_string()));
                return (CoreAnswer::contention(fresh, UNMADE_RETRY), *now, false, marker);
            }
            let open = pc.on_error == FailMode::Open;
            let marker = format!("fail-{};reason=\"{}\"", pc.on_error.name(), why.name());
            (CoreAnswer::degraded(fresh, open, UNMADE_RETRY, true), *now, false, Some((DEGRADED_HEADER, marker)))
        }
    }
}

/// The core's answer `a` at `now` over `keys`, serialised: its headers (about the binding
/// key, jittered as the policy says), the Worker's `marker`, and its JSON body.
fn serialise(
    pc: &PolicyConfig,
    a: CoreAnswer,
    now: Nanos,
    keys: &[String],
    estimate: bool,
    marker: Option<(&'static str, String)>,
) -> Answer {
    let key = keys.get(a.decision.binding.key).map_or("", String::as_str);
    let options = pc.headers.options(key, a.allowed(), worker::js_sys::Math::random);
    let mut headers = a.headers(&pc.policy, now, &options);
    headers.extend(marker);
    Answer {
        status: a.status,
        json: a.worker_json(&pc.name, &pc.policy, estimate, keys),
        limit_name: a.limit_name(&pc.policy).unwrap_or("").to_string(),
        headers,
        extra: Vec::new(),
        core: a,
    }
}
