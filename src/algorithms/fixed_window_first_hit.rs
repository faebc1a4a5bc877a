//! Fixed window opened by the key's first hit ("user-defined start").
//!
//! Each key's window opens at its first hit and lasts `window`; the first hit after it
//! expires opens the next one. Because nothing aligns windows, the caller must be told when
//! the window resets (`reset_at`).
//!
//! **Guarantee**: at most `limit` units per window; windows of one key never overlap, so at
//! most `2 * limit` in any interval of length `window`.
//!
//! **Pros**: as cheap as the clock-aligned window, and keys do not all reset at the same
//! instant (no thundering herd at the boundary). **Cons**: the same boundary burst; the
//! window depends on each key's history, so counts cannot be merged across nodes; a token
//! bucket whose refill amount equals its capacity behaves the same way.
//!
//! **Pick it when**: each client gets its own period from its first request (a trial's 100
//! calls a day from sign-up) and you tell clients when their window resets.

use crate::algorithm::{validate_cost, Algorithm};
use crate::algorithms::fixed_window::count_in_window;
use crate::decision::Outcome;
use crate::error::CheckError;
use crate::quota::Quota;
use crate::time::Nanos;

/// A fixed window that opens at each key's first hit.
///
/// ```
/// use tollgate::{Algorithm, FixedWindowFirstHit, Nanos, Quota};
/// let login = FixedWindowFirstHit::new(Quota::per_minute(5).unwrap());
/// let first = login.check(None, Nanos::from_secs(100), 1).unwrap();
/// assert_eq!(first.decision.reset_at, Nanos::from_secs(160)); // one minute after the first hit
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct FixedWindowFirstHit {
    limit: u64,
    window: Nanos,
}

/// One key's window: when it opened and how much it has counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FirstHitState {
    /// When the window opened (the first hit of the window).
    pub start: Nanos,
    /// Units counted in the window.
    pub count: u64,
}

impl FixedWindowFirstHit {
    /// The same algorithm with twice the limit: what a settlement charges into debt against
    /// (src/reserve/debt.rs), the limit past the limit being the debt cap.
    pub(crate) fn with_debt_cap(&self) -> Self {
        FixedWindowFirstHit { limit: 2 * self.limit, ..*self }
    }

    /// A window of the quota's length opening at each key's first hit.
    pub fn new(quota: Quota) -> FixedWindowFirstHit {
        FixedWindowFirstHit { limit: quota.limit(), window: quota.window() }
    }

    /// The window length.
    pub fn window(&self) -> Nanos {
        self.window
    }

    /// The window in force at `now`: the stored one until it expires (also when the clock
    /// went back before it opened), else a new one opening now.
    pub(crate) fn current(&self, state: Option<&FirstHitState>, now: Nanos) -> FirstHitState {
        match state {
            Some(s) if now < s.start + self.window => *s,
            _ => FirstHitState { start: now, count: 0 },
        }
    }
}

impl Algorithm for FixedWindowFirstHit {
    type State = FirstHitState;

    fn name(&self) -> &'static str {
        "fixed-window-first-hit"
    }

    fn limit(&self) -> u64 {
        self.limit
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        (self.limit, self.window)
    }

    fn longest_window(&self) -> Nanos {
        self.window
    }

    #[inline]
    fn check(
        &self,
        state: Option<&FirstHitState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Outcome<FirstHitState>, CheckError> {
        validate_cost(cost, self.limit)?;
        let window = self.current(state, now);
        // The fixed window's own counting rule; only where the window starts differs.
        let (decision, count) = count_in_window(self.limit, window.count, cost, window.start + self.window, now);
        Ok(Outcome { decision, state: count.map(|count| FirstHitState { start: window.start, count }) })
    }

    fn refund(&self, state: &FirstHitState, now: Nanos, cost: u64) -> Option<FirstHitState> {
        let window = self.current(Some(state), now);
        let count = window.count.saturating_sub(cost);
        // An emptied window stays open: dropping it would let the next hit open a new window
        // later than this one, which is a different (more permissive) schedule.
        (window.count > 0).then_some(FirstHitState { start: window.start, count })
    }

    fn fresh_at(&self, state: &FirstHitState) -> Nanos {
        state.start + self.window
    }
}
