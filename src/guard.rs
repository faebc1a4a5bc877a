//! Guarded updates: what a compare-and-swap store may write when the bytes it finds are not
//! the bytes the decision was made over, without deciding anything itself.
//!
//! A store that only swaps opaque bytes (Redis with a script) loses a race whenever another
//! writer changed the key between the read and the swap; the loser then reads the new bytes and
//! decides again, one more round trip. On one hot key every win invalidates every other
//! writer's read. But for many states the decision over the new bytes is the decision over the
//! old ones *moved*: a busy GCRA meter that another writer advanced by 40 µs admits the same
//! hits and ends 40 µs further on. A [`Guard`] states exactly that, so the store can apply it.
//!
//! **What a guard says.** A version-1 state ([`crate::codec`]) is a sequence of LEB128 varints
//! (its version byte, tags and slot counts are varints too: all below 128). Shifting a set of
//! field positions `F` of that sequence by a signed `delta` gives another state. Deciding a
//! batch of hits (each with its own `now` and `cost`) over bytes `B` admitted every hit and
//! wrote `B'`. Its guard `(F, lo, hi, knee)` promises: for **every** `delta` in `[lo, hi]`,
//! deciding the same batch over `B` with the fields `F` shifted by `delta` admits every hit
//! too, and writes exactly `B'` with the fields `F` shifted by
//! `shift(delta) = max(delta, knee) - max(0, knee)`.
//!
//! The knee is where an idle state meets a busy one. GCRA's meter starts each hit from
//! `max(tat, now)`: above `now` it moves with `tat` (the output shifts with `delta`), below it
//! the output does not depend on `tat` at all (shift 0). With times in milliseconds at the JS
//! edge, a hot key is busy only within one millisecond and idle at the next, so a guard that
//! covered only the busy side would rarely apply; the knee covers both sides exactly.
//!
//! **Why it is safe.** The store applies a guard only when the bytes `C` it finds are `B` with
//! only the fields `F` moved, all by one common `delta` in `[lo, hi]`: then `C` *is* `B`
//! shifted, so by the promise above, the core deciding the batch over `C` would admit every hit
//! and write `B'` shifted by `shift(delta)`: exactly what the store writes. The decisions stay
//! the core's: the writer decides the batch again over `C` (in memory, no round trip) for the
//! figures of each hit (`remaining`, `reset` move with the state), and its bytes are the bytes
//! the store wrote (the tests assert it). The store never learns an algorithm: it compares
//! varints and adds one integer. Anything else (other fields moved, a different number of
//! fields, `delta` out of range) is a plain conflict, as without a guard.
//!
//! **Which states have one** (see [`check_guarded`]): one key under a policy of one limit with
//! no penalty, a version-1 state (not a blocked one), the batch all admitted, and the
//! algorithm
//! - GCRA: the fields are the expiry and `tat`, moved together;
//! - a fixed window (clock-aligned or from the first hit): the count, while the hits count in
//!   the window the state holds (a hit in a later window does not depend on the count: it
//!   writes the same bytes over any count, shift 0);
//! - a sliding window counter: the current window's count, while the hits count in the window
//!   the state holds, or in one two or more windows later (which forgets both counts); a hit in
//!   the next window makes the count the previous window's, another field: no guard.
//!
//! A fresh key, a blocked key, several keys or limits, a denial in the batch and the other
//! algorithms (sliding log, sliding buckets, token bucket) get no guard: a plain
//! compare-and-swap.
//!
//! Every bound is kept within `±`[`MAX_SHIFT`], so a store with only doubles (Redis's Lua)
//! computes every `delta` and shift exactly.

use alloc::vec::Vec;

use crate::algorithms::{AnyAlgorithm, AnyState};
use crate::codec::{put, Reader};
use crate::error::CheckError;
use crate::policy::{Policy, PolicyDecision, PolicyState};
use crate::time::Nanos;

/// The largest `|delta|`, `|knee|` and shift a guard ever states: well inside the integers a
/// double holds exactly (2^53).
pub const MAX_SHIFT: i64 = 1 << 50;

/// No value a guarded field takes, before or after any shift in range, exceeds this: the
/// core's saturating time arithmetic never saturates over a guard's range.
const MAX_VALUE: u64 = 1 << 63;

/// The fields of a version-1 state of one slot: version, expiry, slot count, tag, then the
/// algorithm's fields from this position on.
const FIRST_ALGORITHM_FIELD: u32 = 4;
/// Where the expiry is in every state's varints: a store moves the key's TTL with it.
pub const EXPIRY_FIELD: u32 = 1;
/// The count of both fixed windows and the current count of a sliding window: each is the
/// second field of its algorithm, after the window start.
const COUNT_FIELD: u32 = FIRST_ALGORITHM_FIELD + 1;

