//! Leased quota (`tollgate::quota_lease`): under any interleaving of grants, give-backs,
//! admissions from slices, lapsed leases, vanished holders and restarts, for one key and
//! across many keys, the hits admitted never exceed the bound the module documents: a
//! window's limit for clock-aligned fixed windows (the counters book), the algorithm's own
//! bound over an interval one lease longer for every other algorithm (the charged book);
//! the ledger's bytes survive a restart and a peek changes nothing.

use std::collections::HashMap;

mod support;

use proptest::prelude::*;
use support::{algorithm, make};
use tollgate::algorithms::{AnyAlgorithm, FixedWindow, FixedWindowFirstHit, SlidingLog};
use tollgate::quota_lease::QuotaLedger;
use tollgate::{Algorithm, Kind, Limit, Nanos, Policy, Quota};

fn fixed(name: &str, limit: u64, window_ms: u64) -> Limit {
    let q = Quota::new(limit, Nanos::from_millis(window_ms)).unwrap();
    Limit::new(name, AnyAlgorithm::FixedWindow(FixedWindow::new(q))).unwrap()
}

/// Two limits: `limit` per second and `2 * limit` per 3 seconds.
fn policy(limit: u64) -> Policy {
    Policy::new(vec![fixed("s", limit, 1_000), fixed("3s", 2 * limit, 3_000)]).unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    /// A holder gives back part of its slice and asks for more.
    Exchange { holder: usize, give_back: u64, need: u64, want: u64, ttl_ms: u64 },
    /// A holder admits a hit of `cost` from its slice, if it can.
    Admit { holder: usize, cost: u64 },
    /// A holder vanishes with its slice (a crashed isolate).
    Crash { holder: usize },
    /// The authority restarts from its bytes.
    Restart,
}

fn op(holders: usize) -> impl Strategy<Value = (u64, Op)> {
    let h = 0..holders;
    let step = prop_oneof![Just(0u64), 0u64..50, 0u64..1_500];
    let op = prop_oneof![
        1 => (h.clone(), 0u64..20, 0u64..5, 0u64..30, 1u64..2_000).prop_map(|(holder, give_back, need, want, ttl_ms)| {
            Op::Exchange { holder, give_back, need, want, ttl_ms }
        }),
        4 => (h.clone(), 1u64..4).prop_map(|(holder, cost)| Op::Admit { holder, cost }),
        1 => h.prop_map(|holder| Op::Crash { holder }),
        1 => Just(Op::Restart),
    ];
    (step, op)
}

/// A holder's own view: its units and when its lease lapses.
#[derive(Clone, Copy, Default)]
struct Local {
    units: u64,
    until: Nanos,
}

/// Hits admitted per (limit index, window start).
type Admitted = HashMap<(usize, u64), u64>;

fn admit(admitted: &mut Admitted, now: Nanos, cost: u64) {
    for (i, window) in [(0usize, 1_000_000_000u64), (1, 3_000_000_000)] {
        *admitted.entry((i, now.as_nanos() / window * window)).or_default() += cost;
    }
}

/// Runs `ops` for one key; returns what was admitted per window.
fn run(limit: u64, start: Nanos, ops: &[(u64, Op)], names: &[String]) -> Admitted {
    let p = policy(limit);
    let mut ledger = QuotaLedger::for_policy(&p);
    let mut locals = vec![Local::default(); names.len()];
    let mut admitted = Admitted::new();
    let mut now = start;
    for (step, op) in ops {
        now = now + Nanos::from_millis(*step);
        match *op {
            Op::Exchange { holder, give_back, need, want, ttl_ms } => {
                let l = &mut locals[holder];
                let live = now < l.until;
                let give_back = if live { give_back.min(l.units) } else { 0 };
                let g =
                    ledger.exchange(&names[holder], give_back, need, want, Nanos::from_millis(ttl_ms), now).unwrap();
                assert!(g.returned <= give_back);
                // What the authority did not take back stays the holder's (it counts as spent).
                let kept = if live { l.units - g.returned } else { 0 };
                *l = Local { units: kept + g.granted, until: g.expires_at };
                assert!(l.units <= g.held, "a holder never has more than its lease holds");
            }
            Op::Admit { holder, cost } => {
                let l = &mut locals[holder];
                if now < l.until && l.units >= cost {
                    l.units -= cost;
                    admit(&mut admitted, now, cost);
                }
            }
            Op::Crash { holder } => locals[holder] = Local::default(),
            Op::Restart => {
                let bytes = ledger.encode();
                let mut fresh = QuotaLedger::for_policy(&p);
                fresh.restore(&bytes).unwrap();
                assert_eq!(fresh, ledger);
                ledger = fresh;
            }
        }
        let windows = ledger.windows(now);
        assert!(windows[0].granted <= limit && windows[1].granted <= 2 * limit);
    }
    admitted
}

