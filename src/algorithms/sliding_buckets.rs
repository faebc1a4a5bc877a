//! Sliding window with sub-buckets ("precision").
//!
//! The window of `window` is split into `window / precision` clock-aligned buckets; a key
//! keeps one count per bucket and the window counts the newest `window / precision` buckets.
//! A hit of `cost` is admitted when their sum plus the cost fits the limit. With
//! `precision = window` it is exactly the clock-aligned fixed window; as the precision
//! shrinks it approaches the exact sliding log.
//!
//! **Guarantee**: at most `limit` units in any `window / precision` consecutive buckets, so
//! in any interval of length `window` at most `limit` plus what one bucket admitted (under
//! `2 * limit`, and close to `limit` for fine precision).
//!
//! **Pros**: a tunable trade between memory and exactness, independent of the limit; counts
//! merge across nodes by addition. **Cons**: memory of `window / precision` counters per key
//! (capped at [`MAX_BUCKETS`]); a bucket's hits all expire at the bucket's end, so the
//! boundary burst is one bucket's worth instead of none.
//!
//! **Pick it when**: you want to choose how exact the window is against how much memory it
//! takes (an hourly limit counted in minute buckets).

use alloc::collections::VecDeque;

use crate::algorithm::{validate_cost, Algorithm};
use crate::algorithms::alignment::Alignment;
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::Quota;
use crate::time::Nanos;

/// The most sub-buckets one window may have (an hour at one-second precision).
pub const MAX_BUCKETS: u64 = 3600;

/// The sliding window over sub-buckets.
///
/// ```
/// use tollgate::{algorithm::check_slot, Nanos, Quota, SlidingBuckets};
/// // 10 per minute, counted in 10-second buckets.
/// let sb = SlidingBuckets::new(Quota::per_minute(10).unwrap(), Nanos::from_secs(10)).unwrap();
/// let mut state = None;
/// for _ in 0..10 {
///     assert!(check_slot(&sb, &mut state, Nanos::from_secs(5), 1).unwrap().allowed);
/// }
/// let denied = check_slot(&sb, &mut state, Nanos::from_secs(30), 1).unwrap();
/// // The bucket [0 s, 10 s) leaves the window at 60 s.
/// assert_eq!(denied.retry_after, Nanos::from_secs(30));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SlidingBuckets {
    limit: u64,
    window: Nanos,
    buckets: u64,
    align: Alignment,
}

/// One key's bucket counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlidingBucketsState {
    /// Index (in [`Alignment`] terms) of the newest bucket in `counts`.
    pub(crate) newest: u64,
    /// Counts of consecutive buckets ending at `newest`, oldest first.
    pub(crate) counts: VecDeque<u64>,
}

impl SlidingBucketsState {
    /// The index of the newest bucket and the counts, oldest first.
    pub fn buckets(&self) -> (u64, impl Iterator<Item = &u64>) {
        (self.newest, self.counts.iter())
    }
}

impl SlidingBuckets {
    /// The same algorithm with twice the limit: what a settlement charges into debt against
    /// (src/reserve/debt.rs), the limit past the limit being the debt cap.
    pub(crate) fn with_debt_cap(&self) -> Self {
        SlidingBuckets { limit: 2 * self.limit, ..*self }
    }

    /// `quota` counted in buckets of `precision`, which must divide the window.
    pub fn new(quota: Quota, precision: Nanos) -> Result<SlidingBuckets, ConfigError> {
        SlidingBuckets::with_offset(quota, precision, Nanos::ZERO)
    }

    /// Buckets turning over at `offset` past each multiple of the precision. The offset must be
    /// shorter than the window, as for every windowed algorithm; since the window slides, only
    /// its remainder by the precision moves a bucket boundary, so 500 ms over 250 ms buckets
    /// decides as 0.
    pub fn with_offset(quota: Quota, precision: Nanos, offset: Nanos) -> Result<SlidingBuckets, ConfigError> {
        let (w, p) = (quota.window().as_nanos(), precision.as_nanos());
        if p == 0 || w % p != 0 {
            return Err(ConfigError::PrecisionNotDivisor { window_ns: w, precision_ns: p });
        }
        if offset.as_nanos() >= w {
            return Err(ConfigError::OffsetTooLarge { offset_ns: offset.as_nanos(), window_ns: w });
        }
        let buckets = w / p;
        if buckets > MAX_BUCKETS {
            return Err(ConfigError::TooManyBuckets { buckets, max: MAX_BUCKETS });
        }
        Ok(SlidingBuckets {
            limit: quota.limit(),
            window: quota.window(),
            buckets,
            align: Alignment::new(precision, Nanos::new(offset.as_nanos() % p))?,
        })
    }

    /// The window length.
    pub fn window(&self) -> Nanos {
        self.window
    }

    /// The bucket length.
    pub fn precision(&self) -> Nanos {
        self.align.length()
    }

    /// How many buckets one window spans.
    pub fn bucket_count(&self) -> u64 {
        self.buckets
    }

    /// The bucket boundaries.
    pub fn alignment(&self) -> Alignment {
        self.align
    }