/// A guarded update (see the [module docs](self)): which varint fields move, the range of
/// `delta` over which the decision moves with them, and how the written fields move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The positions in the state's varint sequence that move together (bit `i`: varint `i`).
    pub fields: u32,
    /// The least `delta` covered (`<= 0`).
    pub lo: i64,
    /// The greatest `delta` covered (`>= 0`).
    pub hi: i64,
    /// Below it, the written fields do not move (see [`Guard::shift`]); within `[lo, hi]`.
    pub knee: i64,
}

impl Guard {
    /// A guard over `fields` for `delta` in `[lo, hi]` (clipped to `±MAX_SHIFT`), or `None`
    /// when that range does not hold 0 (the bytes the decision was made over).
    pub fn new(fields: u32, lo: i64, hi: i64, knee: i64) -> Option<Guard> {
        let lo = lo.max(-MAX_SHIFT);
        let hi = hi.min(MAX_SHIFT);
        if fields == 0 || lo > 0 || hi < 0 {
            return None;
        }
        // Over a range holding 0, a knee outside it shifts exactly as the range's end does.
        let knee = knee.clamp(lo, hi);
        Some(Guard { fields, lo, hi, knee })
    }

    /// Whether the guard covers bytes whose fields moved by `delta`.
    pub fn covers(&self, delta: i64) -> bool {
        (self.lo..=self.hi).contains(&delta)
    }

    /// How far the written fields move when the read ones moved by `delta` (in range).
    pub fn shift(&self, delta: i64) -> i64 {
        delta.max(self.knee) - self.knee.max(0)
    }

    /// The guard of two decisions in a row, `self`'s then `next`'s (whose bytes read are the
    /// bytes `self`'s decision wrote): `None` when they move different fields or no range
    /// is left.
    pub fn then(&self, next: &Guard) -> Option<Guard> {
        if self.fields != next.fields {
            return None;
        }
        // Every bound is within 2^50: no sum below overflows.
        let (k1, c1) = (self.knee, self.knee.max(0));
        // Keep shift(delta) within next's range: shift is max(delta, k1) - c1, non-decreasing.
        let hi = self.hi.min(next.hi + c1);
        let lo = if next.lo + c1 > k1 { self.lo.max(next.lo + c1) } else { self.lo };
        // max(max(d, k1) - c1, k2) - c2 = max(d, k1, k2 + c1) - (c1 + c2), and c1 + c2 is
        // max(0, that knee).
        let knee = k1.max(next.knee + c1);
        Guard::new(self.fields, lo, hi, knee)
    }

    /// What a store holding `current` writes, given a decision over `expected` that wrote
    /// `written` under this guard: `written` shifted by [`shift`](Guard::shift)`(delta)` when
    /// `current` is `expected` with only the guard's fields moved, all by one `delta` in
    /// range; otherwise `None` (a plain conflict). This is the rule the Redis store's script
    /// applies (the npm package's `redis-guard.js`), in Rust for the tests.
    pub fn apply(&self, expected: &[u8], written: &[u8], current: &[u8]) -> Option<Vec<u8>> {
        let (e, c) = (varints(expected)?, varints(current)?);
        if e.len() != c.len() || e.len() > 32 {
            return None;
        }
        let mut delta: Option<i128> = None;
        for (i, (&x, &y)) in e.iter().zip(&c).enumerate() {
            if self.fields & (1 << i) == 0 {
                if x != y {
                    return None;
                }
                continue;
            }
            let d = y as i128 - x as i128;
            if *delta.get_or_insert(d) != d {
                return None;
            }
        }
        let delta = i64::try_from(delta?).ok().filter(|d| self.covers(*d))?;
        shift_fields(written, self.fields, self.shift(delta))
    }
}

/// The varints of `bytes`, every byte read (`None`: not a sequence of whole varints).
pub fn varints(bytes: &[u8]) -> Option<Vec<u64>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::with_capacity(8);
    while r.finish().is_err() {
        out.push(r.varint().ok()?);
    }
    Some(out)
}

/// `bytes` with the varints at `fields` moved by `by`, re-encoded (`None`: not varints, or a
/// field would leave `0..2^64`).
pub fn shift_fields(bytes: &[u8], fields: u32, by: i64) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() + 2);
    for (i, v) in varints(bytes)?.into_iter().enumerate() {
        let v = if i < 32 && fields & (1 << i) != 0 { u64::try_from(v as i128 + by as i128).ok()? } else { v };
        put(&mut out, v);
    }
    Some(out)
}

/// [`Policy::check`] with the guard of its decision (see the [module docs](self)): `Some`
/// only when the hit was admitted and its state has a guard. The guard is computed from the
/// states the check is given and the decision, so a compare-and-swap store gets it from the
/// states it already decoded.
pub fn check_guarded(
    policy: &Policy,
    states: &mut [Option<PolicyState>],
    now: Nanos,
    cost: u64,
) -> Result<(PolicyDecision, Option<Guard>), CheckError> {
    let before = Before::of(policy, states);
    let decision = policy.check(states, now, cost)?;
    let guard = match (&states[..], decision.allowed) {
        ([Some(after)], true) => before.guard(policy, after, now, cost, decision.decision.remaining),
        _ => None,
    };
    Ok((decision, guard))
}

