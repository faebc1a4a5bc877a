//! The numbers that cross the wasm boundary in a `Float64Array`, laid out here once: the wasm
//! modules write and read them in this order, and the npm package reads and writes them
//! through `pkg-template/lib/contract/contract.generated.js`, generated from these lists
//! (`tests/contracts.rs`).

use alloc::vec::Vec;

use crate::policy::{LimitDecision, LimitRef, PolicyDecision};
use crate::{Decision, Nanos};

/// A decision's summary, the first numbers of the decision buffer (wasm-common's `out.rs`
/// writes it, `lib/limiter/decision.js` reads it): `allowed` is 1 admitted, 0 denied, and
/// [`DENIED_BY_PENALTY`] denied by a penalty's block; `bindingKey` and `bindingLimit` index the
/// pair the figures are about; `pairs` is how many pair records follow.
pub const DECISION_SUMMARY: [&str; 8] =
    ["allowed", "limit", "remaining", "resetAt", "retryAfter", "bindingKey", "bindingLimit", "pairs"];

/// One (key, limit) pair's record after the summary: the indices of its key and limit, then
/// its own decision (`nextUnitAfter`: ms until one more unit fits, the headers' `t`).
pub const DECISION_PAIR: [&str; 8] =
    ["key", "limit", "allowed", "limit", "remaining", "resetAt", "retryAfter", "nextUnitAfter"];

/// The answers of a store that could not decide (the extras module's
/// `StorePolicy.unavailable`, [`crate::answer::Answer`]): the failure mode's, admitting
/// (`failure: "open"`) or denying (`"closed"`), and contention's.
pub const ANSWER_OPEN: u32 = 0;
/// See [`ANSWER_OPEN`].
pub const ANSWER_CLOSED: u32 = 1;
/// See [`ANSWER_OPEN`].
pub const ANSWER_CONTENTION: u32 = 2;

/// The summary's `allowed` of a hit denied by a penalty's block.
pub const DENIED_BY_PENALTY: f64 = 2.0;

/// The record `Policy.headers` reads (`lib/limiter/header-record.js` lays it out): the decision's
/// time, its summary as a pair's numbers, the binding pair and the count of pairs; then
/// [`DECISION_PAIR`] records. A negative number leaves a figure to the core
/// ([`read_header_record`]).
pub const HEADER_RECORD: [&str; 10] = [
    "now",
    "allowed",
    "limit",
    "remaining",
    "resetAt",
    "retryAfter",
    "nextUnitAfter",
    "bindingKey",
    "bindingLimit",
    "pairs",
];

/// The decision a [`HEADER_RECORD`] holds, and its time: what `Policy.headers` writes the
/// headers of. `None` when the record is not a decision of a policy of `limits` limits (its
/// count of pairs does not match its length, a pair's limit is out of range). Milliseconds
/// out of range read as 0 or the largest time rather than failing.
///
/// What a record may leave to the core (a negative number): the binding pair
/// (`bindingKey`, `bindingLimit`: then the pair with the least left, the first on ties, which
/// is an admitted decision's binding; a denial's record names the limit that denied it), the
/// summary's `nextUnitAfter` (then the binding pair's) and a pair's `nextUnitAfter` (a
/// decision made without one: a safe stand-in, nothing while something is left and otherwise
/// the wait until the limit resets, never earlier than the true one).
pub fn read_header_record(record: &[f64], limits: usize) -> Option<(PolicyDecision, Nanos)> {
    const PAIR: usize = DECISION_PAIR.len();
    const HEAD: usize = HEADER_RECORD.len();
    let pairs = record.get(HEAD - 1).map_or(0, |&n| n as usize);
    if pairs == 0 || pairs.checked_mul(PAIR).and_then(|n| n.checked_add(HEAD)) != Some(record.len()) {
        return None;
    }
    let now = nanos_of_ms(record[0]);
    let mut list = Vec::with_capacity(pairs);
    for p in record[HEAD..].chunks_exact(PAIR) {
        let at = LimitRef { key: p[0] as usize, limit: p[1] as usize };
        if at.limit >= limits {
            return None;
        }
        let mut decision = decision_of(&p[2..]);
        if p[7] < 0.0 {
            decision.next_unit_after =
                if decision.remaining > 0 { Nanos::ZERO } else { decision.reset_at.saturating_sub(now) };
        }
        list.push(LimitDecision { at, decision });
    }
    let mut summary = decision_of(&record[1..7]);
    let binding = if record[7] < 0.0 || record[8] < 0.0 {
        list.iter().min_by_key(|l| l.decision.remaining).map(|l| l.at)?
    } else {
        LimitRef { key: record[7] as usize, limit: record[8] as usize }
    };
    if record[6] < 0.0 {
        let pair = list.iter().find(|l| l.at == binding);
        summary.next_unit_after = pair.map_or(Nanos::ZERO, |l| l.decision.next_unit_after);
    }
    let pd =
        PolicyDecision { allowed: summary.allowed, decision: summary, binding, limits: list.into(), penalty: false };
    Some((pd, now))
}

