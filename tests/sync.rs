//! Gateway-style sync: syncing after every hit is exact; periodic sync over-admits by at
//! most what the other nodes admitted since the last sync; local-only nodes each admit the
//! whole limit.

use tollgate::sync::{CentralCounters, SyncRate, SyncedLimiter};
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Nanos, Policy};

fn policy(kind: Kind) -> Policy {
    let mut spec = LimitSpec::new(kind, 100, Nanos::from_secs(60));
    if kind == Kind::SlidingBuckets {
        spec.precision = Some(Nanos::from_secs(6));
    }
    Policy::single(AnyAlgorithm::from_spec(&spec).unwrap())
}

/// `nodes` nodes take turns hitting one key for 30 s, syncing every `every` hits (0: never).
fn admitted(kind: Kind, nodes: usize, every: usize) -> usize {
    let mut central = CentralCounters::default();
    let mut cluster: Vec<_> =
        (0..nodes).map(|_| SyncedLimiter::new("ns", policy(kind), SyncRate::from_millis(100)).unwrap()).collect();
    let t0 = Nanos::from_secs(1_700_000_040);
    let mut total = 0;
    for i in 0..3000 {
        let now = t0 + Nanos::from_millis(i as u64 * 10);
        let node = &mut cluster[i % nodes];
        if node.check(&["k"], now, 1).unwrap().allowed {
            total += 1;
        }
        if every > 0 && (i + 1) % every == 0 {
            for n in cluster.iter_mut() {
                central.push_diffs(&n.take_diffs(now));
            }
            for n in cluster.iter_mut() {
                n.apply_merged(&central.counters("ns", &["k"], now), now);
            }
        }
    }
    total
}

#[test]
fn syncing_every_hit_is_exact() {
    for kind in [Kind::FixedWindow, Kind::SlidingWindow, Kind::SlidingBuckets] {
        let single = admitted(kind, 1, 0);
        assert_eq!(admitted(kind, 4, 1), single, "{kind}");
    }
}

#[test]
fn periodic_sync_over_admits_boundedly_and_local_only_does_not_share() {
    for kind in [Kind::FixedWindow, Kind::SlidingWindow, Kind::SlidingBuckets] {
        let exact = admitted(kind, 1, 0);
        let periodic = admitted(kind, 4, 40);
        let local = admitted(kind, 4, 0);
        assert!(periodic >= exact && periodic <= exact + 3 * 40, "{kind}: {periodic} vs {exact}");
        assert!(local > periodic, "{kind}: local-only {local} should exceed synced {periodic}");
    }
}

#[test]
fn a_failed_push_is_restored_and_sent_again() {
    let mut node = SyncedLimiter::new("ns", policy(Kind::SlidingWindow), SyncRate::from_millis(100)).unwrap();
    let now = Nanos::from_secs(1_700_000_040);
    node.check(&["k"], now, 3).unwrap();
    let first = node.take_diffs(now);
    node.restore();
    let again = node.take_diffs(now);
    assert_eq!(first, again);
    assert_eq!(again.iter().map(|d| d.delta).sum::<u64>(), 3);
    assert!(SyncedLimiter::new("ns", policy(Kind::Gcra), SyncRate::from_millis(100)).is_err(), "GCRA cannot merge");
}

/// A refund gives back unsynced hits for good (they are never pushed), and synced ones in the
/// node's own view only until the next merge; never below zero, never into another window.
#[test]
fn a_refund_gives_back_unsynced_hits_for_good_and_synced_ones_until_the_next_merge() {
    for kind in [Kind::FixedWindow, Kind::SlidingWindow, Kind::SlidingBuckets] {
        let mut central = CentralCounters::default();
        let mut node = SyncedLimiter::new("ns", policy(kind), SyncRate::from_millis(100)).unwrap();
        let now = Nanos::from_secs(1_700_000_040);
        for _ in 0..10 {
            assert!(node.check(&["k"], now, 1).unwrap().allowed);
        }
        central.push_diffs(&node.take_diffs(now));
        node.apply_merged(&central.counters("ns", &["k"], now), now);
        for _ in 0..5 {
            node.check(&["k"], now, 1).unwrap();
        }
        assert_eq!(node.rate("k", 0, now), 15.0, "{kind:?}");
        node.refund("k", now, 7); // 5 unsynced, then 2 of the merged 10
        assert_eq!(node.rate("k", 0, now), 8.0, "{kind:?}");
        assert!(node.take_diffs(now).is_empty(), "{kind:?}: the unsynced hits are never pushed");
        node.apply_merged(&central.counters("ns", &["k"], now), now);
        assert_eq!(node.rate("k", 0, now), 10.0, "{kind:?}: the merged count comes back");
        node.refund("k", now, 1_000);
        assert_eq!(node.rate("k", 0, now), 0.0, "{kind:?}: never below zero");
        node.refund("unknown", now, 1); // nothing to give back
    }
}
