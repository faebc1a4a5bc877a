//! Sliding window log ("moving window"): the exact sliding window.
//!
//! Keeps the time of every counted hit (with its cost). A hit at `now` is admitted when the
//! units still in the log plus its cost fit the limit. An entry exactly `window` old still
//! counts; it expires once it is older than the window (`now - t > window`).
//!
//! **Guarantee**: at most `limit` units in every closed interval `[t - window, t]`: exact.
//!
//! **Pros**: no boundary burst and no approximation; `retry_after` is exact to the
//! nanosecond. **Cons**: memory grows with the limit (one entry per admitted hit still in the
//! window, merged when hits share an instant), so the limit is capped at
//! [`MAX_LOG_LIMIT`]; use the sliding window counter for large limits.
//!
//! **Pick it when**: the limit must hold exactly in every window (logins, password resets,
//! payments) and the limit is small enough to keep one entry per hit.

use alloc::collections::VecDeque;

use crate::algorithm::{validate_cost, Algorithm};
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::Quota;
use crate::time::Nanos;

/// The largest limit a sliding log accepts: its state holds up to this many entries.
pub const MAX_LOG_LIMIT: u64 = 100_000;

/// The exact sliding window.
///
/// ```
/// use tollgate::{algorithm::check_slot, Nanos, Quota, SlidingLog};
/// let log = SlidingLog::new(Quota::per_minute(2).unwrap()).unwrap();
/// let mut state = None;
/// for t in [0, 30] {
///     assert!(check_slot(&log, &mut state, Nanos::from_secs(t), 1).unwrap().allowed);
/// }
/// let denied = check_slot(&log, &mut state, Nanos::from_secs(45), 1).unwrap();
/// // The entry at 0 s expires once it is older than 60 s: at 60 s + 1 ns.
/// assert_eq!(denied.retry_after, Nanos::from_secs(15) + Nanos::new(1));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SlidingLog {
    limit: u64,
    window: Nanos,
}

/// One admitted hit in the log.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LogEntry {
    /// When it was admitted.
    pub at: Nanos,
    /// Its cost.
    pub cost: u64,
}

/// One key's log: admitted hits, oldest first, and the sum of their costs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlidingLogState {
    pub(crate) entries: VecDeque<LogEntry>,
    pub(crate) total: u64,
}

impl SlidingLogState {
    /// The entries, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &LogEntry> {
        self.entries.iter()
    }

    /// Builds a state from entries (oldest first); used by the codec, which validates order.
    pub(crate) fn from_entries(entries: VecDeque<LogEntry>) -> SlidingLogState {
        let total = entries.iter().fold(0u64, |sum, e| sum.saturating_add(e.cost));
        SlidingLogState { entries, total }
    }
}

/// What the log says at one instant: how many leading entries have expired and the units
/// still counted.
pub(crate) struct View {
    /// `max(now, newest entry)`: a clock that went back decides at the newest time seen.
    pub(crate) at: Nanos,
    pub(crate) expired: usize,
    pub(crate) active: u64,
}

impl SlidingLog {
    /// The same algorithm with twice the limit: what a settlement charges into debt against
    /// (src/reserve/debt.rs), the limit past the limit being the debt cap.
    pub(crate) fn with_debt_cap(&self) -> Self {
        SlidingLog { limit: 2 * self.limit, ..*self }
    }

    /// A log for `quota`; its limit must be at most [`MAX_LOG_LIMIT`].
    pub fn new(quota: Quota) -> Result<SlidingLog, ConfigError> {
        if quota.limit() > MAX_LOG_LIMIT {
            return Err(ConfigError::LimitTooLarge { limit: quota.limit(), max: MAX_LOG_LIMIT });
        }
        Ok(SlidingLog { limit: quota.limit(), window: quota.window() })
    }

    /// The window length.
    pub fn window(&self) -> Nanos {
        self.window
    }

    /// The instant an entry stops counting: once it is older than the window.
    pub(crate) fn expiry(&self, entry: &LogEntry) -> Nanos {
        entry.at + self.window + Nanos::new(1)
    }

    pub(crate) fn view(&self, state: &SlidingLogState, now: Nanos) -> View {
        let at = state.entries.back().map_or(now, |newest| now.max(newest.at));
        let mut expired = 0;
        let mut freed = 0u64;
        for entry in state.entries.iter() {
            if self.expiry(entry) > at {
                break;
            }
            expired += 1;
            freed = freed.saturating_add(entry.cost);
        }
        View { at, expired, active: state.total.saturating_sub(freed) }
    }

