//! GCRA, the generic cell rate algorithm: a leaky bucket used as a meter.
//!
//! A continuously refilling bucket stored as a single timestamp, the theoretical arrival time
//! (TAT). With emission interval `T = window / limit` and tolerance `tau = T * (burst - 1)`,
//! a hit of cost `n` at `now` is admitted iff
//!
//! ```text
//! now >= max(TAT, now) + (n - 1) * T - tau
//! ```
//!
//! and then `TAT = max(TAT, now) + n * T`; a denied hit leaves TAT unchanged, and `n` above
//! `burst` can never fit. It is what governor, redis-cell and nginx use.
//!
//! **Guarantee**: at most `burst + floor(d / T)` units in any closed interval of length `d`;
//! a fresh key admits exactly `burst` units at one instant.
//!
//! **Pros**: the smallest state (8 bytes), a smooth rate with a controlled burst, and an
//! exact `retry_after` to the nanosecond; time going backwards only makes it stricter.
//! **Cons**: harder to explain than a window ("why was I denied with 40 of 100 left this
//! minute?": there are no minutes); not mergeable across nodes.
//!
//! **Pick it when**: you want a smooth rate with a controlled burst in the least state and
//! exact retry times (governor, redis-cell, nginx).

use core::num::NonZeroU64;

use crate::algorithm::{validate_cost, Algorithm};
use crate::algorithms::token_bucket::MAX_SPAN;
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::quota::{Quota, MAX_LIMIT};
use crate::time::Nanos;

/// GCRA, configured once from a quota.
///
/// ```
/// use tollgate::{algorithm::check_slot, Gcra, Nanos, Quota};
/// // 10 per second, bursts of 5.
/// let gcra = Gcra::new(Quota::per_second(10).unwrap().with_burst(5).unwrap()).unwrap();
/// let mut state = None;
/// let now = Nanos::from_secs(1_700_000_000);
/// for _ in 0..5 {
///     assert!(check_slot(&gcra, &mut state, now, 1).unwrap().allowed);
/// }
/// let sixth = check_slot(&gcra, &mut state, now, 1).unwrap();
/// assert_eq!(sixth.retry_after, Nanos::from_millis(100)); // one emission interval
/// ```
#[derive(Copy, Clone, Debug)]
pub struct Gcra {
    /// Emission interval `T`, never zero: `remaining` divides by it, and a divisor the
    /// compiler knows is not zero needs no check on every decision.
    t: NonZeroU64,
    /// Tolerance `tau = T * (burst - 1)`.
    tau: Nanos,
    /// Never zero: a check of one unit then needs no test against it.
    burst: NonZeroU64,
    /// The rate as configured, `limit` per `window` (what `RateLimit-Policy` advertises).
    rate: (u64, Nanos),
}

/// Meters that decide alike are equal, however their rate was written (`10/s` or an
/// emission interval of 100 ms): the advertised form is not part of the algorithm.
impl PartialEq for Gcra {
    fn eq(&self, other: &Gcra) -> bool {
        (self.t, self.tau, self.burst) == (other.t, other.tau, other.burst)
    }
}

impl Eq for Gcra {}

impl core::hash::Hash for Gcra {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        (self.emission_interval(), self.tau, self.burst()).hash(state);
    }
}

/// One key's meter: 8 bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct GcraState {
    /// Theoretical arrival time: when the meter will be empty again.
    pub tat: Nanos,
}

impl Gcra {
    /// The same algorithm with twice the limit: what a settlement charges into debt against
    /// (src/reserve/debt.rs), the limit past the limit being the debt cap.
    pub(crate) fn with_debt_cap(&self) -> Self {
        // `T * burst` fits in 62 bits (`from_parts`), so twice it fits in 63: no product of
        // `T` with a cost up to twice the burst overflows.
        let burst = self.burst.saturating_mul(NonZeroU64::MIN.saturating_add(1));
        Gcra { tau: self.emission_interval().saturating_mul(burst.get() - 1), burst, ..*self }
    }

    /// `quota.limit()` per window, bursts of `quota.burst()` (the limit unless given).
    pub fn new(quota: Quota) -> Result<Gcra, ConfigError> {
        let t = quota.emission_interval()?;
        let gcra = Gcra::from_parts(t, quota.burst())?;
        Ok(Gcra { rate: (quota.limit(), quota.window()), ..gcra })
    }

