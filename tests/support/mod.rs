//! What several integration tests share: a strategy of small, valid configurations.

use proptest::prelude::*;
use tollgate::algorithms::AnyAlgorithm;
use tollgate::{Kind, LimitSpec, Nanos};

/// A valid configuration of any algorithm with small numbers (windows of a few ns, so traces
/// cross many windows).
pub fn algorithm() -> impl Strategy<Value = AnyAlgorithm> {
    (0usize..7, 1u64..=8, 1u64..=60, 1u64..=6, any::<u64>(), any::<u64>())
        .prop_map(|(k, limit, w, n, r1, r2)| make(Kind::ALL[k], limit, w, n, r1, r2))
}

/// The configuration [`algorithm`] draws for `kind` from the same numbers.
pub fn make(kind: Kind, limit: u64, w: u64, n: u64, r1: u64, r2: u64) -> AnyAlgorithm {
    AnyAlgorithm::from_spec(&spec(kind, limit, w.max(limit), n, r1, r2)).expect("only valid specs are made")
}

/// A valid spec of `kind` over a window of `window` ns (at least `limit`), its options drawn
/// from `n`, `r1` and `r2`: an offset, sliding buckets' precision (a divisor of the window near
/// window / n), a burst and a refill amount.
pub fn spec(kind: Kind, limit: u64, window: u64, n: u64, r1: u64, r2: u64) -> LimitSpec {
    let mut s = LimitSpec::new(kind, limit, Nanos::new(window.max(limit)));
    let window = s.window.as_nanos();
    match kind {
        Kind::FixedWindow | Kind::SlidingWindow if r1 % 3 == 0 => s.offset = Some(Nanos::new(r2 % window)),
        Kind::SlidingBuckets => {
            let p = (1..=window / n.min(window)).rev().find(|d| window % d == 0).unwrap_or(1);
            s.precision = Some(Nanos::new(p));
        }
        Kind::TokenBucket | Kind::Gcra => {
            if r1 % 2 == 0 {
                s.burst = Some(1 + r2 % 8);
            }
            if kind == Kind::TokenBucket && r1 % 3 == 0 {
                s.refill_amount = Some(1 + (r2 >> 8) % s.burst.unwrap_or(limit));
            }
        }
        _ => {}
    }
    s
}
