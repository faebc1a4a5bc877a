//! Writes the cross-runtime equivalence fixture: a seeded trace of hits over many keys and
//! every algorithm, with the decision the native crate makes for each, one CSV line per hit:
//! `limiter,key,now_ms,cost,allowed,remaining,reset_at_ms,retry_after_ms` (times rounded up to
//! whole ms, as the JavaScript layer reports them). tests/js/equivalence.test.mjs replays it
//! through the npm package and expects identical decisions.
//!
//! With `multi`, the hits go to the `MULTI` policies instead and name one to three keys each
//! (`key` is then the keys joined by `+`): all-or-nothing decisions over several keys.
//!
//! With `reserve`, the hits are reservations and settlements over the LIMITERS (docs/reserve.md),
//! one to two keys each, one CSV line per operation:
//!
//! - `R,limiter,key,now_ms,estimate,allowed,remaining,reset_at_ms,retry_after_ms`: a reservation;
//! - `S,limiter,line,now_ms,actual,` then `allowed,remaining,reset_at_ms,retry_after_ms,refunded,charged,forgiven`
//!   or the error's code: settling the reservation of the trace's line `line` (0-based; at times
//!   one settled already, or on a key reset since);
//! - `X,limiter,key,now_ms`: a reset of the key(s).
//!
//!     cargo run --release --example equivalence_fixture -- HITS [multi|reserve] > fixture.csv
use std::io::Write;

use tollgate::policy::{Limit, Policy};
use tollgate::{Algorithm, AnyAlgorithm, Kind, LimitSpec, Limiter, MemoryStore, Nanos, Quota, Store};

/// (algorithm, quota, burst, precision ms): the same list as the JS test's LIMITERS.
const LIMITERS: [(&str, &str, u64, u64); 7] = [
    ("fixed-window", "20/1s", 0, 0),
    ("fixed-window-first-hit", "15/2s", 0, 0),
    ("sliding-log", "10/1s", 0, 0),
    ("sliding-window", "30/3s", 0, 0),
    ("sliding-buckets", "12/1s", 0, 250),
    ("token-bucket", "50/5s", 8, 0),
    ("gcra", "25/1s", 6, 0),
];

/// The policy of several limits that LIMITERS ends with (the JS test's last entry).
const SEVERAL: [(&str, &str, &str, u64, u64); 2] =
    [("second", "gcra", "8/1s", 4, 0), ("ten-seconds", "sliding-log", "40/10s", 0, 0)];

/// The policies of the `multi` trace (the JS test's MULTI_LIMITERS): one limit with a
/// fixed-size state, one with the sliding log, and SEVERAL.
const MULTI: [(&str, &str, u64, u64); 2] = [("gcra", "5/1s", 3, 0), ("sliding-log", "6/1s", 0, 0)];

fn algorithm(algorithm: &str, quota: &str, burst: u64, precision: u64) -> AnyAlgorithm {
    let kind: Kind = algorithm.parse().unwrap();
    let quota: Quota = quota.parse().unwrap();
    let spec = LimitSpec {
        burst: (burst > 0).then_some(burst),
        precision: (precision > 0).then(|| Nanos::from_millis(precision)),
        ..LimitSpec::new(kind, quota.limit(), quota.window())
    };
    AnyAlgorithm::from_spec(&spec).unwrap()
}

/// A few hot keys that hit their limits, and a long tail of cold ones.
fn key_of(next: &mut impl FnMut() -> u64) -> String {
    if next() % 4 == 0 {
        format!("cold{}", next() % 2_000)
    } else {
        format!("hot{}", next() % 16)
    }
}

fn several() -> Limiter {
    let limits = SEVERAL.iter().map(|&(name, a, q, b, p)| Limit::new(name, algorithm(a, q, b, p)).unwrap()).collect();
    Limiter::in_memory(Policy::new(limits).unwrap())
}

fn several_policy() -> Policy {
    Policy::new(SEVERAL.iter().map(|&(name, a, q, b, p)| Limit::new(name, algorithm(a, q, b, p)).unwrap()).collect())
        .unwrap()
}