    /// From the emission interval and the burst directly.
    pub fn from_parts(emission_interval: Nanos, burst: u64) -> Result<Gcra, ConfigError> {
        let Some(nonzero_burst) = NonZeroU64::new(burst) else {
            return Err(ConfigError::ZeroBurst);
        };
        if burst > MAX_LIMIT {
            return Err(ConfigError::BurstTooLarge { burst, max: MAX_LIMIT });
        }
        let Some(t) = NonZeroU64::new(emission_interval.as_nanos()) else {
            return Err(ConfigError::RateTooHigh { limit: burst, window_ns: 0 });
        };
        if (t.get() as u128) * (burst as u128) > MAX_SPAN as u128 {
            return Err(ConfigError::BurstTooLarge { burst, max: MAX_SPAN / t });
        }
        // `T * burst` fits (checked above), so no product of `T` with a cost the check has
        // validated (at most `burst`) can overflow, and `T + tau` is exactly `T * burst`.
        Ok(Gcra {
            t,
            tau: emission_interval.saturating_mul(burst - 1),
            burst: nonzero_burst,
            rate: (1, emission_interval),
        })
    }

    /// The decision on a hit of a validated `cost` against a meter standing at `tat` (already
    /// `max(TAT, now)`). When admitted, the new TAT is the decision's `reset_at`.
    ///
    /// The same decision as `now >= (tat + T * (cost - 1)).saturating_sub(tau)` with every
    /// step saturating, written so that no step needs to: `tat >= now` makes `tat - now` exact,
    /// and `cost <= burst` makes `T * (cost - 1) <= tau`. Only a meter within `T * (cost - 1)`
    /// of `Nanos::MAX`, where `tat + T * (cost - 1)` would have saturated, takes the other
    /// branch of [`wait`](Gcra::wait); for one unit the compiler drops that branch.
    #[inline(always)]
    fn decide(&self, tat: Nanos, now: Nanos, cost: u64) -> Decision {
        let ahead = tat.as_nanos() - now.as_nanos();
        match self.wait(tat, ahead, now, cost) {
            None => {
                let new_tat = tat + self.span_of(cost);
                let new_ahead = new_tat.as_nanos() - now.as_nanos();
                Decision {
                    allowed: true,
                    limit: self.burst(),
                    // An admitted hit leaves the meter at most its whole span ahead of `now`.
                    remaining: (self.full().as_nanos() - new_ahead) / self.t,
                    reset_at: new_tat,
                    retry_after: Nanos::ZERO,
                    next_unit_after: self.next_unit_after(new_ahead),
                }
            }
            Some(wait) => Decision {
                allowed: false,
                limit: self.burst(),
                // A denied hit leaves less room than its cost (`now < allow_at` is exactly
                // `room < cost`), so a denied unit leaves none: no division on the path every
                // over-limit client takes.
                remaining: if cost == 1 { 0 } else { self.room(tat, now) },
                reset_at: tat,
                retry_after: Nanos::new(wait),
                next_unit_after: self.next_unit_after(ahead),
            },
        }
    }

    /// How long after `now` a hit of `cost` would be admitted by the meter standing at `tat`
    /// (`ahead = tat - now`); `None`: it is admitted now.
    #[inline(always)]
    fn wait(&self, tat: Nanos, ahead: u64, now: Nanos, cost: u64) -> Option<u64> {
        let before = self.t.get() * (cost - 1);
        if tat.as_nanos() <= u64::MAX - before {
            let slack = self.tau.as_nanos() - before;
            (ahead > slack).then(|| ahead - slack)
        } else {
            let allow_at = u64::MAX - self.tau.as_nanos();
            (now.as_nanos() < allow_at).then(|| allow_at - now.as_nanos())
        }
    }

    /// The emission interval `T`.
    #[inline]
    pub fn emission_interval(&self) -> Nanos {
        Nanos::new(self.t.get())
    }

    /// The burst.
    #[inline]
    pub fn burst(&self) -> u64 {
        self.burst.get()
    }

    /// Units that would still be admitted at `now` if the meter stood at `tat`.
    #[inline]
    pub(crate) fn room(&self, tat: Nanos, now: Nanos) -> u64 {
        (self.full().saturating_sub(tat.saturating_sub(now))).as_nanos() / self.t
    }

    /// `T * burst`, the meter's whole span: `T + tau` without an overflow check, since
    /// `from_parts` refused any burst whose span does not fit.
    #[inline]
    fn full(&self) -> Nanos {
        Nanos::new(self.t.get() + self.tau.as_nanos())
    }

    /// `T * cost` for a cost already validated (`1..=burst`): cannot overflow (see `full`).
    #[inline]
    fn span_of(&self, cost: u64) -> Nanos {
        Nanos::new(self.t.get() * cost)
    }

    /// When a meter standing `ahead` of `now` admits one more unit, from `now`: zero while it
    /// has room (`ahead <= tau` is exactly `room >= 1`).
    #[inline]
    fn next_unit_after(&self, ahead: u64) -> Nanos {
        Nanos::new(ahead.saturating_sub(self.tau.as_nanos()))
    }
}

impl Algorithm for Gcra {
    type State = GcraState;