fn assert_within(admitted: &Admitted, limit: u64) {
    for (&(i, start), &n) in admitted {
        let max = if i == 0 { limit } else { 2 * limit };
        assert!(n <= max, "limit {i}, window at {start}: {n} admitted, limit {max}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_window_never_admits_more_than_its_limit(
        limit in 1u64..40,
        ops in prop::collection::vec(op(6), 1..400),
    ) {
        let names: Vec<String> = (0..6).map(|i| format!("isolate-{i}")).collect();
        let admitted = run(limit, Nanos::from_secs(1_000_000), &ops, &names);
        assert_within(&admitted, limit);
    }
}

/// Deterministic pseudo-random numbers (xorshift), so the many-keys run needs no strategy.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 2,000 keys, each with its own ledger and 8 holders, 100 random steps each.
#[test]
fn two_thousand_keys_each_stay_within_their_limits() {
    let names: Vec<String> = (0..8).map(|i| format!("isolate-{i}")).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for key in 0..2_000u64 {
        let limit = 1 + rng.next(100);
        let ops: Vec<(u64, Op)> = (0..100)
            .map(|_| {
                let holder = rng.next(8) as usize;
                let step = [0, rng.next(20), rng.next(700)][rng.next(3) as usize];
                let op = match rng.next(10) {
                    0..=2 => Op::Exchange {
                        holder,
                        give_back: rng.next(10),
                        need: rng.next(4),
                        want: rng.next(50),
                        ttl_ms: 1 + rng.next(1_500),
                    },
                    3 => Op::Crash { holder },
                    4 => Op::Restart,
                    _ => Op::Admit { holder, cost: 1 + rng.next(3) },
                };
                (step, op)
            })
            .collect();
        let admitted = run(limit, Nanos::from_secs(1_000_000 + key * 7), &ops, &names);
        assert_within(&admitted, limit);
    }
}

#[test]
fn a_slice_lapses_at_the_end_of_the_earliest_window() {
    let mut ledger = QuotaLedger::for_policy(&policy(10));
    let t = Nanos::from_millis(1_000_000_900);
    let g = ledger.exchange("a", 0, 1, 5, Nanos::from_secs(60), t).unwrap();
    assert_eq!((g.granted, g.expires_at, g.window_end), (5, Nanos::from_secs(1_000_001), Nanos::from_secs(1_000_001)));
}

#[test]
fn a_crashed_holder_costs_its_slice_in_its_window_only() {
    let mut ledger = QuotaLedger::for_policy(&policy(10));
    let t = Nanos::from_secs(3_000_000);
    assert_eq!(ledger.exchange("crashes", 0, 1, 10, Nanos::from_millis(100), t).unwrap().granted, 10);
    // Its lease lapses; its units stay spent in this window.
    let later = t + Nanos::from_millis(200);
    assert_eq!(ledger.exchange("b", 0, 1, 10, Nanos::from_millis(100), later).unwrap().granted, 0);
    // The next second's window starts from zero (the 3-second one has 10 of its 20 left).
    let next = t + Nanos::from_secs(1);
    assert_eq!(ledger.exchange("b", 0, 1, 20, Nanos::from_millis(100), next).unwrap().granted, 10);
}

#[test]
fn a_hit_gets_its_need_beyond_an_equal_split() {
    let mut ledger = QuotaLedger::for_policy(&policy(10));
    let t = Nanos::from_secs(3_000_000);
    for h in ["a", "b", "c", "d"] {
        ledger.exchange(h, 0, 0, 0, Nanos::from_secs(1), t).unwrap();
    }
    // An equal split of 10 among 5 is 2; a hit of cost 4 still gets its 4.
    assert_eq!(ledger.exchange("e", 0, 4, 0, Nanos::from_secs(1), t).unwrap().granted, 4);
    assert_eq!(ledger.exchange("f", 0, 1, 9, Nanos::from_secs(1), t).unwrap().granted, 1);
}

#[test]
fn clock_aligned_fixed_windows_are_counted_and_every_other_policy_is_charged() {
    let q = Quota::per_second(10).unwrap();
    assert!(QuotaLedger::for_policy(&policy(10)).counts_windows());
    let log = Policy::new(vec![
        fixed("a", 5, 1_000),
        Limit::new("b", AnyAlgorithm::SlidingLog(SlidingLog::new(q).unwrap())).unwrap(),
    ])
    .unwrap();
    let first_hit = Policy::single(AnyAlgorithm::FixedWindowFirstHit(FixedWindowFirstHit::new(q)));
    for p in [log, first_hit] {
        let mut ledger = QuotaLedger::for_policy(&p);
        assert!(!ledger.counts_windows());
        assert!(ledger.windows(Nanos::ZERO).is_empty());
        // Bytes of the other book do not restore: the object starts a fresh ledger.
        assert!(ledger.restore(&QuotaLedger::for_policy(&policy(10)).encode()).is_err());
    }
}

// ---- The charged book: every other algorithm ----

/// A holder's own view, as the Worker's isolate keeps it: its grants (units, lease end),
/// oldest first; it spends the oldest first and gives back from the newest.
#[derive(Clone, Default)]
struct Tranches(Vec<(u64, Nanos)>);

impl Tranches {
    fn lapse(&mut self, now: Nanos) {
        self.0.retain(|&(u, until)| u > 0 && now < until);
    }
    fn total(&self) -> u64 {
        self.0.iter().map(|t| t.0).sum()
    }
    fn take(&mut self, mut n: u64) {
        for t in &mut self.0 {
            let k = n.min(t.0);
            (t.0, n) = (t.0 - k, n - k);
        }
        self.0.retain(|t| t.0 > 0);
    }
    fn give_back(&mut self, mut n: u64) {
        for t in self.0.iter_mut().rev() {
            let k = n.min(t.0);
            (t.0, n) = (t.0 - k, n - k);
        }
        self.0.retain(|t| t.0 > 0);
    }
}

/// Runs `ops` for one key under `p` (every exchange with lease `ttl`), either book; returns
/// the hits admitted (time, cost).
fn run_charged(p: &Policy, ttl: Nanos, start: Nanos, ops: &[(u64, Op)], names: &[String]) -> Vec<(Nanos, u64)> {
    let mut ledger = QuotaLedger::for_policy(p);
    let mut locals = vec![Tranches::default(); names.len()];
    let mut admitted = Vec::new();
    let mut now = start;
    for (step, op) in ops {
        now = now + Nanos::new(*step);
        match *op {
            Op::Exchange { holder, give_back, need, want, .. } => {
                let l = &mut locals[holder];
                l.lapse(now);
                let give_back = give_back.min(l.total());
                let before = ledger.clone();
                let g = ledger.exchange(&names[holder], give_back, need, want, ttl, now).unwrap();
                assert_eq!(g.returned, give_back, "what a holder holds live, the ledger holds");
                assert_eq!(g.extends, ledger.counts_windows());
                assert!(g.expires_at <= now + ttl);
                l.give_back(g.returned);
                if g.extends {
                    // The counters book: the new lease covers everything the holder holds.
                    l.0.iter_mut().for_each(|t| t.1 = g.expires_at);
                }
                if g.granted > 0 {
                    l.0.push((g.granted, g.expires_at));
                }
                // A holder never keeps more than the ledger holds for it: the oldest go first.
                let excess = l.total().saturating_sub(g.held);
                l.take(excess);
                // A peek changes nothing and sees what the exchange left.
                let s = ledger.standing(&names[holder], now);
                assert_eq!((s.held, s.left), (g.held, g.left));
                assert!(before.standing(&names[holder], now).held >= give_back);
            }
            Op::Admit { holder, cost } => {
                let l = &mut locals[holder];
                l.lapse(now);
                if l.total() >= cost {
                    l.take(cost);
                    admitted.push((now, cost));
                }
            }
            Op::Crash { holder } => locals[holder] = Tranches::default(),
            Op::Restart => {
                let bytes = ledger.encode();
                let mut fresh = QuotaLedger::for_policy(p);
                fresh.restore(&bytes).unwrap();
                assert_eq!(fresh, ledger);
                ledger = fresh;
            }
        }
    }
    admitted
}

fn sum_in(hits: &[(Nanos, u64)], from: Nanos, to_inclusive: Nanos) -> u64 {
    hits.iter().filter(|(t, _)| *t >= from && *t <= to_inclusive).map(|(_, c)| c).sum()
}

/// The bound the module docs state for `a` leased with `ttl`, over the hits admitted.
fn assert_leased_bound(a: &AnyAlgorithm, hits: &[(Nanos, u64)], ttl: Nanos) {
    let (limit, window) = a.advertised_quota();
    // Sliding windows: their limit plus the units granted in the `ttl` before.
    let sliding = limit * (1 + ttl.as_nanos().div_ceil(window.as_nanos()));
    for &(t, _) in hits {
        match a {
            AnyAlgorithm::FixedWindow(fw) => {
                let al = fw.alignment();
                let got: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                assert!(got <= limit, "fixed window: {got} in one window, limit {limit}");
            }
            AnyAlgorithm::FixedWindowFirstHit(_) => {
                let got = sum_in(hits, t, t + window - Nanos::new(1));
                assert!(got <= 2 * limit, "first-hit window: {got} within one window length");
            }
            AnyAlgorithm::SlidingWindow(sw) => {
                let al = sw.alignment();
                let got: u64 = hits.iter().filter(|(u, _)| al.index(*u) == al.index(t)).map(|(_, c)| c).sum();
                assert!(got <= sliding, "sliding window: {got} in one aligned window, bound {sliding}");
            }
            AnyAlgorithm::SlidingLog(_) => {
                let got = sum_in(hits, t.saturating_sub(window), t);
                assert!(got <= sliding, "sliding log: {got} in a closed window ending at {t:?}, bound {sliding}");
            }
            AnyAlgorithm::SlidingBuckets(sb) => {
                let al = sb.alignment();
                let first = al.index(t);
                let span: u64 = hits
                    .iter()
                    .filter(|(u, _)| al.index(*u) >= first && al.index(*u) < first + sb.bucket_count())
                    .map(|(_, c)| c)
                    .sum();
                assert!(span <= sliding, "sliding buckets: {span} in {} buckets, bound {sliding}", sb.bucket_count());
            }
            AnyAlgorithm::TokenBucket(tb) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let refills = (u - t + ttl).as_nanos().div_ceil(tb.interval().as_nanos());
                    let bound = tb.limit() + tb.refill_amount() * refills;
                    let got = sum_in(hits, t, u);
                    assert!(got <= bound, "token bucket: {got} in [{t:?}, {u:?}], bound {bound}");
                }
            }
            AnyAlgorithm::Gcra(g) => {
                for &(u, _) in hits.iter().filter(|(u, _)| *u >= t) {
                    let bound = g.burst() + (u - t + ttl).as_nanos() / g.emission_interval().as_nanos();
                    let got = sum_in(hits, t, u);
                    assert!(got <= bound, "gcra: {got} in [{t:?}, {u:?}], bound {bound}");
                }
            }
            // Leased mode refuses a concurrency limit (tollgate::spec::parse_lease_ttl).
            _ => {}
        }
    }
}

