//! Worked examples of every algorithm, a policy of three limits and gateway-style sync, each
//! with its numbers written out by hand: decisions a reader can check with pencil and paper.

use tollgate::algorithm::check_slot;
use tollgate::policy::{Limit, Policy};
use tollgate::sync::{CentralCounters, SyncRate, SyncedLimiter};
use tollgate::{
    Algorithm, AnyAlgorithm, FixedWindow, Gcra, Limiter, Nanos, Quota, SlidingLog, SlidingWindow, SlidingWindowState,
    TokenBucket,
};

/// `hh:mm:ss` after an arbitrary clock-aligned origin (a whole hour since the epoch).
fn at(h: u64, m: u64, s: u64) -> Nanos {
    Nanos::from_secs(1_700_002_800 + h * 3600 + m * 60 + s)
}

fn hits<A: Algorithm>(a: &A, state: &mut Option<A::State>, now: Nanos, n: u64) -> Vec<bool> {
    (0..n).map(|_| check_slot(a, state, now, 1).unwrap().allowed).collect()
}

/// 1. Sliding window log, limit 10 per minute.
#[test]
fn sliding_log_ten_per_minute() {
    let log = SlidingLog::new(Quota::per_minute(10).unwrap()).unwrap();
    let mut s = None;
    assert_eq!(hits(&log, &mut s, at(0, 0, 10), 1), [true]);
    assert_eq!(hits(&log, &mut s, at(0, 0, 20), 2), [true; 2]);
    assert_eq!(hits(&log, &mut s, at(0, 0, 30), 4), [true; 4]);
    assert_eq!(hits(&log, &mut s, at(0, 0, 50), 3), [true; 3]);
    assert_eq!(s.as_ref().unwrap().entries().map(|e| e.cost).sum::<u64>(), 10, "10 in the log");
    // 00:01:11: the 10th newest entry (00:00:10) is 61 s old, so it has expired.
    assert_eq!(hits(&log, &mut s, at(0, 1, 11), 1), [true]);
    // 00:01:12: the 10th newest entry is now 00:00:20, only 52 s old.
    let d = check_slot(&log, &mut s, at(0, 1, 12), 1).unwrap();
    assert!(!d.allowed);
    // It stops counting once older than 60 s: at 00:01:20 plus one nanosecond.
    assert_eq!(d.retry_after, Nanos::from_secs(8) + Nanos::new(1));
}

/// An entry exactly `duration` old still counts.
#[test]
fn sliding_log_entry_exactly_one_window_old_still_counts() {
    let log = SlidingLog::new(Quota::per_minute(1).unwrap()).unwrap();
    let mut s = None;
    assert!(check_slot(&log, &mut s, at(0, 0, 0), 1).unwrap().allowed);
    assert!(!log.peek(s.as_ref(), at(0, 1, 0), 1).unwrap().allowed);
    assert!(log.peek(s.as_ref(), at(0, 1, 0) + Nanos::new(1), 1).unwrap().allowed);
}

/// Section 1, the sliding window counter at 100 per minute with current 80 and previous 40:
/// from stored counts, and from real hits that produce them.
#[test]
fn sliding_window_counter_hundred_per_minute() {
    let sw = SlidingWindow::new(Quota::per_minute(100).unwrap());
    let state = SlidingWindowState { start: at(0, 1, 0), current: 80, previous: 40 };
    let d30 = sw.peek(Some(&state), at(0, 1, 30), 1).unwrap();
    assert!(!d30.allowed, "30 s in: floor(80 + 40 * 0.5) = 100");
    assert_eq!(d30.remaining, 0);
    let d40 = sw.peek(Some(&state), at(0, 1, 40), 1).unwrap();
    assert!(d40.allowed, "40 s in: floor(80 + 13.33) = 93");
    assert_eq!(d40.remaining, 100 - 93 - 1);

    // The same counts from hits: 40 in the previous window, 80 in the current one.
    let mut s = None;
    assert_eq!(hits(&sw, &mut s, at(0, 0, 5), 40), [true; 40]);
    assert_eq!(hits(&sw, &mut s, at(0, 1, 30), 80), [true; 80]);
    assert_eq!(s, Some(state));
    assert!(!check_slot(&sw, &mut s, at(0, 1, 30), 1).unwrap().allowed);
    assert!(check_slot(&sw, &mut s, at(0, 1, 40), 1).unwrap().allowed);
}