    /// The counts that matter at `now`, rolled forward to the bucket holding `now` (or kept
    /// at the newest stored bucket when the clock went back): `(newest index, counts)`.
    pub(crate) fn view(&self, state: Option<&SlidingBucketsState>, now: Nanos) -> (u64, VecDeque<u64>) {
        let index = self.align.index(now);
        let Some(s) = state else {
            return (index, VecDeque::new());
        };
        if index <= s.newest {
            return (s.newest, s.counts.clone());
        }
        let mut counts = s.counts.clone();
        let gap = index - s.newest;
        if gap >= self.buckets {
            counts.clear();
        } else {
            counts.extend(core::iter::repeat_n(0, gap as usize));
            let excess = counts.len().saturating_sub(self.buckets as usize);
            counts.drain(..excess);
        }
        (index, counts)
    }

    /// The index of the oldest bucket in `counts` ending at `newest`.
    fn oldest(newest: u64, counts: &VecDeque<u64>) -> u64 {
        newest + 1 - counts.len() as u64
    }

    /// When bucket `index` stops counting: when bucket `index + buckets` begins.
    fn leaves_at(&self, index: u64) -> Nanos {
        self.align.start(index.saturating_add(self.buckets))
    }

    /// When `cost` fits: the oldest buckets leave the window until it does (`now` if it
    /// fits already).
    fn fits_at(&self, newest: u64, counts: &VecDeque<u64>, sum: u64, cost: u64, now: Nanos) -> Nanos {
        let mut left = sum;
        let mut at = now;
        if left.saturating_add(cost) <= self.limit {
            return at;
        }
        let oldest = Self::oldest(newest, counts);
        for (i, &c) in counts.iter().enumerate() {
            left = left.saturating_sub(c);
            at = self.leaves_at(oldest + i as u64);
            if left.saturating_add(cost) <= self.limit {
                break;
            }
        }
        at
    }

    fn reset_time(&self, newest: u64, counts: &VecDeque<u64>, fallback: Nanos) -> Nanos {
        match counts.iter().rposition(|&c| c > 0) {
            Some(i) => self.leaves_at(Self::oldest(newest, counts) + i as u64),
            None => fallback,
        }
    }

    /// Trims buckets that hold nothing from the old end, keeping the state small.
    fn compact(counts: &mut VecDeque<u64>) {
        while counts.front() == Some(&0) {
            counts.pop_front();
        }
    }
}

impl Algorithm for SlidingBuckets {
    type State = SlidingBucketsState;

    fn name(&self) -> &'static str {
        "sliding-buckets"
    }

    fn limit(&self) -> u64 {
        self.limit
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        (self.limit, self.window)
    }

    fn longest_window(&self) -> Nanos {
        self.window + self.align.length()
    }

    fn check(
        &self,
        state: Option<&SlidingBucketsState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Outcome<SlidingBucketsState>, CheckError> {
        validate_cost(cost, self.limit)?;
        let (newest, mut counts) = self.view(state, now);
        let sum = counts.iter().fold(0u64, |s, &c| s.saturating_add(c));
        if sum.saturating_add(cost) <= self.limit {
            // The view always ends at the bucket the hit counts in.
            match counts.back_mut() {
                Some(last) => *last = last.saturating_add(cost),
                None => counts.push_back(cost),
            }
            Self::compact(&mut counts);
            let reset_at = self.reset_time(newest, &counts, now);
            let remaining = self.limit - sum - cost;
            let next_unit_after =
                if remaining > 0 { Nanos::ZERO } else { self.fits_at(newest, &counts, sum + cost, 1, now) - now };
            Ok(Outcome {
                decision: Decision {
                    allowed: true,
                    limit: self.limit,
                    remaining,
                    reset_at,
                    retry_after: Nanos::ZERO,
                    next_unit_after,
                },
                state: Some(SlidingBucketsState { newest, counts }),
            })
        } else {
            // Wait for the oldest buckets to leave the window until the cost fits.
            let retry_at = self.fits_at(newest, &counts, sum, cost, now);
            Ok(Outcome {
                decision: Decision {
                    allowed: false,
                    limit: self.limit,
                    remaining: self.limit.saturating_sub(sum),
                    reset_at: self.reset_time(newest, &counts, now),
                    retry_after: retry_at - now,
                    next_unit_after: self.fits_at(newest, &counts, sum, 1, now) - now,
                },
                state: None,
            })
        }
    }

    fn refund(&self, state: &SlidingBucketsState, now: Nanos, cost: u64) -> Option<SlidingBucketsState> {
        let (mut newest, mut counts) = self.view(Some(state), now);
        // Give back the newest units first: they would have left the window last.
        let mut left = cost;
        for c in counts.iter_mut().rev() {
            let take = (*c).min(left);
            *c -= take;
            left -= take;
        }
        while counts.back() == Some(&0) {
            counts.pop_back();
            newest -= 1;
        }
        Self::compact(&mut counts);
        (!counts.is_empty()).then_some(SlidingBucketsState { newest, counts })
    }

    fn fresh_at(&self, state: &SlidingBucketsState) -> Nanos {
        self.reset_time(state.newest, &state.counts, Nanos::ZERO)
    }
}
