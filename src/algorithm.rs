//! The one interface every algorithm implements.

use core::fmt::Debug;

use crate::decision::{Decision, Outcome};
use crate::error::CheckError;
use crate::time::Nanos;

/// A rate-limiting algorithm: a precomputed configuration whose decisions are pure functions
/// of `(state, now, cost)`.
///
/// The state of a key no hit has touched is `None` ("fresh"). An algorithm never reads a
/// clock, never allocates outside its own state, and never changes state on a denied hit, so
/// the same trace of `(now, cost)` gives the same decisions in every runtime and every store.
///
/// Time may go backwards between calls (clocks step, nodes disagree). Every algorithm then
/// decides as if `now` were the latest time its state has seen, or more strictly: a clock
/// that jumps back never admits extra hits and never writes state "in the past".
pub trait Algorithm {
    /// What the algorithm remembers about one key.
    type State: Clone + Debug + PartialEq;

    /// The algorithm's name as the JS and HTTP layers spell it (`"gcra"`, `"sliding-log"`).
    fn name(&self) -> &'static str;

    /// The most the limit admits at once: a window's limit, a bucket's capacity.
    fn limit(&self) -> u64;

    /// The largest cost that can ever be admitted. A larger cost is
    /// [`CheckError::CostExceedsCapacity`], not a denial: waiting would never help.
    fn capacity(&self) -> u64 {
        self.limit()
    }

    /// The quota to advertise in the `RateLimit-Policy` header: `q` units per `w`.
    fn advertised_quota(&self) -> (u64, Nanos);

    /// The longest time a state can matter: after this long without hits, any state is fresh.
    fn longest_window(&self) -> Nanos;

    /// Decides a hit of `cost` units at `now`. The pure core of the crate: the decision and,
    /// if the hit is admitted, the new state.
    fn check(&self, state: Option<&Self::State>, now: Nanos, cost: u64) -> Result<Outcome<Self::State>, CheckError>;

    /// The decision [`check`](Algorithm::check) would make, without producing a new state.
    fn peek(&self, state: Option<&Self::State>, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        self.check(state, now, cost).map(|o| o.decision)
    }

    /// [`check`](Algorithm::check) for a key that has state, writing the new state in place
    /// when the hit is admitted (and leaving it untouched otherwise). Algorithms with large
    /// states (the sliding log) override this to avoid a copy; the property tests hold both
    /// paths to the same answers.
    fn check_in_place(&self, state: &mut Self::State, now: Nanos, cost: u64) -> Result<Decision, CheckError> {
        let outcome = self.check(Some(state), now, cost)?;
        if let Some(new) = outcome.state {
            *state = new;
        }
        Ok(outcome.decision)
    }

    /// Gives back `cost` units (a request that turned out not to count), never beyond the
    /// fresh state. Returns the new state, `None` when the key is back to fresh.
    fn refund(&self, state: &Self::State, now: Nanos, cost: u64) -> Option<Self::State>;

    /// The instant from which `state` decides exactly like a fresh key, so a store may drop it.
    fn fresh_at(&self, state: &Self::State) -> Nanos;
}

/// Refuses costs that are zero or above the capacity, before anything is decided.
#[inline]
pub(crate) fn validate_cost(cost: u64, capacity: u64) -> Result<(), CheckError> {
    if cost == 0 {
        Err(CheckError::ZeroCost)
    } else if cost > capacity {
        Err(CheckError::CostExceedsCapacity { cost, capacity, limit: 0 })
    } else {
        Ok(())
    }
}

/// Checks a hit against a key's slot, `None` meaning fresh: the in-place form every store
/// uses. The slot changes only when the hit is admitted.
///
/// ```
/// use tollgate::{algorithm::check_slot, Gcra, Nanos, Quota};
/// let gcra = Gcra::new(Quota::per_second(1).unwrap()).unwrap();
/// let mut slot = None;
/// assert!(check_slot(&gcra, &mut slot, Nanos::ZERO, 1).unwrap().allowed);
/// assert!(slot.is_some());
/// ```
pub fn check_slot<A: Algorithm + ?Sized>(
    algorithm: &A,
    slot: &mut Option<A::State>,
    now: Nanos,
    cost: u64,
) -> Result<Decision, CheckError> {
    match slot {
        Some(state) => algorithm.check_in_place(state, now, cost),
        None => {
            let outcome = algorithm.check(None, now, cost)?;
            *slot = outcome.state;
            Ok(outcome.decision)
        }
    }
}
