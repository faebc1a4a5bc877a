//! Fixed window, aligned to the clock.
//!
//! One counter per key and window; windows are `[offset + k*window, offset + (k+1)*window)`
//! since the Unix epoch, the same for every key. The counter starts over when the window
//! index changes.
//!
//! Calendar windows: a window of whole days turns over at midnight UTC, of whole weeks on
//! Monday (the ISO week), and of calendar months ([`FixedWindow::calendar_months`]) on the
//! 1st, each shifted by the offset (negative: before UTC's boundary); a month lasts 28 to 31
//! days and its `reset_at` is its real end.
//!
//! **Guarantee**: at most `limit` units in each aligned window, hence at most `2 * limit` in
//! any interval of length `window` (a burst at the end of one window plus one at the start of
//! the next).
//!
//! **Pros**: the cheapest state (a window start and a count, 16 bytes); windows are the same
//! for everyone, which is what public quotas like GitHub's 5000 requests per clock hour
//! promise; counts merge across nodes by simple addition. **Cons**: the boundary burst of up
//! to twice the limit; every client's quota resets at the same instant, which invites a
//! thundering herd at the boundary.
//!
//! **Pick it when**: public quotas per clock period that clients plan against (per hour, per
//! day), or counts that must add up across nodes, where a burst of twice the limit across a
//! boundary does no harm.

use crate::algorithm::{validate_cost, Algorithm};
use crate::algorithms::alignment::Alignment;
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::Quota;
use crate::time::Nanos;

/// A clock-aligned fixed window.
///
/// ```
/// use tollgate::{Algorithm, FixedWindow, Nanos, Quota};
/// let github = FixedWindow::new(Quota::per_hour(5000).unwrap());
/// let d = github.check(None, Nanos::from_secs(7200 + 59), 1).unwrap();
/// assert!(d.decision.allowed);
/// assert_eq!(d.decision.remaining, 4999);
/// assert_eq!(d.decision.reset_at, Nanos::from_secs(3 * 3600)); // the next clock hour
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FixedWindow {
    limit: u64,
    align: Alignment,
}

/// One key's fixed window: which window, and how much it has counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FixedWindowState {
    /// Start of the window the count belongs to.
    pub start: Nanos,
    /// Units counted in that window.
    pub count: u64,
}

impl FixedWindow {
    /// The same algorithm with twice the limit: what a settlement charges into debt against
    /// (src/reserve/debt.rs), the limit past the limit being the debt cap.
    pub(crate) fn with_debt_cap(&self) -> Self {
        FixedWindow { limit: 2 * self.limit, ..*self }
    }

    /// Windows aligned to multiples of the quota's window since the epoch.
    pub fn new(quota: Quota) -> FixedWindow {
        FixedWindow {
            limit: quota.limit(),
            align: Alignment::new(quota.window(), Nanos::ZERO).expect("zero offset is always shorter"),
        }
    }

    /// Windows that turn over at `offset` past each multiple of the window (e.g. daily
    /// windows at 09:00 UTC: `offset = 9h`).
    pub fn with_offset(quota: Quota, offset: Nanos) -> Result<FixedWindow, ConfigError> {
        Ok(FixedWindow { limit: quota.limit(), align: Alignment::new(quota.window(), offset)? })
    }

    /// Windows of `months` calendar months, turning over `offset_ns` after (negative: before)
    /// midnight UTC on the 1st (see [`Alignment::months`]).
    ///
    /// ```
    /// use tollgate::{Algorithm, FixedWindow, Nanos};
    /// let billing = FixedWindow::calendar_months(10_000, 1, 0).unwrap();
    /// let d = billing.check(None, Nanos::from_secs(1_706_745_600), 1).unwrap(); // 2024-02-01
    /// assert_eq!(d.decision.reset_at, Nanos::from_secs(1_709_251_200)); // 2024-03-01: 29 days
    /// ```
    pub fn calendar_months(limit: u64, months: u32, offset_ns: i64) -> Result<FixedWindow, ConfigError> {
        crate::quota::check_limit(limit)?;
        Ok(FixedWindow { limit, align: Alignment::months(months, offset_ns)? })
    }

    /// The window boundaries.
    pub fn alignment(&self) -> Alignment {
        self.align
    }

    /// The window a hit at `now` counts in and that window's count so far. A clock that went
    /// back before the stored window counts in the stored window (never in an older one).
    pub(crate) fn current(&self, state: Option<&FixedWindowState>, now: Nanos) -> FixedWindowState {
        let start = self.align.start_of(now);
        match state {
            Some(s) if s.start >= start => *s,
            _ => FixedWindowState { start, count: 0 },
        }
    }
}

impl Algorithm for FixedWindow {
    type State = FixedWindowState;

    fn name(&self) -> &'static str {
        "fixed-window"
    }

    fn limit(&self) -> u64 {
        self.limit
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        (self.limit, self.align.length())
    }

    fn longest_window(&self) -> Nanos {
        self.align.length()
    }

    #[inline]
    fn check(
        &self,
        state: Option<&FixedWindowState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Outcome<FixedWindowState>, CheckError> {
        validate_cost(cost, self.limit)?;
        let window = self.current(state, now);
        let (decision, count) = count_in_window(self.limit, window.count, cost, self.align.end_of(window.start), now);
        Ok(Outcome { decision, state: count.map(|count| FixedWindowState { start: window.start, count }) })
    }

    fn refund(&self, state: &FixedWindowState, now: Nanos, cost: u64) -> Option<FixedWindowState> {
        let window = self.current(Some(state), now);
        let count = window.count.saturating_sub(cost);
        (count > 0).then_some(FixedWindowState { start: window.start, count })
    }

    fn fresh_at(&self, state: &FixedWindowState) -> Nanos {
        self.align.end_of(state.start)
    }
}

/// The decision of a window that counts hits (both fixed windows; they differ only in where a
/// window starts): `count` hits so far, a window ending at `end`. Admits `cost` while the
/// count stays within `limit`, and returns the new count; a denial waits for the window's end
/// and counts nothing.
#[inline(always)]
pub(super) fn count_in_window(limit: u64, count: u64, cost: u64, end: Nanos, now: Nanos) -> (Decision, Option<u64>) {
    if count.saturating_add(cost) <= limit {
        let count = count + cost;
        let remaining = limit - count;
        // Once the window is full, one more unit fits when it ends.
        let next_unit_after = if remaining == 0 { end - now } else { Nanos::ZERO };
        let decision =
            Decision { allowed: true, limit, remaining, reset_at: end, retry_after: Nanos::ZERO, next_unit_after };
        (decision, Some(count))
    } else {
        let remaining = limit.saturating_sub(count);
        let decision = Decision {
            allowed: false,
            limit,
            remaining,
            reset_at: end,
            retry_after: end - now,
            next_unit_after: if remaining == 0 { end - now } else { Nanos::ZERO },
        };
        (decision, None)
    }
}
