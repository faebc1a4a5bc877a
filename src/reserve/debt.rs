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

use alloc::collections::VecDeque;

use crate::algorithm::Algorithm;
use crate::algorithms::{
    AnyAlgorithm, AnyState, FirstHitState, FixedWindowState, GcraState, LogEntry, SlidingBucketsState, SlidingLogState,
    SlidingWindowState, TokenBucketState,
};
use crate::time::Nanos;

/// Charges up to `units` on one limit's `slot` at `now`, past the limit, as far as the debt
/// cap allows (and, for a token bucket, in what its state can hold: the bucket's tokens, then
/// whole refills). Returns the new slot and the units charged; charging fewer units than
/// asked leaves the same kind of state, so `charge_debt(.., charged)` charges exactly
/// `charged`.
pub fn charge_debt(
    algorithm: &AnyAlgorithm,
    slot: Option<&AnyState>,
    now: Nanos,
    units: u64,
) -> (Option<AnyState>, u64) {
    let cap = algorithm.capacity();
    if units == 0 {
        return (slot.cloned(), 0);
    }
    match (algorithm, slot) {
        (AnyAlgorithm::Gcra(g), s) => {
            let s = match s {
                Some(AnyState::Gcra(s)) => Some(s),
                _ => None,
            };
            let t = g.emission_interval();
            let tat = s.map_or(now, |s| s.tat.max(now));
            // Twice the meter's span: `T * burst` fits in 62 bits, so this fits in 63.
            let most = t.saturating_mul(g.burst()).saturating_mul(2);
            let room = most.saturating_sub(tat - now).as_nanos() / t.as_nanos().max(1);
            let k = units.min(room);
            if k == 0 {
                return (slot.cloned(), 0);
            }
            (Some(AnyState::Gcra(GcraState { tat: tat.saturating_add(t.saturating_mul(k)) })), k)
        }
        (AnyAlgorithm::TokenBucket(b), s) => {
            let s = match s {
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
            let r = b.refill_amount();
            let horizon = now.saturating_add(b.interval().saturating_mul(cap / r));
            let most = horizon.saturating_sub(level.anchor).as_nanos() / b.interval().as_nanos();
            let steps = ((units - level.tokens) / r).min(most);
            let new =
                TokenBucketState { tokens: 0, anchor: level.anchor.saturating_add(b.interval().saturating_mul(steps)) };
            (Some(AnyState::TokenBucket(new)), level.tokens + steps * r)
        }
        (AnyAlgorithm::FixedWindow(f), s) => {
            let s = match s {
                Some(AnyState::FixedWindow(s)) => Some(s),
                _ => None,
            };
            let w = f.current(s, now);
            let k = units.min((2 * cap).saturating_sub(w.count));
            let new = FixedWindowState { start: w.start, count: w.count + k };
            ((new.count > 0).then_some(AnyState::FixedWindow(new)).or(slot.cloned()), k)
        }
        (AnyAlgorithm::FixedWindowFirstHit(f), s) => {
            let s = match s {
                Some(AnyState::FixedWindowFirstHit(s)) => Some(s),
                _ => None,
            };
            let w = f.current(s, now);
            let k = units.min((2 * cap).saturating_sub(w.count));
            let new = FirstHitState { start: w.start, count: w.count + k };
            ((new.count > 0).then_some(AnyState::FixedWindowFirstHit(new)).or(slot.cloned()), k)
        }
        (AnyAlgorithm::SlidingLog(l), s) => {
            let empty = SlidingLogState::default();
            let state = match s {
                Some(AnyState::SlidingLog(s)) => s,
                _ => &empty,
            };
            let view = l.view(state, now);
            let k = units.min((2 * cap).saturating_sub(view.active));
            if k == 0 {
                return (slot.cloned(), 0);
            }
            let mut entries: VecDeque<LogEntry> = state.entries.iter().skip(view.expired).copied().collect();
            match entries.back_mut() {
                Some(newest) if newest.at == view.at => newest.cost = newest.cost.saturating_add(k),
                _ => entries.push_back(LogEntry { at: view.at, cost: k }),
            }
            (Some(AnyState::SlidingLog(SlidingLogState::from_entries(entries))), k)
        }
        (AnyAlgorithm::SlidingWindow(w), s) => {
            let s = match s {
                Some(AnyState::SlidingWindow(s)) => Some(s),
                _ => None,
            };
            let view = w.view(s, now);
            let count = w.count_at(s, now);
            let k = units.min((2 * cap).saturating_sub(count));
            let new = SlidingWindowState { current: view.state.current.saturating_add(k), ..view.state };
            ((new.current > 0 || new.previous > 0).then_some(AnyState::SlidingWindow(new)).or(slot.cloned()), k)
        }
        (AnyAlgorithm::SlidingBuckets(b), s) => {
            let s = match s {
                Some(AnyState::SlidingBuckets(s)) => Some(s),
                _ => None,
            };
            let (newest, mut counts) = b.view(s, now);
            let sum = counts.iter().fold(0u64, |s, &c| s.saturating_add(c));
            let k = units.min((2 * cap).saturating_sub(sum));
            if k == 0 {
                return (slot.cloned(), 0);
            }
            match counts.back_mut() {
                Some(last) => *last = last.saturating_add(k),
                None => counts.push_back(k),
            }
            while counts.front() == Some(&0) {
                counts.pop_front();
            }
            (Some(AnyState::SlidingBuckets(SlidingBucketsState { newest, counts })), k)
        }
    }
}

/// The units a settlement's excess charges on every limit of `slots` at `now`: the most, up to
/// `excess`, that each limit charges exactly ([`charge_debt`]), so that every limit of every
/// key is charged the same. When a limit's cap (or a token bucket's whole refills) stops
/// short, every limit is charged only that much.
pub(crate) fn common_charge<'a>(
    pairs: impl Iterator<Item = (&'a AnyAlgorithm, Option<&'a AnyState>)> + Clone,
    now: Nanos,
    excess: u64,
) -> u64 {
    let mut units = excess;
    // Each round only lowers `units`; a token bucket's whole refills can make two buckets
    // round it down in turn, so after a few rounds it falls back to what every limit holds
    // of its own room (a bucket's tokens: exact for every algorithm).
    for _ in 0..8 {
        let least = pairs.clone().map(|(a, s)| charge_debt(a, s, now, units).1).min().unwrap_or(0);
        if least == units {
            return units;
        }
        units = least;
    }
    pairs
        .map(|(a, s)| a.peek(s, now, 1).map_or(0, |d| if d.allowed { d.remaining + 1 } else { 0 }))
        .min()
        .unwrap_or(0)
        .min(units)
}
