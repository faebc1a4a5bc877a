//! Mergeable counters: the window-counter algorithms as counts per clock-aligned window.
//!
//! Counts of the fixed window, the sliding window counter and the sliding buckets belong to
//! clock-aligned windows that are the same on every node, so counts taken on different nodes
//! add up: that is what lets a cluster count one limit eventually consistently
//! ([`crate::sync`]). The sliding log, the token bucket, GCRA and the first-hit window keep
//! history that does not add up (a timestamp, a refill phase), so they say they cannot merge.

use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::{
    AnyAlgorithm, AnyState, FixedWindow, FixedWindowState, SlidingBuckets, SlidingBucketsState, SlidingWindow,
    SlidingWindowState,
};
use crate::time::Nanos;

/// A count attributed to one clock-aligned window (or bucket).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct WindowCount {
    /// Start of the window.
    pub start: Nanos,
    /// Units counted in it.
    pub count: u64,
}

/// An algorithm whose state is nothing but counts per clock-aligned window.
pub trait WindowCounter: Algorithm {
    /// The length of one counted window: the window, or the bucket for sliding buckets.
    fn granularity(&self) -> Nanos;

    /// How many consecutive windows, ending with the one holding `now`, a decision reads.
    fn span(&self) -> u64;

    /// The non-zero counts the state holds.
    fn counts(&self, state: &Self::State) -> Vec<WindowCount>;

    /// The state holding `counts` as seen at `now` (older windows dropped; counts for the
    /// same window added). `None` when nothing counts any more.
    fn state_from(&self, counts: &[WindowCount], now: Nanos) -> Option<Self::State>;
}

/// The sum of the counts for the window starting at `start`.
fn count_at(counts: &[WindowCount], start: Nanos) -> u64 {
    counts.iter().filter(|c| c.start == start).fold(0u64, |s, c| s.saturating_add(c.count))
}

/// The newest window a decision at `now` reads: `now`'s window, or a newer one found in the
/// counts when this node's clock is behind (the stricter choice).
fn newest_start(counts: &[WindowCount], now_start: Nanos) -> Nanos {
    counts.iter().filter(|c| c.count > 0).map(|c| c.start).fold(now_start, Nanos::max)
}

impl WindowCounter for FixedWindow {
    fn granularity(&self) -> Nanos {
        self.alignment().length()
    }

    fn span(&self) -> u64 {
        1
    }

    fn counts(&self, s: &FixedWindowState) -> Vec<WindowCount> {
        [WindowCount { start: s.start, count: s.count }].into_iter().filter(|c| c.count > 0).collect()
    }

    fn state_from(&self, counts: &[WindowCount], now: Nanos) -> Option<FixedWindowState> {
        let start = newest_start(counts, self.alignment().start_of(now));
        let count = count_at(counts, start);
        (count > 0).then_some(FixedWindowState { start, count })
    }
}

impl WindowCounter for SlidingWindow {
    fn granularity(&self) -> Nanos {
        self.alignment().length()
    }

    fn span(&self) -> u64 {
        2
    }

    fn counts(&self, s: &SlidingWindowState) -> Vec<WindowCount> {
        let a = self.alignment();
        let index = a.index(s.start);
        let mut out = Vec::with_capacity(2);
        if index > 0 && s.previous > 0 {
            out.push(WindowCount { start: a.start(index - 1), count: s.previous });
        }
        if s.current > 0 {
            out.push(WindowCount { start: s.start, count: s.current });
        }
        out
    }

    fn state_from(&self, counts: &[WindowCount], now: Nanos) -> Option<SlidingWindowState> {
        let a = self.alignment();
        let start = newest_start(counts, a.start_of(now));
        let index = a.index(start);
        let current = count_at(counts, start);
        let previous = if index == 0 { 0 } else { count_at(counts, a.start(index - 1)) };
        (current > 0 || previous > 0).then_some(SlidingWindowState { start, current, previous })
    }
}

impl WindowCounter for SlidingBuckets {
    fn granularity(&self) -> Nanos {
        self.precision()
    }

    fn span(&self) -> u64 {
        self.bucket_count()
    }

