//! How a limit charges a settlement's excess beyond its room: the key goes into **debt**.
//!
//! A settlement's excess (`actual - estimate`) is charged whole, past the limit, up to a
//! **debt cap of one limit** (the window's limit, the bucket's capacity, the meter's burst):
//! the state then holds at most twice what a check could leave in it, and the key's next hits
//! are denied, with an exact `retry_after`, until the debt is paid. Each algorithm keeps its
//! own state layout; debt is only a value its checks already decide on:
//!
//! | algorithm | in debt | paid |
//! |---|---|---|
//! | `gcra` | the TAT past `now + burst * T` (at most `burst * T` past it) | at the rate, one unit per `T` |
//! | `token-bucket` | no tokens and the refill anchor in the future, in whole refills (at most the capacity's whole refills) | by the refills that the anchor was moved past |
//! | `fixed-window` (both) | the window's count above the limit (at most one limit above) | when the window ends: debt does not carry into the next window |
//! | `sliding-log` | the window's entries above the limit (an entry of the excess) | as the entries leave the window |
//! | `sliding-window` | the current window's count above the limit | as the count slides out, through the next window's weighted previous count |
//! | `sliding-buckets` | the buckets' sum above the limit | as the buckets leave the window |
//!
//! docs/reserve.md states the bound that results, per algorithm.

use crate::algorithm::Algorithm;
use crate::algorithms::{AnyAlgorithm, AnyState, TokenBucketState};
use crate::time::Nanos;

/// Charges up to `units` on one limit's `slot` at `now`, past the limit, as far as the debt
/// cap allows (and, for a token bucket, in what its state can hold: the bucket's tokens, then
/// whole refills). Returns the new slot and the units charged; charging fewer units than
/// asked leaves the same kind of state, so `charge_debt(.., charged)` charges exactly
/// `charged`.
///
/// Every algorithm but the token bucket charges as a check of the same algorithm with twice
/// the limit: the hit its room admits, its state what that check writes.
pub fn charge_debt(
    algorithm: &AnyAlgorithm,
    slot: Option<&AnyState>,
    now: Nanos,
    units: u64,
) -> (Option<AnyState>, u64) {
    let doubled = match algorithm {
        AnyAlgorithm::TokenBucket(b) => {
            let s = match slot {
                Some(AnyState::TokenBucket(s)) => Some(s),
                _ => None,
            };
            let level = b.level(s, now);
            if units <= level.tokens {
                let new = TokenBucketState { tokens: level.tokens - units, anchor: level.anchor };
                return (Some(AnyState::TokenBucket(new)), units);
            }
            // Past the tokens, whole refills: the anchor moves one interval per refill owed,
            // no further than the capacity's whole refills past `now`.
            let (r, interval) = (b.refill_amount(), b.interval());
            let horizon = now.saturating_add(interval.saturating_mul(b.limit() / r));
            let most = horizon.saturating_sub(level.anchor).as_nanos() / interval.as_nanos();
            let steps = ((units - level.tokens) / r).min(most);
            let new =
                TokenBucketState { tokens: 0, anchor: level.anchor.saturating_add(interval.saturating_mul(steps)) };
            return (Some(AnyState::TokenBucket(new)), level.tokens + steps * r);
        }
        AnyAlgorithm::Gcra(a) => AnyAlgorithm::Gcra(a.with_debt_cap()),
        AnyAlgorithm::FixedWindow(a) => AnyAlgorithm::FixedWindow(a.with_debt_cap()),
        AnyAlgorithm::FixedWindowFirstHit(a) => AnyAlgorithm::FixedWindowFirstHit(a.with_debt_cap()),
        AnyAlgorithm::SlidingLog(a) => AnyAlgorithm::SlidingLog(a.with_debt_cap()),
        AnyAlgorithm::SlidingWindow(a) => AnyAlgorithm::SlidingWindow(a.with_debt_cap()),
        AnyAlgorithm::SlidingBuckets(a) => AnyAlgorithm::SlidingBuckets(a.with_debt_cap()),
        // Slots are not units: an excess takes no slot, and limits nothing.
        #[cfg(feature = "concurrency")]
        AnyAlgorithm::Concurrency(_) => return (slot.cloned(), units),
    };
    // The room a one-unit check leaves, and that unit: what the doubled limit still admits.
    let room = doubled.peek(slot, now, 1).map_or(0, |d| if d.allowed { d.remaining + 1 } else { 0 });
    let k = units.min(room);
    match doubled.check(slot, now, k) {
        Ok(outcome) if k > 0 && outcome.decision.allowed => (outcome.state, k),
        _ => (slot.cloned(), 0),
    }
}

/// The units a settlement's excess charges on every limit of `pairs` (each limit's algorithm
/// and slot, over every key) at `now`: the most, up to `excess`, that each limit charges
/// exactly ([`charge_debt`]), so that every limit of every key is charged the same. When a
/// limit's cap (or a token bucket's whole refills) stops short, every limit is charged only
/// that much.
pub(crate) fn common_charge(pairs: &[(&AnyAlgorithm, Option<&AnyState>)], now: Nanos, excess: u64) -> u64 {
    let mut units = excess;
    // Each round only lowers `units`, and ends when every limit charges it exactly. Token
    // buckets of different refills can round it down in turn for many rounds: after a few,
    // `units` falls to what every bucket holds in tokens, which every limit charges exactly.
    for _ in 0..8 {
        let least = pairs.iter().map(|&(a, s)| charge_debt(a, s, now, units).1).min().unwrap_or(0);
        if least == units {
            return units;
        }
        units = least;
    }
    let tokens = |&(a, s): &(&AnyAlgorithm, Option<&AnyState>)| match (a, s) {
        (AnyAlgorithm::TokenBucket(b), Some(AnyState::TokenBucket(s))) => b.level(Some(s), now).tokens,
        (AnyAlgorithm::TokenBucket(b), _) => b.limit(),
        _ => u64::MAX,
    };
    pairs.iter().map(tokens).min().unwrap_or(0).min(units)
}
