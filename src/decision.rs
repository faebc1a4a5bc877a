//! What a check answers.

use crate::time::Nanos;

/// The answer to one hit, in the vocabulary of upstash/ratelimit and the HTTP headers.
///
/// For a denied hit the state did not change; `retry_after` is exact: the same hit is denied
/// at `now + retry_after - 1ns` and allowed at `now + retry_after`, provided no other hit
/// arrives in between.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Decision {
    /// Whether the hit was admitted (and, for a check, counted).
    pub allowed: bool,
    /// The most the limit can admit at once: the limit of a window algorithm, the capacity
    /// (burst) of a token bucket or GCRA.
    pub limit: u64,
    /// How many more units would be admitted right now, after this hit.
    pub remaining: u64,
    /// When the key will be back to its fresh state if nothing else arrives: the end of the
    /// window, or the moment a bucket is full again. Absolute time.
    pub reset_at: Nanos,
    /// How long to wait before this same hit would be admitted; zero when allowed.
    pub retry_after: Nanos,
    /// How long after `now` one more unit (a hit of cost 1) would be admitted, after this
    /// decision and if nothing else arrives: zero while `remaining` is at least 1. It is the
    /// draft-10 `RateLimit` header's `t` ([`headers`](crate::headers)), computed from the
    /// state rather than from `reset_at`, which can be much later.
    #[cfg_attr(feature = "serde", serde(default))]
    pub next_unit_after: Nanos,
}

impl Decision {
    /// `reset_at - now`, never negative.
    pub fn reset_after(&self, now: Nanos) -> Nanos {
        self.reset_at.saturating_sub(now)
    }
}

/// A decision with the state to store: `Some` only when the hit was admitted, so a denied hit
/// never needs a write and can never be counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome<S> {
    /// The answer.
    pub decision: Decision,
    /// The new state when the hit was admitted; `None` when nothing changes.
    pub state: Option<S>,
}