/// A hit exactly at a window boundary belongs to the new window.
#[test]
fn sliding_window_boundary_hit_belongs_to_the_new_window() {
    let sw = SlidingWindow::new(Quota::per_minute(100).unwrap());
    let mut s = None;
    check_slot(&sw, &mut s, at(0, 1, 0), 1).unwrap();
    assert_eq!(s.unwrap(), SlidingWindowState { start: at(0, 1, 0), current: 1, previous: 0 });
}

/// 1. The second worked example: 10 per minute, current 10, previous 40, 30 s in: rate 30.
#[test]
fn sliding_window_rate_is_thirty() {
    let sw = SlidingWindow::new(Quota::per_minute(10).unwrap());
    let state = SlidingWindowState { start: at(0, 1, 0), current: 10, previous: 40 };
    assert_eq!(sw.rate(Some(&state), at(0, 1, 30)), 30.0);
    // The same through the gateway-style counters.
    let policy = Policy::single(AnyAlgorithm::SlidingWindow(sw));
    let mut node = SyncedLimiter::new("ns", policy, SyncRate::Every(Nanos::from_secs(1))).unwrap();
    assert_eq!(node.increment("k", 0, at(0, 0, 30), 40), Some(40.0));
    assert_eq!(node.increment("k", 0, at(0, 1, 10), 10), Some(10.0 + 40.0 * (50.0 / 60.0)));
    assert_eq!(node.rate("k", 0, at(0, 1, 30)), 30.0);
}

/// 1. Fixed window: GitHub's 5000 per clock hour, and the 2x burst across a boundary.
#[test]
fn fixed_window_github_hour_and_boundary_burst() {
    let fw = FixedWindow::new(Quota::per_hour(5000).unwrap());
    let mut s = None;
    assert!(hits(&fw, &mut s, at(0, 59, 59), 5000).iter().all(|&a| a));
    let d = check_slot(&fw, &mut s, at(0, 59, 59), 1).unwrap();
    assert!(!d.allowed);
    assert_eq!((d.reset_at, d.retry_after), (at(1, 0, 0), Nanos::from_secs(1)));
    // Two seconds later, a whole new hour: 10,000 admitted within two seconds.
    assert!(hits(&fw, &mut s, at(1, 0, 0), 5000).iter().all(|&a| a));
}

/// 1. Day-long windows: an explicit offset, never a local time zone.
#[test]
fn fixed_window_daily_with_explicit_offset() {
    let day = Quota::per_day(200).unwrap();
    let fw = FixedWindow::with_offset(day, Nanos::from_secs(9 * 3600)).unwrap();
    let d = fw.check(None, Nanos::from_secs(86_400 * 100 + 8 * 3600), 1).unwrap().decision;
    assert_eq!(d.reset_at, Nanos::from_secs(86_400 * 100 + 9 * 3600), "turns over at 09:00 UTC");
}

/// 1. Token bucket, the three real uses.
#[test]
fn token_bucket_stripe_openai_and_chat() {
    // Stripe: capacity 500, one token every 0.01 s.
    let stripe = TokenBucket::new(500, 1, Nanos::from_millis(10)).unwrap();
    assert_eq!(stripe, TokenBucket::from_quota(Quota::per_second(100).unwrap().with_burst(500).unwrap()).unwrap());
    let mut s = None;
    let t0 = at(0, 0, 0);
    assert_eq!(hits(&stripe, &mut s, t0, 501).iter().filter(|&&a| a).count(), 500, "bursts of 500");
    // Then 100 per second sustained: over the next 10 s, exactly 1000 more.
    let mut admitted = 0;
    for ms in 1..=10_000u64 {
        admitted += hits(&stripe, &mut s, t0 + Nanos::from_millis(ms), 1).iter().filter(|&&a| a).count();
    }
    assert_eq!(admitted, 1000);

    // OpenAI free tier: capacity 200, refill interval 86400 s / 200, one token at a time.
    let openai = TokenBucket::from_quota(Quota::per_day(200).unwrap()).unwrap();
    assert_eq!((openai.limit(), openai.interval(), openai.refill_amount()), (200, Nanos::from_secs(432), 1));
    let mut s = None;
    assert_eq!(hits(&openai, &mut s, t0, 201).iter().filter(|&&a| a).count(), 200);
    let d = check_slot(&openai, &mut s, t0, 1).unwrap();
    assert_eq!(d.retry_after, Nanos::from_secs(432));

    // Chat demo: capacity 3, one token every 4 s: bursts of 3, one message per 4 s long term.
    let chat = TokenBucket::new(3, 1, Nanos::from_secs(4)).unwrap();
    let mut s = None;
    assert_eq!(hits(&chat, &mut s, t0, 4), [true, true, true, false]);
    assert_eq!(hits(&chat, &mut s, t0 + Nanos::from_secs(4), 2), [true, false]);
    assert_eq!(hits(&chat, &mut s, t0 + Nanos::from_secs(7), 1), [false]);
    assert_eq!(hits(&chat, &mut s, t0 + Nanos::from_secs(8), 1), [true]);
}

