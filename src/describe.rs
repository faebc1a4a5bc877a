//! What one key's state says at an instant, per algorithm, as fields: the numbers a hit at
//! `now` is decided against ("7 in this window, 3 weighted from the last", the GCRA's
//! theoretical arrival time, the tokens left).
//!
//! Each view is computed by the algorithm's own code (the same roll-forward, refill and
//! expiry a check performs), never re-derived by a caller, so an explanation shown beside a
//! decision cannot disagree with it. The playground words these fields; nothing here is
//! prose. Times are nanoseconds since the epoch.
//!
//! ```
//! use tollgate::{AnyAlgorithm, Algorithm, Gcra, Nanos, Quota};
//! use tollgate::describe::{describe, StateView};
//! let gcra = AnyAlgorithm::Gcra(Gcra::new(Quota::per_second(10).unwrap()).unwrap());
//! let now = Nanos::from_secs(1_700_000_000);
//! let state = gcra.check(None, now, 3).unwrap().state;
//! match describe(&gcra, state.as_ref(), now) {
//!     StateView::Gcra { tat, room, .. } => {
//!         assert_eq!(tat, now + Nanos::from_millis(300));
//!         assert_eq!(room, 7);
//!     }
//!     other => panic!("{other:?}"),
//! }
//! ```

use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::{AnyAlgorithm, AnyState, LogEntry};
use crate::time::Nanos;

/// One key's state as a hit at `now` would find it (each variant's doc says its fields).
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum StateView {
    /// The clock-aligned window holding `now`, `[start, end)`, and the units counted in it.
    FixedWindow { start: Nanos, end: Nanos, count: u64, limit: u64 },
    /// The key's own window in force at `now` (a new one opening at `now` once it expired).
    FixedWindowFirstHit { start: Nanos, end: Nanos, count: u64, limit: u64 },
    /// The entries still counted at `now`, oldest first, and the sum of their costs.
    SlidingLog { entries: Vec<LogEntry>, count: u64, limit: u64 },
    /// The current clock window `[start, end)`, its count, the previous window's count and
    /// the part of it still weighted in (`floor(previous * (end - now) / window)`); `count`
    /// is what a hit is decided against, `current + weighted_previous`.
    SlidingWindow {
        start: Nanos,
        end: Nanos,
        current: u64,
        previous: u64,
        weighted_previous: u64,
        count: u64,
        limit: u64,
    },
    /// The buckets still in the window, oldest first, the first starting at `oldest_start`,
    /// each `precision` long; `count` is their sum.
    SlidingBuckets { oldest_start: Nanos, precision: Nanos, counts: Vec<u64>, count: u64, limit: u64 },
    /// The tokens in the bucket at `now` (refilled), and when the next refill comes
    /// (`next_refill_at`; a full bucket waits for none, shown as `now`).
    TokenBucket { tokens: u64, capacity: u64, refill_amount: u64, interval: Nanos, next_refill_at: Nanos },
    /// The theoretical arrival time (never before `now`), the emission interval `T`, the
    /// tolerance `tau = T * (burst - 1)`; one more unit is admitted from `tat - tau`, and
    /// `room` units fit at `now`.
    Gcra { tat: Nanos, emission_interval: Nanos, tolerance: Nanos, burst: u64, room: u64 },
    /// The live leases at `now` (in the order taken) of `limit` slots.
    #[cfg(feature = "concurrency")]
    Concurrency { leases: Vec<crate::algorithms::HeldLease>, limit: u64 },
}

/// The view of `state` (`None`: a fresh key) under `algorithm` at `now`. A state of another
/// algorithm reads as a fresh key.
pub fn describe(algorithm: &AnyAlgorithm, state: Option<&AnyState>, now: Nanos) -> StateView {
    match algorithm {
        AnyAlgorithm::FixedWindow(a) => {
            let s = a.current(if let Some(AnyState::FixedWindow(s)) = state { Some(s) } else { None }, now);
            StateView::FixedWindow {
                start: s.start,
                end: a.alignment().end_of(s.start),
                count: s.count,
                limit: a.limit(),
            }
        }
        AnyAlgorithm::FixedWindowFirstHit(a) => {
            let s = a.current(if let Some(AnyState::FixedWindowFirstHit(s)) = state { Some(s) } else { None }, now);
            StateView::FixedWindowFirstHit {
                start: s.start,
                end: s.start + a.window(),
                count: s.count,
                limit: a.limit(),
            }
        }
        AnyAlgorithm::SlidingLog(a) => {
            let (entries, count) = match state {
                Some(AnyState::SlidingLog(s)) => {
                    let view = a.view(s, now);
                    (s.entries().skip(view.expired).copied().collect(), view.active)
                }
                _ => (Vec::new(), 0),
            };
            StateView::SlidingLog { entries, count, limit: a.limit() }
        }
        AnyAlgorithm::SlidingWindow(a) => {
            let view = a.view(if let Some(AnyState::SlidingWindow(s)) = state { Some(s) } else { None }, now);
            let weighted_previous = a.weighted_previous(view.state.previous, view.elapsed);
            StateView::SlidingWindow {
                start: view.state.start,
                end: a.alignment().end_of(view.state.start),
                current: view.state.current,
                previous: view.state.previous,
                weighted_previous,
                count: view.state.current.saturating_add(weighted_previous),
                limit: a.limit(),
            }
        }
        AnyAlgorithm::SlidingBuckets(a) => {
            let (newest, counts) =
                a.view(if let Some(AnyState::SlidingBuckets(s)) = state { Some(s) } else { None }, now);
            let oldest = (newest + 1).saturating_sub(counts.len().max(1) as u64);
            let count = counts.iter().fold(0u64, |sum, c| sum.saturating_add(*c));
            StateView::SlidingBuckets {
                oldest_start: a.alignment().start(oldest),
                precision: a.precision(),
                counts: counts.into_iter().collect(),
                count,
                limit: a.limit(),
            }
        }
        AnyAlgorithm::TokenBucket(a) => {
            let level = a.level(if let Some(AnyState::TokenBucket(s)) = state { Some(s) } else { None }, now);
            let capacity = a.limit();
            let next_refill_at = if level.tokens >= capacity { now } else { level.anchor + a.interval() };
            StateView::TokenBucket {
                tokens: level.tokens,
                capacity,
                refill_amount: a.refill_amount(),
                interval: a.interval(),
                next_refill_at,
            }
        }
        AnyAlgorithm::Gcra(a) => {
            let tat = match state {
                Some(AnyState::Gcra(s)) => s.tat.max(now),
                _ => now,
            };
            let t = a.emission_interval();
            StateView::Gcra {
                tat,
                emission_interval: t,
                tolerance: t.saturating_mul(a.burst() - 1),
                burst: a.burst(),
                room: a.room(tat, now),
            }
        }
        #[cfg(feature = "concurrency")]
        AnyAlgorithm::Concurrency(a) => {
            let leases = match state {
                Some(AnyState::Concurrency(s)) => s.leases.iter().filter(|l| l.expires_at > now).copied().collect(),
                _ => Vec::new(),
            };
            StateView::Concurrency { leases, limit: a.limit() }
        }
    }
}
