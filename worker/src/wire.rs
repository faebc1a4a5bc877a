//! The JSON the Worker and its Durable Objects exchange (never seen by clients).
//!
//! Times are nanoseconds as JSON integers: both ends are Rust (serde_json reads `u64`
//! exactly), so nothing passes through a JavaScript number.

use serde::{Deserialize, Serialize};
use tollgate::policy::{LimitDecision, LimitRef};
use tollgate::sync::{Diff, MergedCount};
use tollgate::{Decision, Nanos, PolicyDecision};

#[cfg(feature = "test-hooks")]
use crate::object::StorageFault;

/// What the Worker asks a Durable Object to do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Decide and count a hit.
    Check,
    /// Decide without counting.
    Peek,
    /// Give units back.
    Refund,
    /// Forget the key.
    Reset,
    /// Add diffs to the merged counts and read them back (sync mode).
    Sync,
    /// Say what is stored and when the alarm is (test switch on only).
    Inspect,
}

/// A fault the Durable Object injects: the test build's hook, with `TEST_MODE` on only
/// (`Tollgate-Test-Fault`, api.rs).
#[cfg(feature = "test-hooks")]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fault {
    /// Answer 500.
    Error,
    /// Answer only after a long delay (longer than any policy's timeout in the tests).
    Timeout,
    /// Fail the object's next storage reads or writes (`tests/storage_fault.rs`).
    Storage(StorageFault),
}

#[cfg(feature = "test-hooks")]
impl Fault {
    /// From the `Tollgate-Test-Fault` header value.
    pub fn parse(s: &str) -> Option<Fault> {
        match s.trim() {
            "error" => Some(Fault::Error),
            "timeout" => Some(Fault::Timeout),
            other => StorageFault::parse(other).map(Fault::Storage),
        }
    }
}

/// A production build injects no fault: the type has no value, so a request's `fault` is
/// always `None` and an object refuses any other.
#[cfg(not(feature = "test-hooks"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {}

/// One diff for the Durable Object's key (namespace and key are the object's own).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffWire {
    pub limit: usize,
    pub window_start: u64,
    pub window_size: u64,
    pub delta: u64,
    pub expires_at: u64,
}

impl DiffWire {
    pub fn from_diff(d: &Diff) -> DiffWire {
        DiffWire {
            limit: d.limit,
            window_start: d.window_start.as_nanos(),
            window_size: d.window_size.as_nanos(),
            delta: d.delta,
            expires_at: d.expires_at.as_nanos(),
        }
    }

    pub fn to_diff(&self, namespace: &str, key: &str) -> Diff {
        Diff {
            namespace: namespace.into(),
            key: key.into(),
            limit: self.limit,
            window_start: Nanos::new(self.window_start),
            window_size: Nanos::new(self.window_size),
            delta: self.delta,
            expires_at: Nanos::new(self.expires_at),
        }
    }
}

/// One merged count of the Durable Object's key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedWire {
    pub limit: usize,
    pub window_start: u64,
    pub count: u64,
}

impl MergedWire {
    pub fn from_merged(m: &MergedCount) -> MergedWire {
        MergedWire { limit: m.limit, window_start: m.window_start.as_nanos(), count: m.count }
    }

    pub fn to_merged(&self, key: &str) -> MergedCount {
        MergedCount {
            key: key.into(),
            limit: self.limit,
            window_start: Nanos::new(self.window_start),
            count: self.count,
        }
    }
}

/// The Worker's request to a Durable Object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoRequest {
    pub op: Op,
    pub policy: String,
    pub key: String,
    #[serde(default)]
    pub cost: u64,
    /// The test clock (ns); the object's own clock when absent.
    #[serde(default)]
    pub now: Option<u64>,
    #[serde(default)]
    pub fault: Option<Fault>,
    #[serde(default)]
    pub diffs: Vec<DiffWire>,
}

impl DoRequest {
    /// A request of `op` on (`policy`, `key`) for `cost` units, on the test clock `now` when
    /// given; no fault, no diffs.
    pub fn new(op: Op, policy: &str, key: &str, cost: u64, now: Option<Nanos>) -> DoRequest {
        let (policy, key, now) = (policy.to_string(), key.to_string(), now.map(Nanos::as_nanos));
        DoRequest { op, policy, key, cost, now, fault: None, diffs: Vec::new() }
    }
}

