//! A synced node whose central store holds each key apart (one store call per key, as a
//! Durable Object per key does): a [`SyncedLimiter`] and its [`SyncQueue`] as one value, so an
//! edge decides a hit and learns the round that is due in one call, pushes each of the round's
//! keys, and feeds back what each push answered. The edge only does the I/O.
//!
//! ```
//! use tollgate::sync::{CentralCounters, SyncRate};
//! use tollgate::sync_node::SyncNode;
//! use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Quota};
//! let fw = AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(10).unwrap()));
//! let every = SyncRate::Every(Nanos::from_millis(100));
//! let mut node = SyncNode::new("api", tollgate::Policy::single(fw), every, 32).unwrap();
//! let now = Nanos::from_secs(600);
//! let (d, round) = node.hit(&["a"], now, 1, false).unwrap();
//! assert!(d.allowed);
//! let round = round.unwrap(); // the first round begins at once
//! let mut central = CentralCounters::default();
//! for (key, diffs) in node.diffs(&round) {
//!     central.push_diffs(&diffs);
//!     node.pushed(&round, &key, Some(central.counters("api", &[&key], now)));
//! }
//! assert_eq!(node.queue().out(), 0);
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::convert::Infallible;

use crate::error::ConfigError;
use crate::limiter::LimitError;
use crate::policy::{Policy, PolicyDecision};
use crate::sync::{Diff, MergedCount, SyncRate, SyncedLimiter};
use crate::sync_queue::SyncQueue;
use crate::time::Nanos;

/// One node's limiter and the queue of keys it has to push.
#[derive(Clone, Debug)]
pub struct SyncNode {
    limiter: SyncedLimiter,
    queue: SyncQueue,
}

/// A round of pushes begun at `began`: its keys, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// The keys to push, each to its own store.
    pub keys: Vec<Box<str>>,
    /// When the round began: the instant its diffs are taken and its merged counts applied at.
    pub began: Nanos,
}

impl SyncNode {
    /// A node of `namespace` limiting by `policy` (mergeable), syncing at `rate`, at most
    /// `batch` keys a round.
    pub fn new(namespace: &str, policy: Policy, rate: SyncRate, batch: usize) -> Result<SyncNode, ConfigError> {
        let every = match rate {
            SyncRate::Every(every) => every,
            _ => Nanos::ZERO,
        };
        Ok(SyncNode { limiter: SyncedLimiter::new(namespace, policy, rate)?, queue: SyncQueue::new(every, batch) })
    }

    /// Decides a hit of `cost` on `keys` (all or nothing) at `now` from this node's view, or
    /// peeks; a node that syncs periodically queues the keys of an admitted hit and begins the
    /// round that is due, if any (one at most per hit, peeks included).
    pub fn hit(
        &mut self,
        keys: &[&str],
        now: Nanos,
        cost: u64,
        peek: bool,
    ) -> Result<(PolicyDecision, Option<Round>), LimitError<Infallible>> {
        let d = if peek { self.limiter.peek(keys, now, cost)? } else { self.limiter.check(keys, now, cost)? };
        if !matches!(self.limiter.sync_rate(), SyncRate::Every(_)) {
            return Ok((d, None));
        }
        if !peek && d.allowed {
            keys.iter().for_each(|key| self.queue.mark(key));
        }
        let keys = self.queue.next_round(now);
        Ok((d, (!keys.is_empty()).then_some(Round { keys, began: now })))
    }

    /// The decision [`hit`](SyncNode::hit) would make, changing nothing and beginning no round.
    pub fn peek(&self, keys: &[&str], now: Nanos, cost: u64) -> Result<PolicyDecision, LimitError<Infallible>> {
        self.limiter.peek(keys, now, cost)
    }

    /// The diffs of each of `round`'s keys (taken now, as the round is pushed; they are in
    /// flight until [`pushed`](SyncNode::pushed)).
    pub fn diffs(&mut self, round: &Round) -> Vec<(Box<str>, Vec<Diff>)> {
        let refs: Vec<&str> = round.keys.iter().map(|k| &**k).collect();
        let diffs = self.limiter.take_diffs_for(&refs, round.began);
        let mine = |k: &str| diffs.iter().filter(|d| &*d.key == k).cloned().collect();
        round.keys.iter().map(|k| (k.clone(), mine(k))).collect()
    }

    /// What pushing `key` of `round` answered: its merged counts, applied; or a failure
    /// (`None`): its diffs are kept and it is queued again.
    pub fn pushed(&mut self, round: &Round, key: &str, merged: Option<Vec<MergedCount>>) {
        let ok = merged.is_some();
        match merged {
            Some(merged) => {
                let merged: Vec<_> = merged.into_iter().map(|m| MergedCount { key: key.into(), ..m }).collect();
                self.limiter.apply_merged_for(&[key], &merged, round.began);
            }
            None => self.limiter.restore_for(&[key]),
        }
        self.queue.finish(key, ok);
    }

    /// Forgets `key` (a reset): its counts, merged and unsynced, and its place in the queue.
    pub fn forget(&mut self, key: &str, now: Nanos) {
        self.limiter.take_diffs_for(&[key], now);
        self.limiter.apply_merged_for(&[key], &[], now);
        self.queue.forget(key);
    }

    /// Gives `cost` units of `key` back in this node's view ([`SyncedLimiter::refund`]).
    pub fn refund(&mut self, key: &str, now: Nanos, cost: u64) {
        self.limiter.refund(key, now, cost)
    }

    /// The node's queue (how many keys wait, how many are out).
    pub fn queue(&self) -> &SyncQueue {
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AnyAlgorithm, FixedWindow, Quota};

    fn node(rate: SyncRate) -> SyncNode {
        let fw = AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(10).unwrap()));
        SyncNode::new("api", Policy::single(fw), rate, 2).unwrap()
    }

    #[test]
    fn a_failed_push_keeps_its_diffs_and_queues_the_key_again() {
        let mut n = node(SyncRate::Every(Nanos::from_millis(100)));
        let t = Nanos::from_secs(600);
        let round = n.hit(&["a"], t, 3, false).unwrap().1.unwrap();
        assert_eq!((round.keys.len(), round.began), (1, t));
        let first = n.diffs(&round);
        n.pushed(&round, "a", None);
        assert_eq!((n.queue().waiting(), n.queue().out()), (1, 0));
        let again = n.hit(&["b"], t + Nanos::from_millis(100), 1, true).unwrap().1.unwrap();
        assert_eq!(again.keys, ["a".into()], "a peek begins the round that is due too");
        assert_eq!(n.diffs(&again), first, "the failed push's diffs, whole");
    }

    #[test]
    fn peek_begins_no_round_and_a_local_node_never_syncs() {
        let n = node(SyncRate::Every(Nanos::from_millis(100)));
        assert!(n.peek(&["a"], Nanos::from_secs(1), 1).unwrap().allowed);
        assert_eq!(n.queue().waiting(), 0);
        let mut local = node(SyncRate::LocalOnly);
        let (d, round) = local.hit(&["a"], Nanos::from_secs(1), 1, false).unwrap();
        assert!(d.allowed && round.is_none() && local.queue().waiting() == 0);
    }
}
