//! Writes the cross-runtime equivalence fixture: a seeded trace of hits over many keys and
//! every algorithm, with the decision the native crate makes for each, one CSV line per hit:
//! `limiter,key,now_ms,cost,allowed,remaining,reset_at_ms,retry_after_ms` (times rounded up to
//! whole ms, as the JavaScript layer reports them). tests/js/equivalence.test.mjs replays it
//! through the npm package and expects identical decisions.
//!
//!     cargo run --release --example equivalence_fixture -- HITS > fixture.csv
use std::io::Write;

use tollgate::policy::Policy;
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

fn main() {
    let hits: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(120_000);
    let mut limiters: Vec<Limiter> = LIMITERS
        .iter()
        .map(|&(algorithm, quota, burst, precision)| {
            let kind: Kind = algorithm.parse().unwrap();
            let quota: Quota = quota.parse().unwrap();
            let spec = LimitSpec {
                burst: (burst > 0).then_some(burst),
                precision: (precision > 0).then(|| Nanos::from_millis(precision)),
                ..LimitSpec::new(kind, quota.limit(), quota.window())
            };
            Limiter::in_memory(Policy::single(AnyAlgorithm::from_spec(&spec).unwrap()))
        })
        .collect();
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
        let l = (next() % LIMITERS.len() as u64) as usize;
        // A few hot keys that hit their limits, and a long tail of cold ones.
        let key = if next() % 4 == 0 { format!("cold{}", next() % 2_000) } else { format!("hot{}", next() % 16) };
        now_ms += next() % 2;
        let cost = 1 + next() % 3;
        let d = limiters[l].check(&[key.as_str()], Nanos::from_millis(now_ms), cost).unwrap().decision;
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
