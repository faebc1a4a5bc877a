//! Sliding window counter ("approximated" or "floating" window).
//!
//! Two counters per key: the current clock-aligned window and the previous one. The previous
//! window is assumed to have been spread evenly, so the part of it still inside the sliding
//! window counts in proportion:
//!
//! ```text
//! weight = (window - elapsed_in_current) / window
//! count  = floor(current + previous * weight)
//! ```
//!
//! and a hit of `cost` is admitted when `count + cost <= limit`. A hit exactly at a boundary
//! belongs to the new window. The arithmetic is in integers (`previous * (window - elapsed)
//! / window` in 128 bits), so every runtime computes the same floor. Windows are aligned to
//! the clock, never to a key's first hit: a first-hit start would let an attacker bypass the
//! limit during the first period.
//!
//! **Guarantee**: `count` never exceeds the limit, so at most `limit` units in each aligned
//! window and, in the worst case (previous traffic bunched at its end), under `2 * limit` in
//! an interval of length `window`. On evenly spread traffic it tracks the exact sliding log
//! closely (Cloudflare measured 0.003% of requests decided differently).
//!
//! **Pros**: constant memory (24 bytes) for any limit; smooth, no boundary burst in
//! practice; counts merge across nodes by addition, which is why Cloudflare, Kong and Upstash
//! use it. **Cons**: an estimate, not exact; `retry_after` is exact for the estimate, not
//! for the true traffic.
//!
//! **Pick it when**: you want a smooth limit in constant memory for any limit, mergeable across
//! nodes: the default of API gateways.

use crate::algorithm::{validate_cost, Algorithm};
use crate::algorithms::alignment::Alignment;
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::Quota;
use crate::time::Nanos;

/// The sliding window counter.
///
/// A worked example: 100 per minute, 80 hits in the current window and 40 in
/// the previous one.
///
/// ```
/// use tollgate::{Algorithm, Nanos, Quota, SlidingWindow, SlidingWindowState};
/// let sw = SlidingWindow::new(Quota::per_minute(100).unwrap());
/// let state = SlidingWindowState { start: Nanos::from_secs(600), current: 80, previous: 40 };
/// // 30 s in: 80 + 40 * 0.5 = 100, full.
/// assert!(!sw.peek(Some(&state), Nanos::from_secs(630), 1).unwrap().allowed);
/// // 40 s in: floor(80 + 40 / 3) = 93.
/// assert!(sw.peek(Some(&state), Nanos::from_secs(640), 1).unwrap().allowed);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SlidingWindow {
    limit: u64,
    align: Alignment,
}

/// One key's two counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlidingWindowState {
    /// Start of the current window.
    pub start: Nanos,
    /// Units counted in the current window.
    pub current: u64,
    /// Units counted in the window before it.
    pub previous: u64,
}

/// The counters as seen at one instant.
#[derive(Copy, Clone, Debug)]
pub(crate) struct View {
    pub(crate) state: SlidingWindowState,
    pub(crate) elapsed: u64,
}

impl SlidingWindow {
    /// The same algorithm with twice the limit: what a settlement charges into debt against
    /// (src/reserve/debt.rs), the limit past the limit being the debt cap.
    pub(crate) fn with_debt_cap(&self) -> Self {
        SlidingWindow { limit: 2 * self.limit, ..*self }
    }

    /// Windows aligned to multiples of the quota's window since the epoch.
    pub fn new(quota: Quota) -> SlidingWindow {
        SlidingWindow {
            limit: quota.limit(),
            align: Alignment::new(quota.window(), Nanos::ZERO).expect("zero offset is always shorter"),
        }
    }

    /// Windows turning over at `offset` past each multiple of the window.
    pub fn with_offset(quota: Quota, offset: Nanos) -> Result<SlidingWindow, ConfigError> {
        Ok(SlidingWindow { limit: quota.limit(), align: Alignment::new(quota.window(), offset)? })
    }

    /// The window boundaries.
    pub fn alignment(&self) -> Alignment {
        self.align
    }

    fn length(&self) -> u64 {
        self.align.length().as_nanos()
    }

    /// Rolls the stored counters forward to the window holding `now`. A clock that went back
    /// before the stored window decides at that window's start (weight 1: the strictest).
    pub(crate) fn view(&self, state: Option<&SlidingWindowState>, now: Nanos) -> View {
        let start = self.align.start_of(now);
        let rolled = match state {
            None => SlidingWindowState { start, current: 0, previous: 0 },
            Some(s) if start <= s.start => {
                return View { state: *s, elapsed: now.saturating_sub(s.start).as_nanos() };
            }
            Some(s) if start == self.align.end_of(s.start) => {
                SlidingWindowState { start, current: 0, previous: s.current }
            }
            Some(_) => SlidingWindowState { start, current: 0, previous: 0 },
        };
        View { state: rolled, elapsed: (now - start).as_nanos() }
    }

