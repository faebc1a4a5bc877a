//! The JSON the Worker and a key's Durable Object exchange for leased quota (never seen by
//! clients). Beside `wire.rs` and `lock_wire.rs`: a body starting with `{"quotaOp"` is one of
//! these (leased_mode.rs, object/quota.rs).

use serde::{Deserialize, Serialize};
use tollgate::quota_lease::SliceGrant;
use tollgate::Nanos;

/// The first bytes of a leased-quota request.
pub const PREFIX: &[u8] = b"{\"quotaOp\"";

/// What the isolate asks of the key's ledger.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuotaOp {
    /// Give back unused units and ask for more (the core's `QuotaLedger::exchange`).
    Exchange,
    /// Read what the ledger could still grant, changing nothing (the core's
    /// `QuotaLedger::standing`; `give_back`, `need` and `want` are ignored).
    Peek,
}

/// The isolate's request. `quota_op` comes first so that the object can tell these bodies
/// from the others by their first bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaRequest {
    pub quota_op: QuotaOp,
    pub policy: String,
    pub key: String,
    /// This isolate's name in the ledger.
    pub holder: String,
    #[serde(default)]
    pub give_back: u64,
    #[serde(default)]
    pub need: u64,
    #[serde(default)]
    pub want: u64,
    /// The test clock (ns); the object's own clock when absent.
    #[serde(default)]
    pub now: Option<u64>,
}

/// The ledger's answer (the core's `SliceGrant`; times in ns on the object's clock).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaReply {
    pub now: u64,
    pub granted: u64,
    pub returned: u64,
    pub held: u64,
    pub expires_at: u64,
    pub left: u64,
    pub binding: usize,
    pub limit: u64,
    pub window_end: u64,
    /// The lease (`expires_at`) is every unit held's, not only this grant's.
    pub extends: bool,
}

impl QuotaReply {
    /// The reply carrying the core's grant `g`, made at `now` on the object's clock.
    pub fn of(now: Nanos, g: &SliceGrant) -> QuotaReply {
        let (now, expires_at, window_end) = (now.as_nanos(), g.expires_at.as_nanos(), g.window_end.as_nanos());
        let SliceGrant { granted, returned, held, left, binding, limit, extends, .. } = *g;
        QuotaReply { now, granted, returned, held, expires_at, left, binding, limit, window_end, extends }
    }

    /// The core's grant this reply carries (its times on the object's clock, as `now`).
    pub fn grant(&self) -> SliceGrant {
        let (expires_at, window_end) = (Nanos::new(self.expires_at), Nanos::new(self.window_end));
        let QuotaReply { granted, returned, held, left, binding, limit, extends, .. } = *self;
        SliceGrant { granted, returned, held, expires_at, left, binding, limit, window_end, extends }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_starts_with_the_prefix() {
        let r = QuotaRequest {
            quota_op: QuotaOp::Exchange,
            policy: "p".into(),
            key: "k".into(),
            holder: "h".into(),
            give_back: 0,
            need: 1,
            want: 4,
            now: None,
        };
        assert!(serde_json::to_vec(&r).unwrap().starts_with(PREFIX));
    }
}
