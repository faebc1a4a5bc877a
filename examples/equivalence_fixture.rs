//! Writes the cross-runtime equivalence fixture: a seeded trace of hits over many keys and
//! every algorithm, with the decision the native crate makes for each, one CSV line per hit:
//! `limiter,key,now_ms,cost,allowed,remaining,reset_at_ms,retry_after_ms` (times rounded up to
//! whole ms, as the JavaScript layer reports them). tests/js/equivalence.test.mjs replays it
//! through the npm package and expects identical decisions.
//!
//! With `multi`, the hits go to the `MULTI` policies instead and name one to three keys each
//! (`key` is then the keys joined by `+`): all-or-nothing decisions over several keys.
//!
//!     cargo run --release --example equivalence_fixture -- HITS [multi] > fixture.csv
use std::io::Write;

use tollgate::policy::{Limit, Policy};
use tollgate::{AnyAlgorithm, Kind, LimitSpec, Limiter, Nanos, Quota};

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

fn main() {
    let hits: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(120_000);
    let multi = std::env::args().nth(2).as_deref() == Some("multi");
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
    let mut now_ms: u64 = 1_700_000_000_000;
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
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
