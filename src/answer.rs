//! The answer a client gets for a hit: the decision, why it was made ([`Reason`], and whether
//! shadow mode admitted it), the HTTP status, the headers and the body, built here once by
//! pure constructors and serialised by every edge (the wasm modules for the npm limiters and
//! middlewares, the Worker's JSON). No edge sets `allowed` or computes a figure: a listed hit,
//! a shadowed one, a failure mode's and contention's are answers of this module.
//!
//! ```
//! use tollgate::answer::{Answer, Body, Reason};
//! use tollgate::access::Listed;
//! use tollgate::Nanos;
//!
//! // A deny-listed hit under a limit of 10: nothing counted, a 403.
//! let a = Answer::listed(Listed::Deny, 10, Nanos::from_millis(5));
//! assert!(!a.allowed());
//! assert_eq!(a.status, 403);
//! assert_eq!(a.reason, Reason::Listed(Listed::Deny));
//! assert_eq!(a.decision.decision.remaining, 0);
//! // Shadow mode admits it, keeping enforcement's figures and saying what it would answer.
//! let s = a.shadowed();
//! assert!(s.allowed());
//! assert_eq!(s.would_allow, Some(false));
//! assert_eq!(s.status, 200);
//! assert_eq!(s.body(&Body::Message("no")), "");
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::access::Listed;
use crate::limit_decisions::LimitDecisions;
use crate::policy::{LimitRef, Policy, PolicyDecision};
use crate::{Decision, Nanos};

/// Why an answer says what it says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The limits decided.
    Limits,
    /// A penalty's block denied the hit (`penalty: true`).
    Penalty,
    /// An allow or deny list answered, before any limit: nothing counted, no limit applied.
    Listed(Listed),
    /// The store could not decide (it is gone, failed or timed out): the failure mode
    /// answered, admitting (`failure: "open"`) or denying (`"closed"`) over a fresh key's
    /// figures (`degraded: "unavailable"`).
    Degraded {
        /// Whether the failure mode admits.
        open: bool,
    },
    /// The store answered, but other writers kept the key busy: a denial over the last
    /// figures it gave (`degraded: "contention"`). Busy is not broken: never the failure mode.
    Contention,
}

impl Reason {
    /// The decision's `reason` field (`allowList`, `denyList`), or `None` when the limits or a
    /// store's state answered.
    pub fn listed(self) -> Option<&'static str> {
        match self {
            Reason::Listed(l) => Some(l.reason()),
            _ => None,
        }
    }

    /// The decision's `degraded` field (`unavailable`, `contention`), or `None`.
    pub fn degraded(self) -> Option<&'static str> {
        match self {
            Reason::Degraded { .. } => Some("unavailable"),
            Reason::Contention => Some("contention"),
            _ => None,
        }
    }
}

/// The statuses an answer takes (the peers' defaults; a middleware's `statusCode` replaces
/// [`Status::denied`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// A denial by the limits, a penalty or contention: 429.
    pub denied: u16,
    /// A deny list's denial: 403.
    pub listed: u16,
    /// A closed failure mode's denial: 503.
    pub unavailable: u16,
}

impl Default for Status {
    fn default() -> Status {
        Status { denied: 429, listed: 403, unavailable: 503 }
    }
}

/// The body's shape: the peer whose shape a denial's body takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// express-rate-limit's and hono-rate-limiter's `message`, sent as it is (their default:
    /// [`DEFAULT_MESSAGE`]).
    Message(&'a str),
    /// @fastify/rate-limit's `errorResponseBuilder` default: `{statusCode, error, message}`,
    /// `message` saying `Rate limit exceeded, retry in <after>` (`after`: the wait as that
    /// package words it).
    Fastify {
        /// The wait, as @fastify/rate-limit words it (`1 minute`).
        after: &'a str,
    },
    /// The Worker's JSON decision, every answer (admitted ones too): [`Answer::worker_json`].
    Worker {
        /// The policy's name (`policy`).
        name: &'a str,
        /// The policy, for the limits' names.
        policy: &'a Policy,
        /// Whether the figures are an estimate (not the key's own object's).
        estimate: bool,
        /// The keys decided (several: the body lists every pair's answer in `limits`).
        keys: &'a [String],
    },
}