    fn denial(&self, state: &SlidingLogState, view: &View, now: Nanos, cost: u64) -> Decision {
        // Wait for the oldest counted entries to expire until the cost fits.
        let mut active = view.active;
        let mut retry_at = view.at;
        for entry in state.entries.iter().skip(view.expired) {
            active -= entry.cost.min(active);
            retry_at = self.expiry(entry);
            if active.saturating_add(cost) <= self.limit {
                break;
            }
        }
        let remaining = self.limit.saturating_sub(view.active);
        Decision {
            allowed: false,
            limit: self.limit,
            remaining,
            reset_at: state.entries.back().map_or(now, |e| self.expiry(e)),
            retry_after: retry_at - now,
            next_unit_after: self.next_unit_after(state, view, remaining, now),
        }
    }

    /// With the log full, one more unit fits when its oldest counted entry expires (every
    /// entry holds at least one unit).
    fn next_unit_after(&self, state: &SlidingLogState, view: &View, remaining: u64, now: Nanos) -> Nanos {
        if remaining > 0 {
            return Nanos::ZERO;
        }
        let oldest = state.entries.get(view.expired).map_or(view.at + self.window + Nanos::new(1), |e| self.expiry(e));
        oldest.saturating_sub(now)
    }

    /// The admission of `cost` at `view` of `state` (the log before the hit).
    fn admission(&self, state: &SlidingLogState, view: &View, cost: u64, now: Nanos) -> Decision {
        let remaining = self.limit - view.active - cost;
        Decision {
            allowed: true,
            limit: self.limit,
            remaining,
            reset_at: view.at + self.window + Nanos::new(1),
            retry_after: Nanos::ZERO,
            // The oldest counted entry after the hit: an older one, else the hit itself.
            next_unit_after: self.next_unit_after(state, view, remaining, now),
        }
    }

    /// Drops expired entries and appends the admitted hit (merging with an entry at the
    /// same instant).
    fn commit(state: &mut SlidingLogState, view: &View, cost: u64) {
        state.entries.drain(..view.expired);
        match state.entries.back_mut() {
            Some(newest) if newest.at == view.at => newest.cost = newest.cost.saturating_add(cost),
            _ => state.entries.push_back(LogEntry { at: view.at, cost }),
        }
        state.total = view.active.saturating_add(cost);
    }
}

impl Algorithm for SlidingLog {
    type State = SlidingLogState;

    fn name(&self) -> &'static str {
        "sliding-log"
    }

    fn limit(&self) -> u64 {
        self.limit
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        (self.limit, self.window)
    }

    fn longest_window(&self) -> Nanos {
        self.window + Nanos::new(1)
    }

    fn check(
        &self,
        state: Option<&SlidingLogState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Outcome<SlidingLogState>, CheckError> {
        validate_cost(cost, self.limit)?;
        let Some(state) = state else {
            // A fresh key always has room for a valid cost.
            let view = View { at: now, expired: 0, active: 0 };
            let mut log = SlidingLogState::default();
            let decision = self.admission(&log, &view, cost, now);
            Self::commit(&mut log, &view, cost);
            return Ok(Outcome { decision, state: Some(log) });
        };
        let mut log = state.clone();
        let decision = self.check_in_place(&mut log, now, cost)?;
        Ok(Outcome { decision, state: decision.allowed.then_some(log) })
    }

    fn peek(&self, state: Option<&SlidingLogState>, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        validate_cost(cost, self.limit)?;
        let empty = SlidingLogState::default();
        let state = state.unwrap_or(&empty);
        let view = self.view(state, now);
        Ok(if view.active.saturating_add(cost) <= self.limit {
            self.admission(state, &view, cost, now)
        } else {
            self.denial(state, &view, now, cost)
        })
    }

    fn check_in_place(&self, log: &mut SlidingLogState, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        validate_cost(cost, self.limit)?;
        let view = self.view(log, now);
        if view.active.saturating_add(cost) <= self.limit {
            let decision = self.admission(log, &view, cost, now);
            Self::commit(log, &view, cost);
            Ok(decision)
        } else {
            Ok(self.denial(log, &view, now, cost))
        }
    }

    fn refund(&self, state: &SlidingLogState, now: Nanos, cost: u64) -> Option<SlidingLogState> {
        let view = self.view(state, now);
        let mut log = state.clone();
        log.entries.drain(..view.expired);
        log.total = view.active;
        // Give back the newest units first: they would have expired last.
        let mut left = cost;
        while left > 0 {
            let Some(newest) = log.entries.back_mut() else { break };
            let take = newest.cost.min(left);
            newest.cost -= take;
            log.total -= take;
            left -= take;
            if newest.cost == 0 {
                log.entries.pop_back();
            }
        }
        (!log.entries.is_empty()).then_some(log)
    }

    fn fresh_at(&self, state: &SlidingLogState) -> Nanos {
        state.entries.back().map_or(Nanos::ZERO, |e| self.expiry(e))
    }
}