/// What a guard needs of a state before the check (a few numbers: no copy of the state).
enum Before {
    /// No guard for this state (see the module docs).
    None,
    /// A GCRA meter and the state's expiry.
    Gcra { tat: Nanos, expiry: Nanos },
    /// A counter: its window's start and count (both fixed windows; a sliding window's current).
    Count { start: Nanos, count: u64 },
}

impl Before {
    fn of(policy: &Policy, states: &[Option<PolicyState>]) -> Before {
        let ([Some(state)], [_]) = (states, policy.limits()) else { return Before::None };
        if policy.block_duration() > Nanos::ZERO || state.blocked_until() > Nanos::ZERO {
            return Before::None;
        }
        match state.slots() {
            [Some(AnyState::Gcra(s))] => Before::Gcra { tat: s.tat, expiry: state.expires_at() },
            [Some(AnyState::FixedWindow(s))] => Before::Count { start: s.start, count: s.count },
            [Some(AnyState::FixedWindowFirstHit(s))] => Before::Count { start: s.start, count: s.count },
            [Some(AnyState::SlidingWindow(s))] => Before::Count { start: s.start, count: s.current },
            _ => Before::None,
        }
    }

    /// The guard of the admitted hit of `cost` at `now` that left `after`, `remaining` its
    /// decision's.
    fn guard(self, policy: &Policy, after: &PolicyState, now: Nanos, cost: u64, remaining: u64) -> Option<Guard> {
        let now = now.as_nanos();
        match (self, &policy.limits()[0].algorithm(), after.slots()) {
            (Before::Gcra { tat, expiry }, AnyAlgorithm::Gcra(g), _) => {
                // The products stay within the meter's longest span (2^62; cost <= burst).
                let t = g.emission_interval().as_nanos();
                let room = t * (g.burst() - 1) - t * (cost - 1);
                let tat = tat.as_nanos();
                // Over tat + delta the hit starts from max(tat + delta, now), admitted while
                // that is at most now + room (so up to delta = now + room - tat), and the meter
                // ends cost * T further on; the expiry is the meter's end, so both fields move
                // together. Nothing moved may pass 2^63 (the core's arithmetic saturates at
                // 2^64). `room` and `now - tat` are within 2^62 when admitted.
                let end = tat.max(now).saturating_add(t * cost);
                let hi = (room as i64).saturating_add(diff(now, tat)).min(diff(MAX_VALUE, end));
                let fields = 1 << EXPIRY_FIELD | 1 << FIRST_ALGORITHM_FIELD;
                Guard::new(fields, -(tat.min(expiry.as_nanos()).min(MAX_SHIFT as u64) as i64), hi, diff(now, tat))
            }
            (Before::Count { start, count }, algorithm, [Some(slot)]) => {
                let new_start = match slot {
                    AnyState::FixedWindow(s) => s.start,
                    AnyState::FixedWindowFirstHit(s) => s.start,
                    AnyState::SlidingWindow(s) => s.start,
                    _ => return None,
                };
                let rolled_once =
                    matches!(algorithm, AnyAlgorithm::SlidingWindow(a) if new_start == a.alignment().end_of(start));
                counter(new_start == start, rolled_once, count, remaining)
            }
            _ => None,
        }
    }
}

/// The guard of an admitted hit on a counter (the [`COUNT_FIELD`]) holding `count`. `same`:
/// the hit counted in the state's window, where it was admitted while `count + delta` (or a
/// sliding window's estimate, which moves with it) left room for it: `remaining` units more
/// at delta 0 (at most a limit, below 2^53); the count moves with `delta`. Otherwise the hit opened a new window: its bytes
/// do not depend on the count (shift 0 over any count), except a sliding window's next one
/// (`rolled_once`), where the count becomes the previous window's, another field: no guard.
fn counter(same: bool, rolled_once: bool, count: u64, remaining: u64) -> Option<Guard> {
    let fields = 1 << COUNT_FIELD;
    let lo = -(count.min(MAX_SHIFT as u64) as i64);
    match (same, rolled_once) {
        (true, _) => Guard::new(fields, lo, remaining as i64, lo),
        (false, false) => Guard::new(fields, lo, MAX_SHIFT, MAX_SHIFT),
        (false, true) => None,
    }
}

/// `a - b`, clipped to `±2^62`: beyond any bound a guard states (`MAX_SHIFT`), so clipping
/// changes no guard.
fn diff(a: u64, b: u64) -> i64 {
    const CLIP: u64 = 1 << 62;
    if a >= b {
        (a - b).min(CLIP) as i64
    } else {
        -((b - a).min(CLIP) as i64)
    }
}