/// express-rate-limit's and hono-rate-limiter's default `message`.
pub const DEFAULT_MESSAGE: &str = "Too many requests, please try again later.";

/// The header marking an answer decided in shadow mode: `allow` or `deny`, what enforcement
/// would have answered.
pub const SHADOW_HEADER: &str = "Tollgate-Shadow";

/// One hit's answer. `decision` holds the figures the client is shown (for a listed or
/// degraded answer, the figures this module gives: no limit decided them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The decision the answer shows: `allowed` is the answer's (shadow mode's admission
    /// included), the figures enforcement's.
    pub decision: PolicyDecision,
    /// Why.
    pub reason: Reason,
    /// In shadow mode, what enforcement answered (`wouldAllow`); `None` when enforcing.
    pub would_allow: Option<bool>,
    /// The HTTP status: 200 admitted, otherwise [`Status`]'s for the reason.
    pub status: u16,
    /// Whether any limit decided the figures (false for a listed answer and a degraded one
    /// made without a policy): an answer no limit decided carries no rate-limit headers.
    pub limited: bool,
}

impl Answer {
    /// The answer of the limits' decision `d` (a penalty's when `d.penalty`).
    pub fn decided(d: PolicyDecision, status: Status) -> Answer {
        let reason = if d.penalty { Reason::Penalty } else { Reason::Limits };
        let code = if d.allowed { 200 } else { status.denied };
        Answer { decision: d, reason, would_allow: None, status: code, limited: true }
    }

    /// A listed hit's answer at `now`, under a policy whose first limit admits `limit` at
    /// once: nothing counted and no limit decided (no pairs, so no rate-limit header), all of
    /// `limit` left when allowed and none when denied, reset `now`, no wait; 200 or 403.
    pub fn listed(listed: Listed, limit: u64, now: Nanos) -> Answer {
        let d = listed_figures(listed, limit, now);
        let status = if d.allowed { 200 } else { Status::default().listed };
        Answer { decision: unlimited(d), reason: Reason::Listed(listed), would_allow: None, status, limited: false }
    }

    /// The failure mode's answer when the store could not decide, over `fresh`, the figures
    /// of a fresh key (the policy's peek of no state; with no policy known,
    /// [`crate::counted`]'s figures of none): admitted (200) when `open`, else a denial
    /// ([`Answer::denied`]'s figures, at least `closed_retry` to wait) with 503.
    pub fn degraded(fresh: PolicyDecision, open: bool, closed_retry: Nanos, limited: bool) -> Answer {
        let mut decision = fresh;
        if !open {
            deny(&mut decision, closed_retry);
        }
        let status = if open { 200 } else { Status::default().unavailable };
        Answer { decision, reason: Reason::Degraded { open }, would_allow: None, status, limited }
    }

    /// Contention's answer: a denial (429) over `last`, the figures of the last state the
    /// store answered with, at least `min_retry` to wait.
    pub fn contention(last: PolicyDecision, min_retry: Nanos) -> Answer {
        let mut decision = last;
        deny(&mut decision, min_retry);
        Answer { decision, reason: Reason::Contention, would_allow: None, status: Status::default().denied, limited: true }
    }

    /// This answer in shadow mode: admitted (200), `would_allow` what enforcement answered,
    /// every figure, the reason and `blockedBy` enforcement's. Nothing more is counted than
    /// enforcement counted: a would-be denial counts nowhere.
    pub fn shadowed(mut self) -> Answer {
        self.would_allow = Some(self.decision.allowed);
        self.decision.allowed = shadow_admits(self.decision.allowed);
        self.status = 200;
        self
    }

    /// Whether the hit may proceed.
    pub fn allowed(&self) -> bool {
        self.decision.allowed
    }