/// Steps and ops on a nanosecond scale (the small windows of [`algorithm`]).
fn charged_op(holders: usize) -> impl Strategy<Value = (u64, Op)> {
    let h = 0..holders;
    let step = prop_oneof![Just(0u64), 0u64..10, 0u64..80];
    let op = prop_oneof![
        3 => (h.clone(), 0u64..10, 0u64..4, 0u64..16).prop_map(|(holder, give_back, need, want)| {
            Op::Exchange { holder, give_back, need, want, ttl_ms: 0 }
        }),
        3 => (h.clone(), 1u64..4).prop_map(|(holder, cost)| Op::Admit { holder, cost }),
        1 => h.prop_map(|holder| Op::Crash { holder }),
        1 => Just(Op::Restart),
    ];
    (step, op)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_algorithm_leased_keeps_its_documented_bound(
        a in algorithm(),
        ttl in 1u64..=80,
        ops in prop::collection::vec(charged_op(5), 1..300),
    ) {
        let names: Vec<String> = (0..5).map(|i| format!("isolate-{i}")).collect();
        let p = Policy::single(a);
        let admitted = run_charged(&p, Nanos::new(ttl), Nanos::new(1_000_000), &ops, &names);
        assert_leased_bound(&a, &admitted, Nanos::new(ttl));
    }

    #[test]
    fn several_limits_leased_each_keep_their_bound(
        a in algorithm(),
        b in algorithm(),
        ttl in 1u64..=80,
        ops in prop::collection::vec(charged_op(4), 1..200),
    ) {
        let names: Vec<String> = (0..4).map(|i| format!("isolate-{i}")).collect();
        let p = Policy::new(vec![Limit::new("a", a).unwrap(), Limit::new("b", b).unwrap()]).unwrap();
        let admitted = run_charged(&p, Nanos::new(ttl), Nanos::new(1_000_000), &ops, &names);
        assert_leased_bound(&a, &admitted, Nanos::new(ttl));
        assert_leased_bound(&b, &admitted, Nanos::new(ttl));
    }
}

