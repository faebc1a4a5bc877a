//! Fair shares in a lease pool: no holder keeps more than its max-min fair share of the
//! partitions over the live demands, a greedy holder gives back its excess at its next
//! request, and the pool's bytes (leases and demands) survive a restart.

use proptest::prelude::*;
use tollgate::lease::LeasePool;
use tollgate::Nanos;

const TTL: Nanos = Nanos::from_secs(15);

fn secs(s: u64) -> Nanos {
    Nanos::from_secs(1_000 + s)
}

fn pool(partitions: u32) -> LeasePool {
    LeasePool::new(partitions, 25, Nanos::from_secs(1)).unwrap()
}

fn held(pool: &LeasePool, holder: &str, now: Nanos) -> usize {
    pool.held_by(holder, now).len()
}

#[test]
fn demands_of_20_12_and_1_share_20_partitions_as_10_9_and_1() {
    let mut p = pool(20);
    assert_eq!(p.grant("a", 20, TTL, secs(0)).unwrap().partitions.len(), 20);
    assert_eq!(p.grant("b", 12, TTL, secs(0)).unwrap().partitions.len(), 0);
    assert_eq!(p.grant("c", 1, TTL, secs(0)).unwrap().partitions.len(), 0);
    assert_eq!([p.fair_share("a"), p.fair_share("b"), p.fair_share("c")], [10, 9, 1]);
    // One round of requests (renewals at a third of the TTL) settles it.
    for h in [("a", 20), ("b", 12), ("c", 1)] {
        p.grant(h.0, h.1, TTL, secs(5)).unwrap();
    }
    assert_eq!([held(&p, "a", secs(5)), held(&p, "b", secs(5)), held(&p, "c", secs(5))], [10, 9, 1]);
    // 19 is an odd split: the extra one is a's, who asked first.
    assert_eq!([p.fair_share("a"), p.fair_share("b"), p.fair_share("c")], [10, 9, 1]);
}

#[test]
fn shares_lists_the_live_demands_with_their_shares_in_asking_order() {
    let mut p = pool(20);
    p.grant("a", 20, TTL, secs(0)).unwrap();
    p.grant("b", 12, Nanos::from_secs(4), secs(0)).unwrap(); // counts until secs(2)
    p.grant("c", 1, TTL, secs(1)).unwrap();
    let view =
        |p: &LeasePool, at| p.shares(at).iter().map(|s| (s.holder.to_string(), s.want, s.share)).collect::<Vec<_>>();
    assert_eq!(view(&p, secs(1)), [("a".into(), 20, 10), ("b".into(), 12, 9), ("c".into(), 1, 1)]);
    assert_eq!(p.shares(secs(1))[1].until, secs(2));
    // b's demand has lapsed: a and c share the pool as 19 and 1.
    assert_eq!(view(&p, secs(2)), [("a".into(), 20, 19), ("c".into(), 1, 1)]);
}

#[test]
fn demands_that_fit_are_met_in_full_first_come_first_served() {
    let mut p = pool(20);
    assert_eq!(p.grant("a", 12, TTL, secs(0)).unwrap().rate, 300);
    assert_eq!(p.grant("b", 8, TTL, secs(0)).unwrap().rate, 200);
    assert_eq!(p.grant("a", 12, TTL, secs(5)).unwrap().rate, 300, "12 + 8 fit: a keeps all 12");
}

#[test]
fn a_renewal_keeps_at_most_the_fair_share_and_a_release_lifts_the_cap() {
    let mut p = pool(10);
    p.grant("a", 10, TTL, secs(0)).unwrap();
    p.grant("b", 10, TTL, secs(1)).unwrap();
    assert_eq!(p.renew("a", TTL, secs(2)).unwrap().partitions.len(), 5);
    assert_eq!(p.grant("b", 10, TTL, secs(3)).unwrap().partitions.len(), 5);
    p.release("b", secs(4)).unwrap();
    assert_eq!(p.grant("a", 10, TTL, secs(5)).unwrap().partitions.len(), 10, "b is gone: a may take all");
}

#[test]
fn a_lapsed_demand_no_longer_holds_the_others_down() {
    let mut p = pool(10);
    p.grant("a", 10, TTL, secs(0)).unwrap();
    // b asks once with a 4 s TTL, then goes away: its demand counts for half the TTL.
    p.grant("b", 10, Nanos::from_secs(4), secs(0)).unwrap();
    assert_eq!(p.grant("a", 10, TTL, secs(1)).unwrap().partitions.len(), 5);
    assert_eq!(p.grant("a", 10, TTL, secs(3)).unwrap().partitions.len(), 10);
}