    /// The limit the figures are about (the one that denied, or the one with the least left),
    /// or `None` when no limit decided them.
    pub fn limit_name<'p>(&self, policy: &'p Policy) -> Option<&'p str> {
        if self.limited && !policy.limits().is_empty() {
            Some(policy.limit_name(self.decision.binding))
        } else {
            None
        }
    }

    /// `blockedBy`: the limit that denied the hit (enforcement's, so a shadowed denial names
    /// it), `None` when enforcement admitted it or when no limit decided.
    pub fn blocked_by<'p>(&self, policy: &'p Policy) -> Option<&'p str> {
        let denied = !self.would_allow.unwrap_or(self.decision.allowed);
        if denied { self.limit_name(policy) } else { None }
    }

    /// The headers of this answer at `now`: the core's rate-limit headers ([`crate::headers`])
    /// when a limit decided the figures, written as an admitted hit's in shadow mode (no
    /// `Retry-After`, no jitter); a denial no limit decided (a closed failure mode's without a
    /// policy's figures) only `Retry-After`, in whole seconds rounded up, when it has a wait;
    /// then the [`SHADOW_HEADER`] marker.
    pub fn headers(
        &self,
        policy: &Policy,
        now: Nanos,
        options: &crate::headers::HeaderOptions<'_>,
    ) -> Vec<(&'static str, String)> {
        let mut out = if self.limited && !self.decision.limits.is_empty() {
            let mut shown = self.decision.clone();
            shown.decision.allowed = shown.allowed;
            let o = crate::headers::HeaderOptions { jitter: if shown.allowed { None } else { options.jitter }, ..*options };
            policy.headers(&shown, now, &o)
        } else {
            let mut h = Vec::new();
            let wait = self.decision.decision.retry_after.as_nanos();
            if !self.allowed() && wait > 0 {
                let mut secs = String::new();
                crate::text::push_u64(&mut secs, wait.div_ceil(1_000_000_000));
                h.push(("Retry-After", secs));
            }
            h
        };
        if let Some(would) = self.would_allow {
            out.push((SHADOW_HEADER, String::from(if would { "allow" } else { "deny" })));
        }
        out
    }

    /// The body in `shape`: a denial's for the middlewares' shapes (empty when admitted: the
    /// request goes on), every answer's for the Worker's.
    pub fn body(&self, shape: &Body<'_>) -> String {
        match *shape {
            Body::Message(m) if !self.allowed() => String::from(m),
            Body::Fastify { after } if !self.allowed() => {
                let mut s = String::from("{\"statusCode\":");
                crate::text::push_u64(&mut s, u64::from(self.status));
                s.push_str(",\"error\":");
                json_str(&mut s, reason_phrase(self.status));
                s.push_str(",\"message\":");
                let mut m = String::from("Rate limit exceeded, retry in ");
                m.push_str(after);
                json_str(&mut s, &m);
                s.push('}');
                s
            }
            Body::Worker { name, policy, estimate, keys } => self.worker_json(name, policy, estimate, keys),
            _ => String::new(),
        }
    }

    /// `retryAfter` in whole milliseconds, rounded up: 0 when admitted by the limits (a
    /// shadowed answer keeps enforcement's wait, as its other figures).
    pub fn retry_after_ms(&self) -> u64 {
        if self.allowed() && self.would_allow.is_none() { 0 } else { self.decision.decision.retry_after.as_millis_ceil() }
    }

    /// The Worker's JSON decision (docs/worker.md), its fields [`WORKER_FIELDS`] in that
    /// order: `allowed`, `limit`, `remaining`, `resetAt` (epoch ms, rounded up), `retryAfter`
    /// ([`Answer::retry_after_ms`]), `policy`, `blockedBy`, `limitName` (the limit the figures
    /// are about, null when none decided them: a client never guesses it), `estimate`, and
    /// when they apply `penalty`, `reason`, `shadow` with `wouldAllow`, `degraded`, and with
    /// several `keys` `limits`: every (key, limit) pair's own answer ([`WORKER_LIMIT_FIELDS`]),
    /// as the npm decision for several keys has them.
    pub fn worker_json(&self, name: &str, policy: &Policy, estimate: bool, keys: &[String]) -> String {
        let d = &self.decision.decision;
        let mut s = String::from("{\"allowed\":");
        s.push_str(bool_str(self.allowed()));
        num(&mut s, ",\"limit\":", d.limit);
        num(&mut s, ",\"remaining\":", d.remaining);
        num(&mut s, ",\"resetAt\":", d.reset_at.as_millis_ceil());
        num(&mut s, ",\"retryAfter\":", self.retry_after_ms());
        s.push_str(",\"policy\":");
        json_str(&mut s, name);
        s.push_str(",\"blockedBy\":");
        opt_str(&mut s, self.blocked_by(policy));
        s.push_str(",\"limitName\":");
        opt_str(&mut s, self.limit_name(policy));
        s.push_str(",\"estimate\":");
        s.push_str(bool_str(estimate));
        if self.reason == Reason::Penalty {
            s.push_str(",\"penalty\":true");
        }
        if let Some(r) = self.reason.listed() {
            s.push_str(",\"reason\":");
            json_str(&mut s, r);
        }
        if let Some(w) = self.would_allow {
            s.push_str(",\"shadow\":true,\"wouldAllow\":");
            s.push_str(bool_str(w));
        }
        if let Some(g) = self.reason.degraded() {
            s.push_str(",\"degraded\":");
            json_str(&mut s, g);
        }
        if keys.len() > 1 {
            s.push_str(",\"limits\":[");
            for (i, l) in self.decision.limits.iter().enumerate() {
                let x = &l.decision;
                s.push_str(if i == 0 { "{\"name\":" } else { ",{\"name\":" });
                json_str(&mut s, policy.limit_name(l.at));
                s.push_str(",\"key\":");
                opt_str(&mut s, keys.get(l.at.key).map(String::as_str));
                s.push_str(",\"allowed\":");
                s.push_str(bool_str(x.allowed));
                num(&mut s, ",\"limit\":", x.limit);
                num(&mut s, ",\"remaining\":", x.remaining);
                num(&mut s, ",\"resetAt\":", x.reset_at.as_millis_ceil());
                num(&mut s, ",\"retryAfter\":", if x.allowed { 0 } else { x.retry_after.as_millis_ceil() });
                num(&mut s, ",\"nextUnitAfter\":", x.next_unit_after.as_millis_ceil());
                s.push('}');
            }
            s.push(']');
        }
        s.push('}');
        s
    }
}