/// 1,400 keys, 200 of each algorithm, each with its own ledger and 8 holders, 150 random steps.
#[test]
fn many_keys_of_every_algorithm_each_stay_within_their_bound() {
    let names: Vec<String> = (0..8).map(|i| format!("isolate-{i}")).collect();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for key in 0..1_400u64 {
        let kind = Kind::ALL[(key % 7) as usize];
        let a = make(kind, 1 + rng.next(8), 1 + rng.next(60), 1 + rng.next(6), rng.next(u64::MAX), rng.next(u64::MAX));
        let ttl = Nanos::new(1 + rng.next(80));
        let ops: Vec<(u64, Op)> = (0..150)
            .map(|_| {
                let holder = rng.next(8) as usize;
                let step = [0, rng.next(5), rng.next(40)][rng.next(3) as usize];
                let op = match rng.next(10) {
                    0..=2 => Op::Exchange {
                        holder,
                        give_back: rng.next(10),
                        need: rng.next(4),
                        want: rng.next(12),
                        ttl_ms: 0,
                    },
                    3 => Op::Crash { holder },
                    4 => Op::Restart,
                    _ => Op::Admit { holder, cost: 1 + rng.next(3) },
                };
                (step, op)
            })
            .collect();
        let admitted = run_charged(&Policy::single(a), ttl, Nanos::new(1_000_000 + key * 7), &ops, &names);
        assert_leased_bound(&a, &admitted, ttl);
    }
}