    fn name(&self) -> &'static str {
        "gcra"
    }

    #[inline]
    fn limit(&self) -> u64 {
        self.burst()
    }

    /// The sustained rate as configured (`limit` per `window`), not the burst: a client
    /// pacing at it is admitted every time. Where the window does not divide by the limit
    /// in nanoseconds, `T` is rounded up and the true rate is below it by under 1 ns per
    /// unit (docs/headers.md says what that means for a client).
    fn advertised_quota(&self) -> (u64, Nanos) {
        self.rate
    }

    fn longest_window(&self) -> Nanos {
        self.full()
    }

    #[inline]
    fn check(&self, state: Option<&GcraState>, now: Nanos, cost: u64) -> Result<Outcome<GcraState>, CheckError> {
        validate_cost(cost, self.burst())?;
        let decision = self.decide(state.map_or(now, |s| s.tat.max(now)), now, cost);
        Ok(Outcome { decision, state: decision.allowed.then_some(GcraState { tat: decision.reset_at }) })
    }

    /// The same decision as `check`, written straight into the key's state: the hot path of
    /// every keyed store, without an `Outcome` to build and take apart.
    #[inline]
    fn check_in_place(&self, state: &mut GcraState, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        validate_cost(cost, self.burst())?;
        let decision = self.decide(state.tat.max(now), now, cost);
        if decision.allowed {
            state.tat = decision.reset_at;
        }
        Ok(decision)
    }

    fn refund(&self, state: &GcraState, now: Nanos, cost: u64) -> Option<GcraState> {
        let tat = state.tat.saturating_sub(self.emission_interval().saturating_mul(cost));
        (tat > now).then_some(GcraState { tat })
    }

    #[inline]
    fn fresh_at(&self, state: &GcraState) -> Nanos {
        state.tat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The decision with every step of it saturating: the reference the
    /// check must keep answering exactly, whatever the arithmetic it is computed with.
    fn saturating_reference(gcra: &Gcra, tat: Nanos, now: Nanos, cost: u64) -> Decision {
        let (t, tau, burst) = (gcra.emission_interval(), gcra.tau, gcra.burst());
        let full = t.saturating_mul(burst);
        let room = |tat: Nanos| full.saturating_sub(tat.saturating_sub(now)).as_nanos() / t.as_nanos();
        let next_unit_after = |tat: Nanos| tat.saturating_sub(tau).saturating_sub(now);
        let tat = tat.max(now);
        let allow_at = tat.saturating_add(t.saturating_mul(cost - 1)).saturating_sub(tau);
        if now >= allow_at {
            let new_tat = tat.saturating_add(t.saturating_mul(cost));
            Decision {
                allowed: true,
                limit: burst,
                remaining: room(new_tat),
                reset_at: new_tat,
                retry_after: Nanos::ZERO,
                next_unit_after: next_unit_after(new_tat),
            }
        } else {
            Decision {
                allowed: false,
                limit: burst,
                remaining: room(tat),
                reset_at: tat,
                retry_after: allow_at.saturating_sub(now),
                next_unit_after: next_unit_after(tat),
            }
        }
    }

    /// Instants anywhere, near zero, near `Nanos::MAX` (where sums saturate) and close to one
    /// another (where the meter decides).
    fn instant() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            0u64..1_000,
            (0u64..1_000).prop_map(|d| u64::MAX - d),
            (0u64..1 << 40).prop_map(|d| (1 << 60) + d)
        ]
    }

    /// Any meter `from_parts` accepts: every emission interval, every burst whose span fits.
    fn meter() -> impl Strategy<Value = Gcra> {
        prop_oneof![1u64..1_000, any::<u64>().prop_map(|t| t % MAX_SPAN + 1)]
            .prop_flat_map(|t| (Just(t), 1..=(MAX_SPAN / t).clamp(1, MAX_LIMIT)))
            .prop_map(|(t, burst)| Gcra::from_parts(Nanos::new(t), burst).unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        /// Every check, in place or from a stored state, with a valid cost, answers what the
        /// saturating reference answers, down to the last field.
        #[test]
        fn decides_as_the_saturating_reference(gcra in meter(), tat in instant(), now in instant(), draw in any::<u64>()) {
            let burst = gcra.burst();
            let cost = [1, burst, draw % burst + 1][(draw % 3) as usize];
            let (tat, now) = (Nanos::new(tat), Nanos::new(now));
            let want = saturating_reference(&gcra, tat, now, cost);
            let out = gcra.check(Some(&GcraState { tat }), now, cost).unwrap();
            prop_assert_eq!(out.decision, want);
            let mut state = GcraState { tat };
            prop_assert_eq!(gcra.check_in_place(&mut state, now, cost).unwrap(), want);
            prop_assert_eq!(state.tat, if want.allowed { want.reset_at } else { tat });
            prop_assert_eq!(gcra.check(None, now, cost).unwrap().decision, saturating_reference(&gcra, Nanos::ZERO, now, cost));
        }
    }
}
