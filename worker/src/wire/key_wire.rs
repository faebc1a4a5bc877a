//! The JSON the Worker and its Durable Objects exchange (never seen by clients).
//!
//! Times are nanoseconds as JSON integers: both ends are Rust (serde_json reads `u64`
//! exactly), so nothing passes through a JavaScript number. Decisions, diffs and merged counts
//! are the core's own values (its `serde` feature); a diff or merged count goes to, or comes
//! from, its key's own object, so it carries no key.

use serde::{Deserialize, Serialize};
use tollgate::sync::{Diff, MergedCount};
use tollgate::{Nanos, PolicyDecision};

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
/// (`Tollgate-Test-Fault`, tests/fault.rs).
#[cfg(feature = "test-hooks")]
pub use crate::tests::fault::Fault;

/// A production build injects no fault: the type has no value, so a request's `fault` is
/// always `None` and an object refuses any other.
#[cfg(not(feature = "test-hooks"))]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {}

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
    pub diffs: Vec<Diff>,
}

impl DoRequest {
    /// A request of `op` on (`policy`, `key`) for `cost` units, on the test clock `now` when
    /// given; no fault, no diffs.
    pub fn new(op: Op, policy: &str, key: &str, cost: u64, now: Option<Nanos>) -> DoRequest {
        let (policy, key, now) = (policy.to_string(), key.to_string(), now.map(Nanos::as_nanos));
        DoRequest { op, policy, key, cost, now, fault: None, diffs: Vec::new() }
    }
}

/// A Durable Object's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoReply {
    /// The instant the object decided at (ns): its clock, or the test clock.
    pub now: u64,
    /// The decision (check, peek; refund answers a peek of cost 1 after the refund).
    #[serde(default)]
    pub decision: Option<PolicyDecision>,
    /// The merged counts (sync), without their key (the object's).
    #[serde(default)]
    pub merged: Vec<MergedCount>,
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
    pub fn policy_decision(&self) -> Result<PolicyDecision, crate::base::errors::ApiError> {
        self.decision
            .clone()
            .ok_or_else(|| crate::base::errors::ApiError::internal("the Durable Object answered no decision"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate::limit_decisions::LimitDecisions;
    use tollgate::policy::{LimitDecision, LimitRef};
    use tollgate::Decision;

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
        let json = serde_json::to_string(&pd).unwrap();
        let back: PolicyDecision = serde_json::from_str(&json).unwrap();
        assert_eq!(back, pd);
    }

    /// The objects of the previous build and this one read each other's decisions, diffs and
    /// merged counts: pairs as `[key, limit]`, no `penalty` when false, no keys in a diff.
    #[test]
    fn the_wire_shapes_stay_as_they_were() {
        let d = Decision {
            allowed: true,
            limit: 5,
            remaining: 4,
            reset_at: Nanos::new(9),
            retry_after: Nanos::ZERO,
            next_unit_after: Nanos::ZERO,
        };
        let pd = PolicyDecision {
            allowed: true,
            decision: d,
            binding: LimitRef { key: 1, limit: 0 },
            limits: LimitDecisions::one(LimitDecision { at: LimitRef { key: 1, limit: 0 }, decision: d }),
            penalty: false,
        };
        let decision = r#"{"allowed":true,"limit":5,"remaining":4,"reset_at":9,"retry_after":0,"next_unit_after":0}"#;
        let want = format!(r#"{{"allowed":true,"decision":{decision},"binding":[1,0],"limits":[[1,0,{decision}]]}}"#);
        assert_eq!(serde_json::to_string(&pd).unwrap(), want);
        let old = r#"{"allowed":true,"limit":5,"remaining":4,"reset_at":9,"retry_after":0}"#;
        let read: PolicyDecision = serde_json::from_str(&format!(
            r#"{{"allowed":true,"decision":{old},"binding":[1,0],"limits":[[1,0,{old}]]}}"#
        ))
        .unwrap();
        assert_eq!(read, pd);
        let diff = Diff {
            namespace: "ns".into(),
            key: "k".into(),
            limit: 1,
            window_start: Nanos::new(2),
            window_size: Nanos::new(3),
            delta: 4,
            expires_at: Nanos::new(5),
        };
        let json = r#"{"limit":1,"window_start":2,"window_size":3,"delta":4,"expires_at":5}"#;
        assert_eq!(serde_json::to_string(&diff).unwrap(), json);
        let merged = MergedCount { key: "".into(), limit: 1, window_start: Nanos::new(2), count: 7 };
        assert_eq!(serde_json::to_string(&merged).unwrap(), r#"{"limit":1,"window_start":2,"count":7}"#);
        assert_eq!(serde_json::from_str::<MergedCount>(r#"{"limit":1,"window_start":2,"count":7}"#).unwrap(), merged);
    }
}