#[test]
fn a_first_hit_window_slice_lapses_at_its_window_end() {
    let q = Quota::new(10, Nanos::from_secs(1)).unwrap();
    let p = Policy::single(AnyAlgorithm::FixedWindowFirstHit(FixedWindowFirstHit::new(q)));
    let mut ledger = QuotaLedger::for_policy(&p);
    let t = Nanos::from_millis(1_000_000_300);
    let g = ledger.exchange("a", 0, 1, 4, Nanos::from_secs(60), t).unwrap();
    // The key's window began with this grant: the slice lapses a second later, not in a minute.
    assert_eq!((g.granted, g.expires_at, g.left), (4, t + Nanos::from_secs(1), 6));
    let h = ledger.exchange("b", 0, 1, 9, Nanos::from_secs(60), t + Nanos::from_millis(900)).unwrap();
    assert_eq!((h.granted, h.expires_at), (3, t + Nanos::from_secs(1)));
}

#[test]
fn a_gcra_slice_is_charged_at_its_grant_and_comes_back_while_it_drains() {
    let g = tollgate::Gcra::new(Quota::per_second(10).unwrap()).unwrap();
    let p = Policy::single(AnyAlgorithm::Gcra(g));
    let mut ledger = QuotaLedger::for_policy(&p);
    let (ttl, t) = (Nanos::from_millis(300), Nanos::from_secs(1_000));
    assert_eq!(ledger.exchange("a", 0, 1, 10, ttl, t).unwrap().granted, 10);
    // Nothing is left to grant; one unit drains every 100 ms.
    let b = ledger.exchange("b", 0, 1, 1, ttl, t).unwrap();
    assert_eq!((b.granted, b.left, b.window_end), (0, 0, t + Nanos::from_millis(100)));
    // 250 ms later two units drained, and a gives back 5 it did not use: 7 are left to grant.
    let later = t + Nanos::from_millis(250);
    let a = ledger.exchange("a", 5, 0, 0, ttl, later).unwrap();
    assert_eq!((a.returned, a.held, a.left), (5, 5, 7));
    // a's tranche lapses at its grant's lease (t + 300 ms), not extended by the exchange.
    assert_eq!(ledger.standing("a", t + ttl).held, 0);
}

