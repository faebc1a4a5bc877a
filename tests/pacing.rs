//! An ingestion example: 10,000 records of 10 units each, sent to a
//! service provisioned for 20,000 units per second, in simulated time (no sleeping).
//! Blind retry sends about 30,000 records; the paced client sends exactly 10,000, none
//! rejected, in the time the capacity allows.

use tollgate::algorithm::check_slot;
use tollgate::lease::LeasePool;
use tollgate::pacer::Pacer;
use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Quota, SlidingLog};

const RECORDS: u64 = 10_000;
const UNITS: u64 = 10;

/// A service that rejects beyond 20,000 units per second, as a fixed window aligned to the
/// clock or as an exact sliding log (which counts a hit exactly one second old).
fn service(exact: bool) -> AnyAlgorithm {
    let q = Quota::per_second(20_000).unwrap();
    if exact {
        AnyAlgorithm::SlidingLog(SlidingLog::new(q).unwrap())
    } else {
        AnyAlgorithm::FixedWindow(FixedWindow::new(q))
    }
}

fn t0() -> Nanos {
    Nanos::from_secs(1_700_000_000)
}

#[test]
fn blind_retry_sends_about_thirty_thousand_records() {
    let svc = service(false);
    let mut state = None;
    let mut pending = RECORDS;
    let mut sends = 0;
    let mut round = 0;
    // Each second, send everything not yet accepted.
    while pending > 0 {
        let now = t0() + Nanos::from_secs(round);
        let mut accepted = 0;
        for _ in 0..pending {
            sends += 1;
            if check_slot(&svc, &mut state, now, UNITS).unwrap().allowed {
                accepted += 1;
            }
        }
        pending -= accepted;
        round += 1;
    }
    assert_eq!(sends, 30_000);
}

#[test]
fn the_paced_client_sends_each_record_once_with_no_rejection() {
    for exact in [false, true] {
        let svc = service(exact);
        let mut state = None;
        let mut pacer = Pacer::new(Quota::per_second(20_000).unwrap(), Nanos::from_millis(200)).unwrap();
        assert_eq!(pacer.per_grain(), 4_000);
        let (mut sends, mut rejected, mut last) = (0, 0, t0());
        for _ in 0..RECORDS {
            let start = pacer.reserve(t0(), UNITS).unwrap();
            sends += 1;
            if !check_slot(&svc, &mut state, start, UNITS).unwrap().allowed {
                rejected += 1;
            }
            last = last.max(start);
        }
        assert_eq!((sends, rejected), (10_000, 0), "exact service: {exact}");
        // 100,000 units at 20,000 per second: five seconds' worth, the last share starting
        // 4.8 s in (plus a nanosecond per grain for the closed windows).
        assert!(last < t0() + Nanos::from_secs(5), "finished at {:?}", last - t0());
        assert!(last >= t0() + Nanos::from_millis(4_800));
    }
}

#[test]
fn the_pacer_follows_the_service_headers_and_leases() {
    let mut pacer = Pacer::new(Quota::per_second(100).unwrap(), Nanos::from_millis(200)).unwrap();
    let now = t0();
    pacer.observe_headers(now, [("Retry-After", "3")]);
    assert_eq!(pacer.reserve(now, 1).unwrap(), now + Nanos::from_secs(3));

    // A worker's rate is what its leases carry: 4 of 20 partitions of 25/s is 100/s.
    let mut pool = LeasePool::new(20, 25, Nanos::from_secs(1)).unwrap();
    let grant = pool.grant("w1", 4, Nanos::from_secs(15), now).unwrap();
    let mut pacer = Pacer::new(Quota::per_second(grant.rate).unwrap(), Nanos::from_millis(200)).unwrap();
    let starts: Vec<Nanos> = (0..200).map(|_| pacer.reserve(now, 1).unwrap()).collect();
    assert!(starts[199] >= now + Nanos::from_secs(1), "at most 100 in the first second");
    // It takes more partitions: the pacer speeds up, and what it already sent still counts.
    let grant = pool.grant("w1", 8, Nanos::from_secs(15), now).unwrap();
    assert_eq!(grant.rate, 200);
    pacer.set_rate(Quota::per_second(grant.rate).unwrap()).unwrap();
    let next = pacer.reserve(now, 1).unwrap();
    assert!(next <= starts[199], "a faster rate starts sooner");
    assert!(pacer.reserve(now, pacer.max_cost() + 1).is_err());
}

#[test]
fn leases_never_grant_more_than_the_pool_and_come_back_after_the_ttl() {
    let mut pool = LeasePool::new(20, 25, Nanos::from_secs(1)).unwrap();
    let ttl = Nanos::from_secs(15);
    let mut now = t0();
    let mut x: u64 = 7;
    for step in 0..5_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        now = now + Nanos::from_millis(x % 2_000);
        let holder = format!("w{}", x % 7);
        match (x >> 8) % 4 {
            0 | 1 => drop(pool.grant(&holder, 1 + (x >> 16) as u32 % 12, ttl, now)),
            2 => drop(pool.renew(&holder, ttl, now)),
            _ => drop(pool.release(&holder, now)),
        }
        let total: u32 = (0..7).map(|h| pool.held_by(&format!("w{h}"), now).len() as u32).sum();
        assert!(total <= 20, "step {step}: {total} partitions leased");
    }
    // Nobody renews: after the TTL everything is free.
    assert_eq!(pool.free(now + ttl), 20);
    let mut restored = LeasePool::new(20, 25, Nanos::from_secs(1)).unwrap();
    restored.restore(&pool.encode()).unwrap();
    assert_eq!(restored, pool);
    assert!(restored.restore(&[1, 3]).is_err());
}
