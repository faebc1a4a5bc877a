//! Every algorithm on the same bursty chat trace: "3 messages per 12 seconds".
//!
//! Run it with `make example` (or `cargo run --example chat_trace`). Each column is one
//! algorithm; `#` is an admitted message, `.` a blocked one. The last lines show how many
//! each admitted, and the most it admitted in any 12-second interval: the fixed windows let
//! through twice the limit around a boundary, the sliding log never more than the limit.

use tollgate::algorithm::check_slot;
use tollgate::{Algorithm, AnyAlgorithm, Kind, LimitSpec, Nanos};

fn main() {
    let window = Nanos::from_secs(12);
    let spec = |kind| LimitSpec::new(kind, 3, window);
    let algorithms: Vec<AnyAlgorithm> = Kind::ALL
        .iter()
        .map(|&kind| {
            let s = match kind {
                Kind::SlidingBuckets => LimitSpec { precision: Some(Nanos::from_secs(4)), ..spec(kind) },
                _ => spec(kind),
            };
            AnyAlgorithm::from_spec(&s).expect("valid example configuration")
        })
        .collect();

    // A user who bursts, goes quiet, then hammers the boundary at 12 s and 24 s.
    let trace_ms: [u64; 22] = [
        0, 400, 800, 1_200, 6_000, 9_000, 11_000, 11_500, 11_900, 12_000, 12_100, 12_200, 13_000, 16_500, 20_000,
        23_900, 24_000, 24_050, 24_100, 30_000, 36_100, 36_200,
    ];

    // A whole number of 12-second windows since the epoch, so the clock-aligned windows
    // start with the trace.
    let origin = Nanos::from_secs(1_700_000_004);
    let mut states: Vec<Option<tollgate::AnyState>> = vec![None; algorithms.len()];
    let mut admitted: Vec<Vec<Nanos>> = vec![Vec::new(); algorithms.len()];

    print!("{:>8} ", "time");
    for a in &algorithms {
        print!("{:>23}", a.name());
    }
    println!();
    for &ms in &trace_ms {
        let now = origin + Nanos::from_millis(ms);
        print!("{:>7.1}s ", ms as f64 / 1000.0);
        for (i, a) in algorithms.iter().enumerate() {
            let d = check_slot(a, &mut states[i], now, 1).expect("cost 1 always fits");
            if d.allowed {
                admitted[i].push(now);
                print!("{:>23}", "#");
            } else {
                // Waits rounded up to the millisecond, as the JS and HTTP layers report them.
                print!("{:>23}", format!(". wait {}ms", d.retry_after.as_millis_ceil()));
            }
        }
        println!();
    }
    print!("\n{:>8} ", "admitted");
    for times in &admitted {
        print!("{:>23}", times.len());
    }
    print!("\n{:>8} ", "max/12s");
    for times in &admitted {
        let most = times.iter().map(|&t| times.iter().filter(|&&u| u >= t && u < t + window).count()).max();
        print!("{:>23}", most.unwrap_or(0));
    }
    println!("\n\nlimit: 3 per 12 s (token bucket: capacity 3, one token every 4 s; GCRA: burst 3)");
}