/// The fields of the Worker's JSON decision ([`Answer::worker_json`]), in the order it writes
/// them: the first nine in every answer, the rest when they apply. The Worker's routes add
/// their own beside them (`reservation`; `refunded`; [`crate::reserve::SETTLED_FIELDS`]).
pub const WORKER_FIELDS: [&str; 15] = [
    "allowed", "limit", "remaining", "resetAt", "retryAfter", "policy", "blockedBy", "limitName", "estimate",
    "penalty", "reason", "shadow", "wouldAllow", "degraded", "limits",
];

/// How many of [`WORKER_FIELDS`] every Worker answer carries.
pub const WORKER_FIELDS_ALWAYS: usize = 9;

/// The fields of one pair's answer in the Worker's `limits` (several keys), in order.
pub const WORKER_LIMIT_FIELDS: [&str; 8] =
    ["name", "key", "allowed", "limit", "remaining", "resetAt", "retryAfter", "nextUnitAfter"];

/// The figures of `keys` fresh keys (at least one) under `policy` at `now` for `cost`: the
/// policy's peek of no state, which [`Answer::degraded`] and [`Answer::contention`] stand on
/// when no store's state is known; a cost the policy refuses is peeked as 1, and a policy
/// that refuses that too (none does) gives [`crate::counted`]'s figures of none.
pub fn fresh(policy: &Policy, keys: usize, now: Nanos, cost: u64) -> PolicyDecision {
    let none: Vec<Option<crate::PolicyState>> = alloc::vec![None; keys.max(1)];
    policy
        .peek(&none, now, cost)
        .or_else(|_| policy.peek(&none, now, 1))
        .unwrap_or_else(|_| unlimited(crate::counted::counted(0, 0, now, now)))
}

