//! Reconfiguration: carrying a key's usage over when its limit changes.
//!
//! A store that finds a state written under another configuration (see
//! [`crate::policy_codec`]) converts it here rather than starting the key over: lowering a
//! limit from 100 to 50 must not give every key a fresh 50. One rule for every algorithm,
//! applied in each algorithm's own terms: **what a key has used stays used, capped at the
//! new limit** (never below zero left), measured at the instant of the conversion.
//!
//! | algorithm | what is kept |
//! |---|---|
//! | `fixed-window` | the current window's count, capped at the new limit, in the new window holding now |
//! | `fixed-window-first-hit` | the window's opening and its count, capped at the new limit |
//! | `sliding-window` | same windows: both counts as they are; else the estimate now, capped, as the new current window's count |
//! | `sliding-buckets` | same buckets: every count as it is; else the window's sum now, capped, as the new current bucket's count |
//! | `sliding-log` | every entry still counted, the oldest trimmed until the total fits the new limit |
//! | `token-bucket` | tokens used (capacity minus tokens now), so tokens = new capacity minus used, at least 0 |
//! | `gcra` | the meter's backlog in units: TAT rescaled by new/old emission interval, capped at a full burst |
//!
//! A change of algorithm starts the limit fresh (the states measure different things), as
//! does a limit added under a new name; limits are matched by name, so reordering them or
//! changing another limit of the policy keeps each one's usage.
//!
//! Conversions are pure functions of (old, new, state, now), never more permissive than the
//! usage they carry (property-tested in `tests/reconfigure.rs`), and an unchanged
//! configuration leaves a state exactly as it is.

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::{
    AnyAlgorithm, AnyState, FirstHitState, FixedWindowState, GcraState, Kind, SlidingBucketsState, SlidingLogState,
    SlidingWindowState, TokenBucketState,
};
use crate::policy::{Policy, PolicyState};
use crate::policy_codec::{decode_policy, encode_policy};
use crate::time::Nanos;

/// What a change of configuration does to one limit's stored usage.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Carry {
    /// The limit did not change: the state is used as it is.
    Unchanged,
    /// Same algorithm, other numbers: the usage is carried over by the algorithm's rule.
    Kept,
    /// Another algorithm (or a new limit): the key starts fresh under it.
    Fresh,
}

impl Carry {
    /// `"unchanged"`, `"kept"`, `"fresh"`.
    pub fn name(self) -> &'static str {
        match self {
            Carry::Unchanged => "unchanged",
            Carry::Kept => "kept",
            Carry::Fresh => "fresh",
        }
    }
}

/// What happens to a limit's usage going from `old` to `new`.
pub fn carry(old: &AnyAlgorithm, new: &AnyAlgorithm) -> Carry {
    if old == new {
        Carry::Unchanged
    } else if old.kind() == new.kind() {
        Carry::Kept
    } else {
        Carry::Fresh
    }
}

/// The rule that carries usage over for `kind`, in words (for documentation and APIs such as
/// the Worker's `GET /v1/policies`).
pub fn rule(kind: Kind) -> &'static str {
    match kind {
        Kind::FixedWindow => "the current window's count is kept, capped at the new limit",
        Kind::FixedWindowFirstHit => "the window's opening and count are kept, the count capped at the new limit",
        Kind::SlidingWindow => {
            "the counts are kept; with other window boundaries the estimate now becomes the new window's count, capped at the new limit"
        }
        Kind::SlidingBuckets => {
            "the counts are kept; with other buckets the window's sum now becomes the new bucket's count, capped at the new limit"
        }
        Kind::SlidingLog => "every hit still in the window is kept, the oldest dropped until they fit the new limit",
        Kind::TokenBucket => "tokens used stay used: the new capacity minus what was used, at least 0",
        Kind::Gcra => "the meter's backlog is rescaled to the new rate, capped at a full burst",
        #[cfg(feature = "concurrency")]
        Kind::Concurrency => {
            "the live leases are kept (a lower limit admits no new one until enough are released or expire; the dropped ones are the newest)"
        }
    }
}