    fn counts(&self, s: &SlidingBucketsState) -> Vec<WindowCount> {
        let (newest, counts) = s.buckets();
        let counts: Vec<u64> = counts.copied().collect();
        let oldest = newest + 1 - counts.len() as u64;
        counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &count)| WindowCount { start: self.alignment().start(oldest + i as u64), count })
            .collect()
    }

    fn state_from(&self, counts: &[WindowCount], now: Nanos) -> Option<SlidingBucketsState> {
        let a = self.alignment();
        let newest = a.index(newest_start(counts, a.start_of(now)));
        let oldest = (newest + 1).saturating_sub(self.bucket_count());
        let by_index: Vec<(u64, u64)> = counts
            .iter()
            .filter(|c| c.count > 0)
            .map(|c| (a.index(c.start), c.count))
            .filter(|&(i, _)| i >= oldest && i <= newest)
            .collect();
        // The bucket range is all that is needed, not an order: no sort (and no generic sort
        // code in the wasm module).
        let first = by_index.iter().map(|&(i, _)| i).min()?;
        let last = by_index.iter().map(|&(i, _)| i).max()?;
        let mut buckets = alloc::collections::VecDeque::from(alloc::vec![0u64; (last - first + 1) as usize]);
        for (i, c) in by_index {
            buckets[(i - first) as usize] = buckets[(i - first) as usize].saturating_add(c);
        }
        Some(SlidingBucketsState { newest: last, counts: buckets })
    }
}

impl AnyAlgorithm {
    /// The window length counts are kept in, if this algorithm merges.
    pub fn granularity(&self) -> Option<Nanos> {
        match self {
            AnyAlgorithm::FixedWindow(a) => Some(a.granularity()),
            AnyAlgorithm::SlidingWindow(a) => Some(a.granularity()),
            AnyAlgorithm::SlidingBuckets(a) => Some(a.granularity()),
            _ => None,
        }
    }

    /// How many windows a decision reads, if this algorithm merges.
    pub fn span(&self) -> Option<u64> {
        match self {
            AnyAlgorithm::FixedWindow(a) => Some(a.span()),
            AnyAlgorithm::SlidingWindow(a) => Some(a.span()),
            AnyAlgorithm::SlidingBuckets(a) => Some(a.span()),
            _ => None,
        }
    }

    /// Start of the window holding `now`, if this algorithm merges.
    pub fn window_start(&self, now: Nanos) -> Option<Nanos> {
        match self {
            AnyAlgorithm::FixedWindow(a) => Some(a.alignment().start_of(now)),
            AnyAlgorithm::SlidingWindow(a) => Some(a.alignment().start_of(now)),
            AnyAlgorithm::SlidingBuckets(a) => Some(a.alignment().start_of(now)),
            _ => None,
        }
    }

    /// The rate `counts` amount to at `now`: `current + previous * weight` for a sliding
    /// window (a real number), the window's count for a fixed window, the sum of the buckets
    /// in the window for sliding buckets; 0 for algorithms that do not merge.
    pub fn rate_from_counts(&self, counts: &[WindowCount], now: Nanos) -> f64 {
        match self {
            AnyAlgorithm::FixedWindow(a) => a.state_from(counts, now).map_or(0.0, |s| s.count as f64),
            AnyAlgorithm::SlidingWindow(a) => a.rate(a.state_from(counts, now).as_ref(), now),
            AnyAlgorithm::SlidingBuckets(a) => {
                a.state_from(counts, now).map_or(0.0, |s| s.buckets().1.fold(0u64, |t, c| t.saturating_add(*c)) as f64)
            }
            _ => 0.0,
        }
    }

    /// The counts of `state`, if this algorithm merges (`None` otherwise).
    pub fn window_counts(&self, state: &AnyState) -> Option<Vec<WindowCount>> {
        match (self, state) {
            (AnyAlgorithm::FixedWindow(a), AnyState::FixedWindow(s)) => Some(a.counts(s)),
            (AnyAlgorithm::SlidingWindow(a), AnyState::SlidingWindow(s)) => Some(a.counts(s)),
            (AnyAlgorithm::SlidingBuckets(a), AnyState::SlidingBuckets(s)) => Some(a.counts(s)),
            _ => None,
        }
    }

    /// The state holding `counts` at `now`, if this algorithm merges (`None` otherwise).
    pub fn state_from_counts(&self, counts: &[WindowCount], now: Nanos) -> Option<Option<AnyState>> {
        match self {
            AnyAlgorithm::FixedWindow(a) => Some(a.state_from(counts, now).map(AnyState::FixedWindow)),
            AnyAlgorithm::SlidingWindow(a) => Some(a.state_from(counts, now).map(AnyState::SlidingWindow)),
            AnyAlgorithm::SlidingBuckets(a) => Some(a.state_from(counts, now).map(AnyState::SlidingBuckets)),
            _ => None,
        }
    }
}