/// Whether shadow mode admits a hit enforcement answered `enforced`: always (it decides and
/// counts as enforcement would, and never blocks). [`Answer::shadowed`]'s rule, for an edge
/// that keeps its decision as it is and only marks it.
pub const fn shadow_admits(_enforced: bool) -> bool {
    true
}

/// `d` with no pairs: figures no limit decided.
fn unlimited(d: Decision) -> PolicyDecision {
    PolicyDecision {
        allowed: d.allowed,
        decision: d,
        binding: LimitRef { key: 0, limit: 0 },
        limits: LimitDecisions::from(Vec::new()),
        penalty: false,
    }
}

/// A listed hit's figures ([`Answer::listed`]'s) at `now` under a first limit of `limit`:
/// all of `limit` left when allowed and none when denied, reset `now`, no wait.
pub fn listed_figures(listed: Listed, limit: u64, now: Nanos) -> Decision {
    let allowed = listed == Listed::Allow;
    Decision {
        allowed,
        limit,
        remaining: if allowed { limit } else { 0 },
        reset_at: now,
        retry_after: Nanos::ZERO,
        next_unit_after: Nanos::ZERO,
    }
}

/// Makes `d` a denial ([`Answer::degraded`]'s when the failure mode denies, and
/// [`Answer::contention`]'s): every pair denied with nothing remaining, each waiting what its
/// own figures say and at least `min_retry` (so is its wait for one unit, the headers' `t`); an
/// admission becomes blocked by the first limit (of the key whose figures it shows).
pub fn deny(d: &mut PolicyDecision, min_retry: Nanos) {
    if d.allowed {
        if let Some(first) = d.limits.first() {
            d.binding.limit = first.at.limit;
        }
    }
    d.allowed = false;
    deny_figures(&mut d.decision, min_retry);
    for l in d.limits.iter_mut() {
        deny_figures(&mut l.decision, min_retry);
        l.decision.next_unit_after = l.decision.next_unit_after.max(min_retry);
    }
}

/// One decision's figures as a denial's: nothing remaining, at least `min_retry` to wait
/// ([`deny`]'s, and the figures of no limit's when the failure mode denies).
pub fn deny_figures(d: &mut Decision, min_retry: Nanos) {
    d.allowed = false;
    d.remaining = 0;
    d.retry_after = d.retry_after.max(min_retry);
}

/// The reason phrase of the statuses an answer takes.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        403 => "Forbidden",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        200 => "OK",
        _ => "Error",
    }
}

