//! The one decision path: a hit of `cost` at `now` over pairs of an algorithm and a key's
//! state slot. Every limiter of the crate and of its edges decides through [`peek`] and
//! [`count`]: the policy over its keys and limits, the keyed limiter over one key's slot in its
//! map, the pacer over its two logs, the wasm limiter over a record's words. What differs is
//! only how each keeps its states, said by its [`Slots`]: the wasm store reads a fixed-width
//! state of the concrete algorithm from a record and writes it back, the keyed limiter holds
//! the state in its map, the policy in each key's [`PolicyState`](crate::policy::PolicyState).
//!
//! All or nothing over several pairs is the caller's: it [`peek`]s every pair, decides from
//! their answers (a policy also asks its penalty), and [`count`]s only when the hit is
//! admitted. One pair needs no peek: its algorithm counts only what it admits.
//!
//! ```
//! use tollgate::{decide, Gcra, Nanos, Quota};
//! let gcra = Gcra::new(Quota::per_second(1).unwrap()).unwrap();
//! let mut slot = None; // a fresh key
//! let d = decide::count(|_| &gcra, &mut slot, Nanos::ZERO, 1, |_, _| {}).unwrap();
//! assert!(d.allowed && slot.is_some());
//! let again = decide::peek(|_| &gcra, &slot, Nanos::ZERO, 1, |_, _| {}).unwrap();
//! assert!(!again.allowed);
//! ```

use crate::algorithm::Algorithm;
use crate::decision::Decision;
use crate::error::CheckError;
use crate::time::Nanos;

/// The state slots of the pairs a hit is decided over, pair `i`'s being `get(i)` (`None`:
/// fresh). A store implements it over however it keeps its states.
pub trait Slots<S> {
    /// How many pairs.
    fn len(&self) -> usize;

    /// Pair `i`'s state; `None` when it is fresh.
    fn get(&self, i: usize) -> Option<&S>;
}

/// [`Slots`] that a hit can be counted in.
pub trait SlotsMut<S>: Slots<S> {
    /// Pair `i`'s state to count in place; `None` when it is fresh.
    fn get_mut(&mut self, i: usize) -> Option<&mut S>;

    /// Stores the first state of pair `i`, fresh until its hit was admitted.
    fn fill(&mut self, i: usize, state: S);
}

/// One pair's slot.
impl<S> Slots<S> for Option<S> {
    #[inline(always)]
    fn len(&self) -> usize {
        1
    }

    #[inline(always)]
    fn get(&self, _: usize) -> Option<&S> {
        self.as_ref()
    }
}

impl<S> SlotsMut<S> for Option<S> {
    #[inline(always)]
    fn get_mut(&mut self, _: usize) -> Option<&mut S> {
        self.as_mut()
    }

    #[inline(always)]
    fn fill(&mut self, _: usize, state: S) {
        *self = Some(state);
    }
}

/// One slot per pair, in order.
impl<S> Slots<S> for [Option<S>] {
    #[inline(always)]
    fn len(&self) -> usize {
        <[Option<S>]>::len(self)
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&S> {
        self[i].as_ref()
    }
}

impl<S> SlotsMut<S> for [Option<S>] {
    #[inline(always)]
    fn get_mut(&mut self, i: usize) -> Option<&mut S> {
        self[i].as_mut()
    }

    #[inline(always)]
    fn fill(&mut self, i: usize, state: S) {
        self[i] = Some(state);
    }
}

/// One pair whose state a store holds (a key it found): never fresh.
pub struct Held<'a, S>(pub &'a mut S);

impl<S> Slots<S> for Held<'_, S> {
    #[inline(always)]
    fn len(&self) -> usize {
        1
    }

    #[inline(always)]
    fn get(&self, _: usize) -> Option<&S> {
        Some(self.0)
    }
}

impl<S> SlotsMut<S> for Held<'_, S> {
    #[inline(always)]
    fn get_mut(&mut self, _: usize) -> Option<&mut S> {
        Some(self.0)
    }

    #[inline(always)]
    fn fill(&mut self, _: usize, state: S) {
        *self.0 = state;
    }
}

/// The decision of a hit of `cost` at `now` at every pair, changing nothing: pair `i` is
/// decided by `algorithm(i)` over `slots.get(i)`, its decision given to `each`. Returns the
/// last pair's decision (one pair's: its own), or the first error.
#[inline(always)]
pub fn peek<'a, A, T>(
    algorithm: impl Fn(usize) -> &'a A,
    slots: &T,
    now: Nanos,
    cost: u64,
    mut each: impl FnMut(usize, Decision),
) -> Result<Decision, CheckError>
where
    A: Algorithm + 'a,
    T: Slots<A::State> + ?Sized,
{
    // The last pair's answer is returned as its algorithm gave it (one pair's: no re-wrapping).
    let last = slots.len().saturating_sub(1);
    for i in 0..last {
        each(i, algorithm(i).peek(slots.get(i), now, cost)?);
    }
    let answer = algorithm(last).peek(slots.get(last), now, cost);
    if let Ok(d) = &answer {
        each(last, *d);
    }
    answer
}

/// Counts a hit of `cost` at `now` at every pair: each pair's algorithm decides it over its
/// slot, writing the new state in place (or filling a fresh slot) when it admits the hit, and
/// gives its decision to `each`. Returns the last pair's decision (one pair's: its own), or
/// the first error. A pair counts what it admits whatever the others answer: over several
/// pairs the caller counts only after [`peek`] found every pair admitting the hit.
#[inline(always)]
pub fn count<'a, A, T>(
    algorithm: impl Fn(usize) -> &'a A,
    slots: &mut T,
    now: Nanos,
    cost: u64,
    mut each: impl FnMut(usize, Decision),
) -> Result<Decision, CheckError>
where
    A: Algorithm + 'a,
    T: SlotsMut<A::State> + ?Sized,
{
    // The last pair's answer is returned as its algorithm gave it (one pair's: no re-wrapping).
    let last = slots.len().saturating_sub(1);
    for i in 0..last {
        each(i, count_pair(algorithm(i), slots, i, now, cost)?);
    }
    let answer = count_pair(algorithm(last), slots, last, now, cost);
    if let Ok(d) = &answer {
        each(last, *d);
    }
    answer
}

/// Pair `i`'s count: in place when it has a state, else filling its slot when admitted.
#[inline(always)]
fn count_pair<A, T>(a: &A, slots: &mut T, i: usize, now: Nanos, cost: u64) -> Result<Decision, CheckError>
where
    A: Algorithm,
    T: SlotsMut<A::State> + ?Sized,
{
    match slots.get_mut(i) {
        Some(state) => a.check_in_place(state, now, cost),
        None => {
            let outcome = a.check(None, now, cost)?;
            if let Some(state) = outcome.state {
                slots.fill(i, state);
            }
            Ok(outcome.decision)
        }
    }
}

/// One pair's slot read where it is kept (a peek needs no copy of it).
pub struct Read<'a, S>(pub Option<&'a S>);

impl<S> Slots<S> for Read<'_, S> {
    #[inline(always)]
    fn len(&self) -> usize {
        1
    }

    #[inline(always)]
    fn get(&self, _: usize) -> Option<&S> {
        self.0
    }
}
