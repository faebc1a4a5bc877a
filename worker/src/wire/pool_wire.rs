//! The JSON the Worker and a pool's Durable Object exchange (never seen by clients). As in
//! `wire`, times are nanoseconds as JSON integers read exactly by serde on both ends.

use serde::{Deserialize, Serialize};
use tollgate::lease::{Grant, Holding, Share};

/// What the Worker asks a pool's object to do.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolOp {
    /// Give `holder` up to `partitions` partitions in all until now + `ttl`.
    Grant,
    /// Extend what `holder` holds until now + `ttl`.
    Renew,
    /// Give back everything `holder` holds.
    Release,
    /// The live leases (nothing is written).
    Status,
    /// What is stored and when the alarm is (test switch on only).
    Inspect,
}

/// The Worker's request to a pool's object. Everything is validated by the Worker first; the
/// core checks holder, partitions and TTL again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolRequest {
    pub op: PoolOp,
    pub pool: String,
    #[serde(default)]
    pub holder: String,
    #[serde(default)]
    pub partitions: u32,
    /// Lease length (ns).
    #[serde(default)]
    pub ttl: u64,
    /// The test clock (ns); the object's own clock when absent.
    #[serde(default)]
    pub now: Option<u64>,
}

/// A pool object's answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolReply {
    /// The instant the object acted at (ns): its clock, or the test clock.
    pub now: u64,
    /// Free partitions after the operation.
    pub free: u32,
    /// Grant and renew: the core's grant.
    #[serde(default)]
    pub grant: Option<Grant>,
    /// Release: how many partitions came back.
    #[serde(default)]
    pub released: Option<u32>,
    /// Status: every holder with live leases, in partition order of their first lease.
    #[serde(default)]
    pub holders: Vec<Holding>,
    /// Status: every live demand with its fair share, in asking order.
    #[serde(default)]
    pub demands: Vec<Share>,
    /// Inspect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate::lease::LeasePool;
    use tollgate::Nanos;

    /// A status reply carries the core's holdings as they are, grouped by holder.
    fn holders(pool: &LeasePool, now: Nanos) -> Vec<Holding> {
        let reply = PoolReply { holders: pool.holdings(now), ..PoolReply::default() };
        serde_json::from_str::<PoolReply>(&serde_json::to_string(&reply).unwrap()).unwrap().holders
    }

    #[test]
    fn leases_are_grouped_by_holder_and_lapsed_ones_left_out() {
        let mut pool = LeasePool::new(6, 25, Nanos::from_secs(1)).unwrap();
        let t = Nanos::from_secs(100);
        pool.grant("a", 2, Nanos::from_secs(10), t).unwrap();
        pool.grant("b", 3, Nanos::from_secs(5), t).unwrap();
        pool.grant("a", 3, Nanos::from_secs(10), t + Nanos::from_secs(1)).unwrap();
        let h = holders(&pool, t + Nanos::from_secs(2));
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].holder.as_str(), h[0].partitions.clone()), ("a", vec![0, 1, 5]));
        assert_eq!(h[0].expires_at, t + Nanos::from_secs(11));
        assert_eq!((h[1].holder.as_str(), h[1].partitions.clone()), ("b", vec![2, 3, 4]));
        let later = holders(&pool, t + Nanos::from_secs(5));
        assert_eq!(later.iter().map(|h| h.holder.as_str()).collect::<Vec<_>>(), ["a"]);
    }

    #[test]
    fn a_request_round_trips() {
        let r = PoolRequest {
            op: PoolOp::Grant,
            pool: "ingest".into(),
            holder: "w1".into(),
            partitions: 4,
            ttl: 15_000_000_000,
            now: Some(u64::MAX),
        };
        let back: PoolRequest = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