    /// `floor(previous * (window - elapsed) / window)`, exactly.
    pub(crate) fn weighted_previous(&self, previous: u64, elapsed: u64) -> u64 {
        let d = self.length() as u128;
        let left = d - (elapsed as u128).min(d);
        ((previous as u128 * left) / d) as u64
    }

    fn count(&self, view: &View) -> u64 {
        view.state.current.saturating_add(self.weighted_previous(view.state.previous, view.elapsed))
    }

    /// The count a hit at `now` is decided against (the estimate's floor).
    pub(crate) fn count_at(&self, state: Option<&SlidingWindowState>, now: Nanos) -> u64 {
        self.count(&self.view(state, now))
    }

    /// The estimated rate at `now` as a real number, `current + previous * weight` (the
    /// gateway's `sliding_window()`; decisions use its floor).
    pub fn rate(&self, state: Option<&SlidingWindowState>, now: Nanos) -> f64 {
        let v = self.view(state, now);
        let d = self.length() as f64;
        v.state.current as f64 + v.state.previous as f64 * (d - (v.elapsed as f64).min(d)) / d
    }

    /// When a hit of `cost` fits, counting from the window of `view`: later in this window as
    /// the previous window's weight falls, or in the next window once the current count has
    /// become the previous one.
    fn retry_at(&self, view: &View, cost: u64) -> Nanos {
        let d = self.length() as u128;
        let room = self.limit - cost; // cost <= limit was validated
        let (window_start, counted, weighted) = if view.state.current <= room {
            (view.state.start, view.state.current, view.state.previous)
        } else {
            (self.align.end_of(view.state.start), 0, view.state.current)
        };
        // Smallest elapsed e with floor(weighted * (d - e) / d) <= room - counted, i.e.
        // weighted * (d - e) < (room - counted + 1) * d.
        let a = (room - counted) as u128 + 1;
        let elapsed = if weighted == 0 { 0 } else { d.saturating_sub((a * d - 1) / weighted as u128) };
        window_start + Nanos::new(elapsed as u64)
    }

    /// When the state decides like a fresh key: once both counters have left the window.
    fn fresh_time(&self, state: &SlidingWindowState) -> Nanos {
        let end = self.align.end_of(state.start);
        if state.current > 0 {
            self.align.end_of(end)
        } else if state.previous > 0 {
            end
        } else {
            state.start
        }
    }
}

impl Algorithm for SlidingWindow {
    type State = SlidingWindowState;

    fn name(&self) -> &'static str {
        "sliding-window"
    }

    fn limit(&self) -> u64 {
        self.limit
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        (self.limit, self.align.length())
    }

    fn longest_window(&self) -> Nanos {
        self.align.length().saturating_mul(2)
    }

    #[inline]
    fn check(
        &self,
        state: Option<&SlidingWindowState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Outcome<SlidingWindowState>, CheckError> {
        validate_cost(cost, self.limit)?;
        let view = self.view(state, now);
        let count = self.count(&view);
        if count.saturating_add(cost) <= self.limit {
            let new = SlidingWindowState { current: view.state.current.saturating_add(cost), ..view.state };
            Ok(Outcome {
                decision: Decision {
                    allowed: true,
                    limit: self.limit,
                    remaining: self.limit - count - cost,
                    reset_at: self.fresh_time(&new),
                    retry_after: Nanos::ZERO,
                    next_unit_after: if count + cost < self.limit {
                        Nanos::ZERO
                    } else {
                        self.retry_at(&self.view(Some(&new), now), 1).saturating_sub(now)
                    },
                },
                state: Some(new),
            })
        } else {
            Ok(Outcome {
                decision: Decision {
                    allowed: false,
                    limit: self.limit,
                    remaining: self.limit.saturating_sub(count),
                    reset_at: self.fresh_time(&view.state).max(now),
                    retry_after: self.retry_at(&view, cost) - now,
                    next_unit_after: if count < self.limit {
                        Nanos::ZERO
                    } else {
                        self.retry_at(&view, 1).saturating_sub(now)
                    },
                },
                state: None,
            })
        }
    }

    fn refund(&self, state: &SlidingWindowState, now: Nanos, cost: u64) -> Option<SlidingWindowState> {
        let view = self.view(Some(state), now);
        let from_current = view.state.current.min(cost);
        let from_previous = view.state.previous.min(cost - from_current);
        let new = SlidingWindowState {
            start: view.state.start,
            current: view.state.current - from_current,
            previous: view.state.previous - from_previous,
        };
        (new.current > 0 || new.previous > 0).then_some(new)
    }

    fn fresh_at(&self, state: &SlidingWindowState) -> Nanos {
        self.fresh_time(state)
    }
}