/// Converts one limit's state from `old` to `new` at `now`: `None` when the key is fresh
/// under `new` (nothing used, or another algorithm).
pub fn convert_slot(old: &AnyAlgorithm, new: &AnyAlgorithm, state: &AnyState, now: Nanos) -> Option<AnyState> {
    if old == new {
        return Some(state.clone());
    }
    let cap = new.limit();
    match (old, new, state) {
        (AnyAlgorithm::FixedWindow(o), AnyAlgorithm::FixedWindow(n), AnyState::FixedWindow(s)) => {
            let w = o.current(Some(s), now);
            let start = n.alignment().start_of(now.max(w.start));
            (w.count > 0).then(|| AnyState::FixedWindow(FixedWindowState { start, count: w.count.min(cap) }))
        }
        (
            AnyAlgorithm::FixedWindowFirstHit(o),
            AnyAlgorithm::FixedWindowFirstHit(_),
            AnyState::FixedWindowFirstHit(s),
        ) => {
            let w = o.current(Some(s), now);
            (w.count > 0)
                .then(|| AnyState::FixedWindowFirstHit(FirstHitState { start: w.start, count: w.count.min(cap) }))
        }
        (AnyAlgorithm::SlidingWindow(o), AnyAlgorithm::SlidingWindow(n), AnyState::SlidingWindow(s)) => {
            if o.alignment() == n.alignment() {
                // The same windows: both counts stand as they are. Capping them would not admit
                // more now, but would weigh the previous window too lightly later.
                return Some(state.clone());
            }
            let used = o.count_at(Some(s), now).min(cap);
            let start = n.alignment().start_of(now.max(s.start));
            (used > 0).then_some(AnyState::SlidingWindow(SlidingWindowState { start, current: used, previous: 0 }))
        }
        (AnyAlgorithm::SlidingBuckets(o), AnyAlgorithm::SlidingBuckets(n), AnyState::SlidingBuckets(s)) => {
            if o.alignment() == n.alignment() && o.bucket_count() == n.bucket_count() {
                // The same buckets: every count stands as it is (as for the sliding window).
                return Some(state.clone());
            }
            let (newest, counts) = o.view(Some(s), now);
            let used = counts.iter().fold(0u64, |sum, &c| sum.saturating_add(c)).min(cap);
            let at = o.alignment().start(newest).max(now);
            let index = n.alignment().index(at);
            (used > 0).then(|| {
                AnyState::SlidingBuckets(SlidingBucketsState { newest: index, counts: VecDeque::from([used]) })
            })
        }
        (AnyAlgorithm::SlidingLog(o), AnyAlgorithm::SlidingLog(_), AnyState::SlidingLog(s)) => {
            let at = s.entries.back().map_or(now, |newest| now.max(newest.at));
            let mut entries: VecDeque<_> = s.entries.iter().copied().filter(|e| o.expiry(e) > at).collect();
            let mut total = entries.iter().fold(0u64, |sum, e| sum.saturating_add(e.cost));
            // The oldest entries leave the window first: trimming them keeps the usage that
            // lasts longest, which is what the new limit would have seen of it.
            while total > cap {
                let Some(front) = entries.front_mut() else { break };
                let excess = total - cap;
                if front.cost > excess {
                    front.cost -= excess;
                    total = cap;
                } else {
                    total -= front.cost;
                    entries.pop_front();
                }
            }
            (!entries.is_empty()).then(|| AnyState::SlidingLog(SlidingLogState::from_entries(entries)))
        }
        (AnyAlgorithm::TokenBucket(o), AnyAlgorithm::TokenBucket(n), AnyState::TokenBucket(s)) => {
            let level = o.level(Some(s), now);
            let used = o.limit() - level.tokens.min(o.limit());
            let tokens = cap - used.min(cap);
            let same_schedule = o.interval() == n.interval() && o.refill_amount() == n.refill_amount();
            // Another schedule starts its next refill one whole new interval from now.
            let anchor = if same_schedule { level.anchor } else { level.anchor.max(now) };
            (tokens < cap).then_some(AnyState::TokenBucket(TokenBucketState { tokens, anchor }))
        }
        (AnyAlgorithm::Gcra(o), AnyAlgorithm::Gcra(n), AnyState::Gcra(s)) => {
            let backlog = s.tat.saturating_sub(now).as_nanos() as u128;
            let (t_old, t_new) = (o.emission_interval().as_nanos() as u128, n.emission_interval().as_nanos() as u128);
            // Rounded up: a fraction of a unit used stays used.
            let rescaled = (backlog * t_new).div_ceil(t_old);
            let full = t_new * n.burst() as u128;
            let backlog = u64::try_from(rescaled.min(full)).unwrap_or(u64::MAX);
            (backlog > 0).then(|| AnyState::Gcra(GcraState { tat: now.saturating_add(Nanos::new(backlog)) }))
        }
        #[cfg(feature = "concurrency")]
        (AnyAlgorithm::Concurrency(_), AnyAlgorithm::Concurrency(n), AnyState::Concurrency(s)) => {
            let mut leases: Vec<_> = s.leases.iter().filter(|l| l.expires_at > now).copied().collect();
            leases.truncate(cap as usize);
            let expiry = |l: &crate::algorithms::HeldLease| l.expires_at.min(now.saturating_add(n.lease_ttl()));
            let leases: Vec<_> = leases.iter().map(|l| crate::algorithms::HeldLease { id: l.id, expires_at: expiry(l) }).collect();
            (!leases.is_empty()).then_some(AnyState::Concurrency(crate::algorithms::ConcurrencyState { leases, queue: Vec::new() }))
        }
        _ => None,
    }
}

