//! The JSON the Worker and a key's Durable Object exchange for the several-keys protocol and
//! for moving a key's state in and out (never seen by clients). Beside `wire.rs`, whose
//! requests decide one key: a body starting with `{"lockOp"` is one of these.
//!
//! The protocol (worker/README.md, "Several keys"): the isolate `lock`s each key's object in
//! the keys' sorted order (each answers the key's state bytes and a token), decides over all
//! the states with the core, then `commit`s the new bytes to each object with its token, or
//! `release`s them all after a denial. `export`/`import` read and replace one key's state.

use serde::{Deserialize, Serialize};

/// What the isolate asks a key's object to do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockOp {
    /// Wait until no one else holds the key, take a lease on it and answer its state.
    Lock,
    /// Write the state decided over the locked bytes and release the lease (its token only).
    Commit,
    /// Release the lease without writing (a denial, or a failure elsewhere).
    Release,
    /// Answer the key's state (as it would be decided now) without changing it.
    Export,
    /// Replace the key's state (already validated by the isolate; checked again here).
    Import,
}

/// The isolate's request. `lock_op` comes first so that the object can tell these bodies from
/// `wire::DoRequest`s by their first bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockRequest {
    pub lock_op: LockOp,
    pub policy: String,
    pub key: String,
    /// The lease's token (commit, release).
    #[serde(default)]
    pub token: u64,
    /// The bytes to write (commit, import; `None`: the key is fresh).
    #[serde(default)]
    pub state: Option<Vec<u8>>,
    /// The test clock (ns), TEST_MODE only.
    #[serde(default)]
    pub now: Option<u64>,
}

/// The object's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockReply {
    /// The object's time (ns): its clock, or the test clock.
    pub now: u64,
    /// The lease's token (lock).
    #[serde(default)]
    pub token: u64,
    /// The key's state (lock, export; `None`: fresh).
    #[serde(default)]
    pub state: Option<Vec<u8>>,
}

/// The start of a body that is a [`LockRequest`].
pub const PREFIX: &[u8] = b"{\"lockOp\"";

/// The status and code an object answers while another request holds the key past the time
/// it may wait (the isolate tries again: contention, never a failure).
pub const BUSY_STATUS: u16 = 409;
/// The code of a busy answer (between the Worker and its objects only).
pub const BUSY_CODE: &str = "busy";
/// The code of a commit whose lease was broken by another request after it expired.
pub const LEASE_LOST_CODE: &str = "lease_lost";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_request_starts_with_its_marker_and_round_trips() {
        let r = LockRequest {
            lock_op: LockOp::Commit,
            policy: "api".into(),
            key: "u1".into(),
            token: 7,
            state: Some(vec![1, 2]),
            now: None,
        };
        let json = serde_json::to_vec(&r).unwrap();
        assert!(json.starts_with(PREFIX));
        assert_eq!(serde_json::from_slice::<LockRequest>(&json).unwrap(), r);
    }
}