#[test]
fn a_sliding_window_gives_back_only_what_no_later_grant_counted_after() {
    let q = Quota::new(10, Nanos::from_secs(1)).unwrap();
    let p = Policy::single(AnyAlgorithm::SlidingLog(SlidingLog::new(q).unwrap()));
    let mut ledger = QuotaLedger::for_policy(&p);
    let (ttl, t) = (Nanos::from_millis(300), Nanos::from_secs(1_000));
    ledger.exchange("a", 0, 4, 4, ttl, t).unwrap();
    ledger.exchange("b", 0, 3, 3, ttl, t + Nanos::from_millis(10)).unwrap();
    // b's are the newest: they come back.
    let b = ledger.exchange("b", 3, 0, 0, ttl, t + Nanos::from_millis(20)).unwrap();
    assert_eq!((b.returned, b.left), (3, 6));
    // a's come back too, now that nothing later is counted.
    assert_eq!(ledger.exchange("a", 4, 0, 0, ttl, t + Nanos::from_millis(20)).unwrap().left, 10);
    // With a later grant counted, a's units stay spent (the ledger never frees another's).
    ledger.exchange("a", 0, 4, 4, ttl, t + Nanos::from_millis(30)).unwrap();
    ledger.exchange("b", 0, 3, 3, ttl, t + Nanos::from_millis(40)).unwrap();
    let a = ledger.exchange("a", 4, 0, 0, ttl, t + Nanos::from_millis(50)).unwrap();
    assert_eq!((a.returned, a.held, a.left), (4, 0, 3));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A clock that goes back and forth never corrupts a ledger: every exchange answers, a
    /// holder never holds more than it was granted and did not give back, and the bytes
    /// restore to the same ledger.
    #[test]
    fn time_going_backwards_never_corrupts_a_ledger(
        a in algorithm(),
        ttl in 1u64..=80,
        steps in prop::collection::vec((-60i64..60, 0usize..3, 0u64..6, 0u64..4, 0u64..12), 1..150),
    ) {
        let p = Policy::single(a);
        let mut ledger = QuotaLedger::for_policy(&p);
        let mut given = [0u64; 3];
        let mut now = 1_000_000i64;
        for (step, holder, give_back, need, want) in steps {
            now += step;
            let name = format!("h{holder}");
            let g = ledger.exchange(&name, give_back, need, want, Nanos::new(ttl), Nanos::new(now as u64)).unwrap();
            given[holder] = given[holder] + g.granted - g.returned;
            prop_assert!(g.held <= given[holder] && g.returned <= give_back);
            let mut back = QuotaLedger::for_policy(&p);
            back.restore(&ledger.encode()).unwrap();
            prop_assert_eq!(&back, &ledger);
        }
    }
}