/// A pair's numbers from `allowed` to `nextUnitAfter` as a decision.
fn decision_of(r: &[f64]) -> Decision {
    Decision {
        allowed: r[0] == 1.0,
        limit: r[1] as u64,
        remaining: r[2] as u64,
        reset_at: nanos_of_ms(r[3]),
        retry_after: nanos_of_ms(r[4]),
        next_unit_after: nanos_of_ms(r[5]),
    }
}

/// Milliseconds (whole or not, never negative) as nanoseconds, saturating.
fn nanos_of_ms(ms: f64) -> Nanos {
    let ns = ms * 1e6;
    Nanos::new(if ns > 0.0 { ns as u64 } else { 0 })
}

/// One counter diff a synced limiter pushes (`takeDiffs`): the key's index into its keys, the
/// limit, the window's start in nanoseconds as two 32-bit halves, the count, and the epoch ms
/// after which the window no longer matters.
pub const SYNC_DIFF: [&str; 6] = ["key", "limit", "startHigh", "startLow", "delta", "expiresAt"];

/// A compare-and-swap run's codes across the wasm boundary (the extras module's `SwapRun`,
/// `tollgate::store_protocol::SwapRun`). After a decision, what to send: nothing (the
/// decision is final), the decision's bytes, or the cached bytes for themselves (a
/// confirmation).
pub const SWAP_FINAL: u32 = 0;
/// See [`SWAP_FINAL`].
pub const SWAP_WRITE: u32 = 1;
/// See [`SWAP_FINAL`].
pub const SWAP_CONFIRM: u32 = 2;
/// What the store answered a swap: written, written under the swap's guard over other
/// bytes, or other bytes (a lost race).
pub const SWAP_SWAPPED: u32 = 0;
/// See [`SWAP_SWAPPED`].
pub const SWAP_GUARDED: u32 = 1;
/// See [`SWAP_SWAPPED`].
pub const SWAP_OTHER_BYTES: u32 = 2;
/// After an answer: the run is done; otherwise [`SWAP_CONTENDED`] (other writers won every
/// time: give up) or the pause in ms (0: none) before deciding again.
pub const SWAP_DONE: f64 = -1.0;
/// See [`SWAP_DONE`].
pub const SWAP_CONTENDED: f64 = -2.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// A record that leaves the binding pair and the waits to the core: the pair with the least
    /// left (the first on ties), its wait for one unit, and a stand-in wait for a pair without
    /// one (nothing left: until the reset).
    #[test]
    fn a_record_leaves_the_binding_and_the_waits_to_the_core() {
        let mut r = alloc::vec![1000.0, 1.0, 10.0, 0.0, 5000.0, 0.0, -1.0, -1.0, -1.0, 2.0];
        r.extend([0.0, 0.0, 1.0, 10.0, 3.0, 4000.0, 0.0, 0.0]);
        r.extend([0.0, 1.0, 1.0, 5.0, 0.0, 5000.0, 0.0, -1.0]);
        let (pd, now) = read_header_record(&r, 2).unwrap();
        assert_eq!(now, Nanos::from_millis(1000));
        assert_eq!(pd.binding, LimitRef { key: 0, limit: 1 });
        assert_eq!(pd.limits[1].decision.next_unit_after, Nanos::from_millis(4000));
        assert_eq!(pd.decision.next_unit_after, Nanos::from_millis(4000));
        // Named, the binding is the record's own.
        r[7] = 0.0;
        r[8] = 0.0;
        assert_eq!(read_header_record(&r, 2).unwrap().0.binding, LimitRef { key: 0, limit: 0 });
    }
}