/// 1. GCRA: a fresh key admits exactly `burst` hits at one instant, and the exact wait is known.
#[test]
fn gcra_fresh_key_admits_exactly_burst() {
    for (limit, burst) in [(10u64, 1u64), (10, 5), (100, 500), (1_000_000, 3)] {
        let gcra = Gcra::new(Quota::per_second(limit).unwrap().with_burst(burst).unwrap()).unwrap();
        let mut s = None;
        let t = at(0, 0, 0);
        let admitted = hits(&gcra, &mut s, t, burst + 1);
        assert_eq!(admitted.iter().filter(|&&a| a).count() as u64, burst);
        let d = check_slot(&gcra, &mut s, t, 1).unwrap();
        assert_eq!(d.retry_after, gcra.emission_interval());
        assert!(!gcra.peek(s.as_ref(), t + d.retry_after - Nanos::new(1), 1).unwrap().allowed);
        assert!(gcra.peek(s.as_ref(), t + d.retry_after, 1).unwrap().allowed);
    }
    // n above burst can never fit.
    let gcra = Gcra::new(Quota::per_second(10).unwrap().with_burst(5).unwrap()).unwrap();
    assert!(gcra.check(None, Nanos::ZERO, 6).is_err());
}

/// 2. Several limits at once: 10/s + 120/min + 240/h for one key, and two keys at once.
#[test]
fn policy_ten_per_second_120_per_minute_240_per_hour() {
    let fw = |q: &str| AnyAlgorithm::FixedWindow(FixedWindow::new(q.parse().unwrap()));
    let policy = Policy::new(vec![
        Limit::new("second", fw("10/s")).unwrap(),
        Limit::new("minute", fw("120/m")).unwrap(),
        Limit::new("hour", fw("240/h")).unwrap(),
    ])
    .unwrap();
    let mut limiter = Limiter::in_memory(policy);
    let keys = ["ip:1.2.3.4", "user:42"];
    let mut admitted = 0;
    let mut blocked_by = std::collections::BTreeMap::new();
    // 20 hits a second for an hour.
    for sec in 0..3600u64 {
        for _ in 0..20 {
            let d = limiter.check(&keys, at(0, 0, 0) + Nanos::from_secs(sec), 1).unwrap();
            if d.allowed {
                admitted += 1;
            } else {
                *blocked_by.entry(limiter.policy().limit_name(d.binding).to_string()).or_insert(0) += 1;
            }
        }
    }
    assert_eq!(admitted, 240, "the hourly limit binds in the end");
    assert!(blocked_by.contains_key("second") && blocked_by.contains_key("minute") && blocked_by.contains_key("hour"));
}

/// 3. Eventually consistent counting: node diffs pushed to a central store and read back.
#[test]
fn gateway_sync_pushes_diffs_and_reads_back_merged_counts() {
    let policy = Policy::single(AnyAlgorithm::SlidingWindow(SlidingWindow::new(Quota::per_minute(10).unwrap())));
    let mut central = CentralCounters::default();
    let mut nodes: Vec<_> =
        (0..2).map(|_| SyncedLimiter::new("ns", policy.clone(), SyncRate::from_millis(100)).unwrap()).collect();
    let t = at(0, 0, 0);
    for node in nodes.iter_mut() {
        for _ in 0..3 {
            assert!(node.check(&["k"], t, 1).unwrap().allowed);
        }
        central.push_diffs(&node.take_diffs(t));
    }
    for node in nodes.iter_mut() {
        node.apply_merged(&central.counters("ns", &["k"], t), t);
        assert_eq!(node.rate("k", 0, t), 6.0);
    }
    assert_eq!(central.window("ns", "k", 0, t), 6);
    assert!(SyncRate::from_millis(0) == SyncRate::Synchronous && SyncRate::from_millis(-1) == SyncRate::LocalOnly);
}