/// Converts a key's state from the `old` policy to the `new` one at `now`, limit by limit,
/// matched by name (a limit of `new` that `old` does not have starts fresh). `None` when the
/// key is fresh under `new`. The result always fits `new` (it passes
/// [`Policy::validate_state`]) and carries its expiry under `new`.
///
/// ```
/// use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Quota};
/// use tollgate::policy::Policy;
/// use tollgate::reconfigure::convert;
/// let fixed = |limit| Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_hour(limit).unwrap())));
/// let (old, new) = (fixed(100), fixed(50));
/// let now = Nanos::from_secs(3600);
/// let mut states = [None];
/// old.check(&mut states, now, 60).unwrap();                  // 60 of 100 used
/// let kept = convert(&old, &new, states[0].as_ref().unwrap(), now);
/// let d = new.peek(&[kept], now, 1).unwrap();
/// assert!(!d.allowed);                                        // not a fresh 50
/// assert_eq!(d.decision.remaining, 0);
/// ```
pub fn convert(old: &Policy, new: &Policy, state: &PolicyState, now: Nanos) -> Option<PolicyState> {
    let slots: Vec<Option<AnyState>> = new
        .limits()
        .iter()
        .map(|limit| {
            let (i, before) = old.limits().iter().enumerate().find(|(_, l)| l.name() == limit.name())?;
            let slot = state.slots().get(i)?.as_ref()?;
            convert_slot(before.algorithm(), limit.algorithm(), slot, now)
        })
        .collect();
    // Every rule produces states within the new bounds; a state that somehow does not fit is
    // dropped rather than trusted.
    new.state_from_slots(slots).ok().flatten()
}

/// What became of a stored state on [`restore`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restored {
    /// Nothing stored, or a state of the running configuration.
    AsStored,
    /// Written under another configuration and converted ([`convert`]).
    Converted,
    /// Unreadable, or written under a configuration that cannot be rebuilt: dropped (why).
    Dropped(String),
}

/// A store's `bytes` (`PolicyState::encode`), written under `written_under` when the store
/// kept it (`policy_codec::encode_policy` of the policy then running), as a state of `policy`
/// at `now`: as stored, converted from the configuration it was written under, or dropped. A
/// state stored without `written_under` is read as written under `policy`.
pub fn restore(
    bytes: &[u8],
    written_under: Option<&[u8]>,
    policy: &Policy,
    now: Nanos,
) -> (Option<PolicyState>, Restored) {
    let state = match PolicyState::decode(bytes) {
        Ok(s) => s,
        Err(e) => return (None, Restored::Dropped(format!("unreadable state: {e}"))),
    };
    match written_under {
        Some(config) if config != encode_policy(policy).as_slice() => {
            let old = match decode_policy(config) {
                Ok(old) => old,
                Err(e) => return (None, Restored::Dropped(format!("unreadable configuration: {e}"))),
            };
            if let Err(e) = old.validate_state(&state) {
                return (None, Restored::Dropped(format!("state does not fit its configuration: {e}")));
            }
            (convert(&old, policy, &state, now), Restored::Converted)
        }
        _ => match policy.validate_state(&state) {
            Ok(()) => (Some(state), Restored::AsStored),
            Err(e) => (None, Restored::Dropped(format!("state does not fit the policy: {e}"))),
        },
    }
}

/// What happens to each limit of `new` when a state written under `old` is read: by name,
/// in `new`'s order.
pub fn carries(old: &Policy, new: &Policy) -> Vec<Carry> {
    new.limits()
        .iter()
        .map(|limit| match old.limits().iter().find(|l| l.name() == limit.name()) {
            Some(before) => carry(before.algorithm(), limit.algorithm()),
            None => Carry::Fresh,
        })
        .collect()
}