/// A [`Decision`] on the wire.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionWire {
    pub allowed: bool,
    pub limit: u64,
    pub remaining: u64,
    pub reset_at: u64,
    pub retry_after: u64,
    #[serde(default)]
    pub next_unit_after: u64,
}

impl From<Decision> for DecisionWire {
    fn from(d: Decision) -> DecisionWire {
        DecisionWire {
            allowed: d.allowed,
            limit: d.limit,
            remaining: d.remaining,
            reset_at: d.reset_at.as_nanos(),
            retry_after: d.retry_after.as_nanos(),
            next_unit_after: d.next_unit_after.as_nanos(),
        }
    }
}

impl From<DecisionWire> for Decision {
    fn from(d: DecisionWire) -> Decision {
        Decision {
            allowed: d.allowed,
            limit: d.limit,
            remaining: d.remaining,
            reset_at: Nanos::new(d.reset_at),
            retry_after: Nanos::new(d.retry_after),
            next_unit_after: Nanos::new(d.next_unit_after),
        }
    }
}

/// A [`PolicyDecision`] on the wire: `limits` are `(key, limit, decision)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecisionWire {
    pub allowed: bool,
    pub decision: DecisionWire,
    pub binding: (usize, usize),
    pub limits: Vec<(usize, usize, DecisionWire)>,
    /// Whether the wait includes a penalty's block (absent from objects of older builds).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub penalty: bool,
}

impl From<&PolicyDecision> for PolicyDecisionWire {
    fn from(d: &PolicyDecision) -> PolicyDecisionWire {
        PolicyDecisionWire {
            allowed: d.allowed,
            decision: d.decision.into(),
            binding: (d.binding.key, d.binding.limit),
            limits: d.limits.iter().map(|l| (l.at.key, l.at.limit, l.decision.into())).collect(),
            penalty: d.penalty,
        }
    }
}

impl From<PolicyDecisionWire> for PolicyDecision {
    fn from(d: PolicyDecisionWire) -> PolicyDecision {
        PolicyDecision {
            allowed: d.allowed,
            decision: d.decision.into(),
            binding: LimitRef { key: d.binding.0, limit: d.binding.1 },
            limits: d
                .limits
                .into_iter()
                .map(|(key, limit, decision)| LimitDecision { at: LimitRef { key, limit }, decision: decision.into() })
                .collect(),
            penalty: d.penalty,
        }
    }
}

/// A Durable Object's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoReply {
    /// The instant the object decided at (ns): its clock, or the test clock.
    pub now: u64,
    /// The decision (check, peek; refund answers a peek of cost 1 after the refund).
    #[serde(default)]
    pub decision: Option<PolicyDecisionWire>,
    /// The merged counts (sync).
    #[serde(default)]
    pub merged: Vec<MergedWire>,
    /// What is stored (inspect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<serde_json::Value>,
    /// The key's state the decision was made over (`PolicyState::encode` bytes), sent with a
    /// denied check so the isolate's blocked-key cache can decide later hits exactly as the
    /// object would (block_cache.rs). Absent when the key is fresh or the state is too large
    /// to be worth sending (a long sliding log): that key is then not cached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Vec<u8>>,
}

impl DoReply {
    /// The decision the object answered (check, peek, refund).
    pub fn policy_decision(&self) -> Result<PolicyDecision, crate::errors::ApiError> {
        let wire = self.decision.clone();
        wire.map(PolicyDecision::from)
            .ok_or_else(|| crate::errors::ApiError::internal("the Durable Object answered no decision"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_decision_round_trips_exactly() {
        let d = Decision {
            allowed: false,
            limit: 5,
            remaining: 0,
            reset_at: Nanos::new(1_700_000_000_123_456_789),
            retry_after: Nanos::new(7),
            next_unit_after: Nanos::new(7),
        };
        let pd = PolicyDecision {
            allowed: false,
            decision: d,
            binding: LimitRef { key: 0, limit: 1 },
            limits: vec![LimitDecision { at: LimitRef { key: 0, limit: 1 }, decision: d }].into(),
            penalty: true,
        };
        let json = serde_json::to_string(&PolicyDecisionWire::from(&pd)).unwrap();
        let back: PolicyDecisionWire = serde_json::from_str(&json).unwrap();
        assert_eq!(PolicyDecision::from(back), pd);
    }
}
