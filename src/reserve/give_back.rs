//! How much of a reservation's charge a limit gives back at settlement.
//!
//! A limit gives back only units it still holds *of that reservation*, so a settlement never
//! frees units that other hits took or that time already freed: what every window admits
//! stays within the limit (docs/reserve.md states the bound per algorithm).
//!
//! - GCRA and the token bucket drain in order: the reservation's units are the last
//!   `estimate` of the schedule when it was charged, which the limit holds until `mark` (the
//!   slot's `fresh_at` right after). At `now`, the units still held are those that would
//!   drain between `now` and `mark`, rounded down.
//! - The window algorithms (fixed windows, sliding log, window, buckets) give back only while
//!   the slot's `fresh_at` is still `mark`: no later hit was counted on the limit (for the
//!   fixed windows: the window is the reservation's), so the newest units the limit holds
//!   are the reservation's own. Otherwise the reservation stays charged at its estimate.

use crate::algorithm::Algorithm;
use crate::algorithms::{AnyAlgorithm, AnyState};
use crate::time::Nanos;

/// Gives back up to `units` of a reservation's charge from one limit's `slot` at `now`,
/// `mark` being the slot's `fresh_at` right after the charge. Returns the new slot and how
/// many units were given back.
pub fn give_back(
    algorithm: &AnyAlgorithm,
    slot: Option<&AnyState>,
    now: Nanos,
    units: u64,
    mark: Nanos,
) -> (Option<AnyState>, u64) {
    let Some(state) = slot else { return (None, 0) };
    let held = match algorithm {
        AnyAlgorithm::Gcra(g) => mark.saturating_sub(now).as_nanos() / g.emission_interval().as_nanos().max(1),
        AnyAlgorithm::TokenBucket(b) => {
            (mark.saturating_sub(now).as_nanos() / b.interval().as_nanos().max(1)).saturating_mul(b.refill_amount())
        }
        _ if algorithm.fresh_at(state) == mark => units,
        _ => 0,
    };
    let units = units.min(held);
    if units == 0 {
        return (Some(state.clone()), 0);
    }
    (algorithm.refund(state, now, units), units)
}