fn bool_str(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

fn num(s: &mut String, field: &str, n: u64) {
    s.push_str(field);
    crate::text::push_u64(s, n);
}

fn opt_str(s: &mut String, v: Option<&str>) {
    match v {
        Some(v) => json_str(s, v),
        None => s.push_str("null"),
    }
}

/// `v` as a JSON string.
fn json_str(s: &mut String, v: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    s.push('"');
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                s.push_str("\\u00");
                s.push(HEX[(c as usize) >> 4] as char);
                s.push(HEX[(c as usize) & 15] as char);
            }
            c => s.push(c),
        }
    }
    s.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::LimitDecision;

    fn pair(allowed: bool, remaining: u64, retry_ms: u64) -> PolicyDecision {
        let d = Decision {
            allowed,
            limit: 10,
            remaining,
            reset_at: Nanos::from_millis(1000),
            retry_after: Nanos::from_millis(retry_ms),
            next_unit_after: Nanos::from_millis(retry_ms),
        };
        PolicyDecision {
            allowed,
            decision: d,
            binding: LimitRef { key: 0, limit: 0 },
            limits: LimitDecisions::one(LimitDecision { at: LimitRef { key: 0, limit: 0 }, decision: d }),
            penalty: false,
        }
    }

    #[test]
    fn a_closed_failure_denies_every_pair_for_at_least_its_wait() {
        let a = Answer::degraded(pair(true, 7, 0), false, Nanos::from_millis(1000), true);
        assert!(!a.allowed());
        assert_eq!(a.status, 503);
        assert_eq!(a.decision.decision.remaining, 0);
        assert_eq!(a.decision.decision.retry_after, Nanos::from_millis(1000));
        assert_eq!(a.decision.limits[0].decision.next_unit_after, Nanos::from_millis(1000));
        assert_eq!(a.reason.degraded(), Some("unavailable"));
        let open = Answer::degraded(pair(true, 7, 0), true, Nanos::from_millis(1000), true);
        assert!(open.allowed());
        assert_eq!(open.decision.decision.remaining, 7);
    }

    #[test]
    fn contention_keeps_a_longer_wait() {
        let a = Answer::contention(pair(false, 0, 5000), Nanos::from_millis(1));
        assert_eq!(a.status, 429);
        assert_eq!(a.decision.decision.retry_after, Nanos::from_millis(5000));
    }

    #[test]
    fn bodies_take_the_peers_shapes() {
        let a = Answer::decided(pair(false, 0, 2000), Status::default());
        assert_eq!(a.body(&Body::Message(DEFAULT_MESSAGE)), DEFAULT_MESSAGE);
        assert_eq!(
            a.body(&Body::Fastify { after: "2 seconds" }),
            "{\"statusCode\":429,\"error\":\"Too Many Requests\",\"message\":\"Rate limit exceeded, retry in 2 seconds\"}"
        );
        let allowed = Answer::decided(pair(true, 3, 0), Status::default());
        assert_eq!(allowed.body(&Body::Message(DEFAULT_MESSAGE)), "");
    }

    fn policy() -> Policy {
        use crate::{AnyAlgorithm, Gcra};
        let gcra = |q: &str| AnyAlgorithm::Gcra(Gcra::new(q.parse().unwrap()).unwrap());
        Policy::new(alloc::vec![
            crate::policy::Limit::new("per-second", gcra("10/s")).unwrap(),
            crate::policy::Limit::new("per-minute", gcra("12/m")).unwrap(),
        ])
        .unwrap()
    }

    #[test]
    fn the_worker_json_names_the_limit_and_the_reasons() {
        let p = policy();
        let now = Nanos::from_secs(1_000);
        let d = p.peek(&[None], now, 1).unwrap();
        let a = Answer::decided(d, Status::default());
        let json = a.worker_json("api", &p, false, &[]);
        assert!(json.contains("\"limitName\":\"per-second\""), "{json}");
        assert!(json.contains("\"blockedBy\":null"), "{json}");
        let s = a.clone().shadowed();
        assert!(s.worker_json("api", &p, true, &[]).ends_with("\"estimate\":true,\"shadow\":true,\"wouldAllow\":true}"));
        let listed = Answer::listed(Listed::Deny, 10, now).worker_json("api", &p, false, &[]);
        assert!(listed.contains("\"limitName\":null") && listed.contains("\"reason\":\"denyList\""), "{listed}");
        // A closed failure mode without a policy's figures: only Retry-After.
        let none = unlimited(crate::counted::counted(0, 0, now, now));
        let closed = Answer::degraded(none, false, Nanos::from_millis(1500), false);
        assert_eq!(closed.headers(&p, now, &Default::default()), alloc::vec![("Retry-After", String::from("2"))]);
        assert!(closed.worker_json("api", &p, false, &[]).ends_with("\"degraded\":\"unavailable\"}"));
    }

    /// The top-level field names of a JSON object, in order (the strings followed by `:` at
    /// depth one).
    fn fields(json: &str) -> Vec<String> {
        let (mut depth, mut out, mut i) = (0, Vec::new(), 0);
        let b = json.as_bytes();
        while i < b.len() {
            match b[i] {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                b'"' => {
                    let start = i + 1;
                    i += 1;
                    while b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    if depth == 1 && b.get(i + 1) == Some(&b':') {
                        out.push(String::from(&json[start..i]));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        out
    }

    #[test]
    fn the_worker_json_writes_the_fields_listed_and_no_other() {
        let p = policy();
        let now = Nanos::from_secs(1_000);
        let keys = [String::from("u1"), String::from("o1")];
        let always: Vec<String> = WORKER_FIELDS[..WORKER_FIELDS_ALWAYS].iter().map(|f| String::from(*f)).collect();
        let mut seen: Vec<String> = Vec::new();
        let mut states = [None, None];
        for _ in 0..12 {
            p.check(&mut states, now, 1).unwrap();
        }
        let denied = Answer::decided(p.peek(&states, now, 1).unwrap(), Status::default());
        let answers = [
            (Answer::decided(p.peek(&[None], now, 1).unwrap(), Status::default()), &keys[..1]),
            (denied.clone().shadowed(), &keys[..]),
            (Answer::listed(Listed::Allow, 10, now), &keys[..1]),
            (Answer::degraded(fresh(&p, 1, now, 1), false, Nanos::from_secs(1), true), &keys[..1]),
            (Answer::decided(PolicyDecision { penalty: true, ..denied.decision.clone() }, Status::default()), &keys[..1]),
        ];
        for (a, k) in &answers {
            let f = fields(&a.worker_json("api", &p, false, k));
            assert_eq!(f[..WORKER_FIELDS_ALWAYS], always[..], "every answer starts with the same fields");
            let order: Vec<usize> = f.iter().map(|x| WORKER_FIELDS.iter().position(|w| w == x).unwrap()).collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "in the listed order: {f:?}");
            seen.extend(f);
        }
        seen.sort();
        seen.dedup();
        let mut listed: Vec<String> = WORKER_FIELDS.iter().map(|f| String::from(*f)).collect();
        listed.sort();
        assert_eq!(seen, listed, "every listed field is written by some answer");
        // Several keys: every pair's answer, with its key and the listed fields.
        let json = denied.worker_json("api", &p, false, &keys);
        let pairs = &json[json.find("\"limits\":[").unwrap() + 10..];
        assert_eq!(pairs.matches("{\"name\"").count(), 4, "{json}");
        assert_eq!(fields(&pairs[..pairs.find('}').unwrap() + 1]), WORKER_LIMIT_FIELDS.map(String::from).to_vec());
        assert!(pairs.contains("\"key\":\"o1\""), "{json}");
        assert!(!Answer::decided(p.peek(&[None], now, 1).unwrap(), Status::default())
            .worker_json("api", &p, false, &keys[..1])
            .contains("limits"));
    }

    #[test]
    fn a_failed_store_answers_over_fresh_figures() {
        let p = policy();
        let now = Nanos::from_secs(1_000);
        let open = Answer::degraded(fresh(&p, 2, now, 3), true, Nanos::from_secs(1), true);
        assert!(open.allowed());
        assert_eq!(open.decision.limits.len(), 4, "every pair of both keys");
        assert_eq!(open.decision, p.peek(&[None, None], now, 3).unwrap());
        assert_eq!(open.retry_after_ms(), 0);
        let closed = Answer::degraded(fresh(&p, 1, now, 1), false, Nanos::from_secs(1), true);
        assert_eq!((closed.decision.decision.remaining, closed.retry_after_ms(), closed.status), (0, 1000, 503));
        // A cost no limit holds is peeked as 1: the answer is still the policy's.
        assert_eq!(fresh(&p, 1, now, 1_000), p.peek(&[None], now, 1).unwrap());
        let busy = Answer::contention(fresh(&p, 1, now, 1), Nanos::from_secs(1));
        assert_eq!((busy.status, busy.allowed(), busy.retry_after_ms()), (429, false, 1000));
        assert_eq!(busy.shadowed().retry_after_ms(), 1000, "a shadowed answer keeps enforcement's wait");
    }

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        json_str(&mut s, "a\"b\\c\n");
        assert_eq!(s, "\"a\\\"b\\\\c\\u000a\"");
    }
}