/// The `reserve` trace: first, on every limiter, a reservation of one unit on key `debt`
/// settled at once with an actual cost of twice the capacity and one more (the key goes into
/// debt up to its cap and the rest is forgiven), then a reservation on that key, denied
/// while the debt lasts; then reservations of 1 to 4 units on one or two keys of a few hot
/// ones, each settled a few operations later with an actual cost from 0 to twice the estimate
/// (some settled twice, some never), and now and then a reset of a key.
fn reserve_trace(ops: u64, next: &mut impl FnMut() -> u64, out: &mut impl Write) {
    let mut policies: Vec<Policy> =
        LIMITERS.iter().map(|&(a, q, b, p)| Policy::single(algorithm(a, q, b, p))).collect();
    policies.push(several_policy());
    let mut stores: Vec<MemoryStore> = policies.iter().map(|_| MemoryStore::default()).collect();
    // (line, limiter, keys, id, estimate) of the admitted reservations, oldest first.
    let mut open: Vec<(usize, usize, Vec<String>, u64, u64)> = Vec::new();
    let mut settled: Vec<(usize, usize, Vec<String>, u64, u64)> = Vec::new();
    let mut now_ms: u64 = 1_700_000_000_000;
    let mut first = 0;
    for (l, policy) in policies.iter().enumerate() {
        if first + 3 > ops as usize {
            break;
        }
        let now = Nanos::from_millis(now_ms);
        let (id, keys) = (l as u64 + 1, ["debt"]);
        let d = stores[l].update(&keys, now, &mut |st| policy.reserve(st, now, 1, id)).unwrap().unwrap();
        writeln!(out, "R,{l},debt,{now_ms},1,{}", reserved(&d)).unwrap();
        let actual = 1 + 2 * policy.limits().iter().map(|x| x.algorithm().capacity()).min().unwrap_or(1);
        let s = stores[l].update(&keys, now, &mut |st| policy.settle(st, now, id, 1, actual)).unwrap().unwrap();
        writeln!(out, "S,{l},{first},{now_ms},{actual},{}", settlement(&s)).unwrap();
        let d = stores[l].update(&keys, now, &mut |st| policy.reserve(st, now, 1, id + 100)).unwrap().unwrap();
        writeln!(out, "R,{l},debt,{now_ms},1,{}", reserved(&d)).unwrap();
        first += 3;
    }
    for line in first..ops as usize {
        now_ms += next() % 10;
        let now = Nanos::from_millis(now_ms);
        let roll = next() % 10;
        if roll < 4 && !open.is_empty() {
            // Settle an open reservation (or, one time in eight, one settled already).
            let again = next() % 8 == 0 && !settled.is_empty();
            let (at, l, keys, id, estimate) = if again {
                settled[(next() % settled.len() as u64) as usize].clone()
            } else {
                open.remove((next() % open.len() as u64) as usize)
            };
            let actual = next() % (2 * estimate + 1);
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let policy = &policies[l];
            let r = stores[l].update(&refs, now, &mut |st| policy.settle(st, now, id, estimate, actual)).unwrap();
            let outcome = match r {
                Ok(s) => settlement(&s),
                Err(e) => e.code().to_string(),
            };
            writeln!(out, "S,{l},{at},{now_ms},{actual},{outcome}").unwrap();
            if !again {
                settled.push((at, l, keys, id, estimate));
            }
        } else if roll == 4 && next() % 6 == 0 {
            let l = (next() % policies.len() as u64) as usize;
            let key = format!("hot{}", next() % 3);
            stores[l].remove(&[key.as_str()]).unwrap();
            writeln!(out, "X,{l},{key},{now_ms}").unwrap();
        } else {
            let l = (next() % policies.len() as u64) as usize;
            let mut keys = vec![format!("hot{}", next() % 3)];
            if next() % 4 == 0 {
                let k = format!("hot{}", next() % 3);
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
            let estimate = 1 + next() % 4;
            let id = next();
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            let policy = &policies[l];
            let d = stores[l].update(&refs, now, &mut |st| policy.reserve(st, now, estimate, id)).unwrap().unwrap();
            writeln!(out, "R,{l},{},{now_ms},{estimate},{}", keys.join("+"), reserved(&d)).unwrap();
            if d.allowed {
                open.push((line, l, keys, id, estimate));
            }
        }
    }
}

/// A reservation's outcome as the trace writes it: `allowed,remaining,reset_at_ms,retry_after_ms`.
fn reserved(d: &tollgate::policy::PolicyDecision) -> String {
    let s = d.decision;
    format!("{},{},{},{}", d.allowed as u8, s.remaining, s.reset_at.as_millis_ceil(), s.retry_after.as_millis_ceil())
}

/// A settlement's outcome: the figures after it, then `refunded,charged,forgiven`.
fn settlement(s: &tollgate::reserve::Settled) -> String {
    format!("{},{},{},{}", reserved(&s.decision), s.refunded, s.charged, s.forgiven)
}

fn main() {
    let hits: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(120_000);
    let mode = std::env::args().nth(2);
    let multi = mode.as_deref() == Some("multi");
    let singles = if multi { &MULTI[..] } else { &LIMITERS[..] };
    let mut limiters: Vec<Limiter> =
        singles.iter().map(|&(a, q, b, p)| Limiter::in_memory(Policy::single(algorithm(a, q, b, p)))).collect();
    limiters.push(several());
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    if mode.as_deref() == Some("reserve") {
        reserve_trace(hits, &mut next, &mut out);
        return;
    }
    let mut now_ms: u64 = 1_700_000_000_000;
    for _ in 0..hits {
        let l = (next() % limiters.len() as u64) as usize;
        let mut keys = vec![key_of(&mut next)];
        if multi {
            for _ in 0..next() % 3 {
                let k = key_of(&mut next);
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let key = keys.join("+");
        now_ms += next() % 2;
        let cost = 1 + next() % 3;
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let d = limiters[l].check(&refs, Nanos::from_millis(now_ms), cost).unwrap().decision;
        writeln!(
            out,
            "{l},{key},{now_ms},{cost},{},{},{},{}",
            d.allowed as u8,
            d.remaining,
            d.reset_at.as_millis_ceil(),
            d.retry_after.as_millis_ceil()
        )
        .unwrap();
    }
}
