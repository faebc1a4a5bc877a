//! Leased quota (`tollgate::quota_lease`): under any interleaving of grants, give-backs,
//! admissions from slices, lapsed leases and vanished holders, the hits admitted in a window
//! never exceed its limit, for one key and across many keys; and the ledger's bytes survive
//! a restart.

use std::collections::HashMap;

use proptest::prelude::*;
use tollgate::algorithms::{AnyAlgorithm, FixedWindow, FixedWindowFirstHit, SlidingLog};
use tollgate::quota_lease::QuotaLedger;
use tollgate::{Limit, Nanos, Policy, Quota};

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
    let mut ledger = QuotaLedger::for_policy(&p).unwrap();
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
                let mut fresh = QuotaLedger::for_policy(&p).unwrap();
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
    let mut ledger = QuotaLedger::for_policy(&policy(10)).unwrap();
    let t = Nanos::from_millis(1_000_000_900);
    let g = ledger.exchange("a", 0, 1, 5, Nanos::from_secs(60), t).unwrap();
    assert_eq!((g.granted, g.expires_at, g.window_end), (5, Nanos::from_secs(1_000_001), Nanos::from_secs(1_000_001)));
}

#[test]
fn a_crashed_holder_costs_its_slice_in_its_window_only() {
    let mut ledger = QuotaLedger::for_policy(&policy(10)).unwrap();
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
    let mut ledger = QuotaLedger::for_policy(&policy(10)).unwrap();
    let t = Nanos::from_secs(3_000_000);
    for h in ["a", "b", "c", "d"] {
        ledger.exchange(h, 0, 0, 0, Nanos::from_secs(1), t).unwrap();
    }
    // An equal split of 10 among 5 is 2; a hit of cost 4 still gets its 4.
    assert_eq!(ledger.exchange("e", 0, 4, 0, Nanos::from_secs(1), t).unwrap().granted, 4);
    assert_eq!(ledger.exchange("f", 0, 1, 9, Nanos::from_secs(1), t).unwrap().granted, 1);
}

#[test]
fn only_clock_aligned_fixed_windows_are_leased() {
    let q = Quota::per_second(10).unwrap();
    let log = Policy::new(vec![
        fixed("a", 5, 1_000),
        Limit::new("b", AnyAlgorithm::SlidingLog(SlidingLog::new(q).unwrap())).unwrap(),
    ])
    .unwrap();
    assert_eq!(QuotaLedger::for_policy(&log).unwrap_err().limit, 1);
    let first_hit = Policy::single(AnyAlgorithm::FixedWindowFirstHit(FixedWindowFirstHit::new(q)));
    assert_eq!(QuotaLedger::for_policy(&first_hit).unwrap_err().limit, 0);
}