#[test]
fn pools_written_before_fair_shares_still_load() {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    // Version 1: the slots only. Partitions 0-2 leased to "a" until secs(15), 3 free.
    let mut v1 = vec![1u8, 4];
    for _ in 0..3 {
        v1.push(1);
        varint(&mut v1, (secs(0) + TTL).as_nanos());
        v1.extend_from_slice(&[1, b'a']);
    }
    v1.push(0);
    let mut restored = pool(4);
    restored.restore(&v1).unwrap();
    assert_eq!(restored.held_by("a", secs(1)), vec![0, 1, 2]);
    assert_eq!(restored.fair_share("a"), 0, "a version 1 pool has no demands on record");
    assert_eq!(restored.grant("a", 3, TTL, secs(1)).unwrap().partitions, vec![0, 1, 2]);
    assert_eq!(restored.encode()[0], 2);
    let mut bad = v1.clone();
    bad[0] = 3;
    assert!(pool(4).restore(&bad).is_err());
}

#[derive(Clone, Debug)]
enum Op {
    Grant(usize, u32, u64),
    Renew(usize, u64),
    Release(usize),
}

fn op() -> impl Strategy<Value = (u64, Op)> {
    let step = 0u64..4_000; // ms between requests
    prop_oneof![
        6 => (step.clone(), 0usize..4, 1u32..=12, 1u64..20).prop_map(|(d, h, w, ttl)| (d, Op::Grant(h, w, ttl))),
        2 => (step.clone(), 0usize..4, 1u64..20).prop_map(|(d, h, ttl)| (d, Op::Renew(h, ttl))),
        1 => (step, 0usize..4).prop_map(|(d, h)| (d, Op::Release(h))),
    ]
}

proptest! {
    /// After any request, the asking holder holds at most its fair share, no holder's share is
    /// above what it asked for, the partitions held never exceed the pool, and the pool's bytes
    /// restore to the same pool.
    #[test]
    fn nobody_keeps_more_than_its_fair_share(ops in proptest::collection::vec(op(), 1..80)) {
        const NAMES: [&str; 4] = ["a", "b", "c", "d"];
        let mut p = pool(10);
        let mut now = secs(0);
        for (dt, op) in ops {
            now = now + Nanos::from_millis(dt);
            let asked = match op {
                Op::Grant(h, want, ttl) => {
                    let g = p.grant(NAMES[h], want, Nanos::from_secs(ttl), now).unwrap();
                    prop_assert!(g.partitions.len() as u32 <= want);
                    Some(h)
                }
                Op::Renew(h, ttl) => p.renew(NAMES[h], Nanos::from_secs(ttl), now).ok().map(|_| h),
                Op::Release(h) => {
                    let _ = p.release(NAMES[h], now);
                    None
                }
            };
            if let Some(h) = asked {
                prop_assert!(held(&p, NAMES[h], now) as u32 <= p.fair_share(NAMES[h]));
            }
            let total: usize = NAMES.iter().map(|n| held(&p, n, now)).sum();
            prop_assert!(total <= 10);
            let shares = p.shares(now);
            prop_assert!(shares.iter().all(|s| s.share <= s.want));
            prop_assert!(shares.iter().map(|s| s.share).sum::<u32>() <= 10);
            let mut copy = pool(10);
            copy.restore(&p.encode()).unwrap();
            prop_assert_eq!(&copy, &p);
        }
    }

    /// Holders that keep asking for fixed amounts hold exactly their fair shares after two
    /// rounds (in the first, one may ask before another has given back), and the shares of
    /// demands that do not fit add up to the whole pool.
    #[test]
    fn steady_demands_converge_to_fair_shares(wants in proptest::collection::vec(1u32..=12, 1..5)) {
        let names = ["a", "b", "c", "d", "e"];
        let mut p = pool(10);
        for round in 0..4u64 {
            for (i, &w) in wants.iter().enumerate() {
                p.grant(names[i], w, TTL, secs(round * 3)).unwrap();
            }
        }
        let now = secs(9);
        let total: u32 = wants.iter().sum();
        let mut shares = 0;
        for (i, &w) in wants.iter().enumerate() {
            let h = held(&p, names[i], now) as u32;
            let share = p.fair_share(names[i]);
            prop_assert!(share <= w);
            prop_assert_eq!(h, share, "{} holds {} of its share {}", names[i], h, share);
            shares += share;
        }
        prop_assert_eq!(shares, total.min(10));
    }
}
