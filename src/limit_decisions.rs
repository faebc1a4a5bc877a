//! A policy's decision ([`PolicyDecision`]) and its list of (key, limit) answers, below the
//! policy that makes it (the penalty and the reservations change it too).
//!
//! One pair is held inline: one key under one limit is every in-memory limiter's common case,
//! and its decision should not allocate and free a list on every call. Several pairs are held
//! in a `Vec`. Either way the list reads as a slice of [`LimitDecision`]s, keys outer, limits
//! inner.

use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};

use crate::decision::Decision;

/// Which key and which limit of a policy a figure is about (indices into the keys given to
/// the check and into [`Policy::limits`](crate::policy::Policy::limits)). With the `serde`
/// feature it is the pair `[key, limit]`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(from = "(usize, usize)", into = "(usize, usize)")
)]
pub struct LimitRef {
    /// Index of the key.
    pub key: usize,
    /// Index of the limit.
    pub limit: usize,
}

/// One (key, limit) pair's own answer to the hit. With the `serde` feature it is the triple
/// `[key, limit, decision]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(from = "(usize, usize, Decision)", into = "(usize, usize, Decision)")
)]
pub struct LimitDecision {
    /// Which pair.
    pub at: LimitRef,
    /// What this limit alone answered. When the policy denied the hit nothing was counted
    /// anywhere, and `remaining` is what the limit has now.
    pub decision: Decision,
}

/// A policy's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PolicyDecision {
    /// Whether every (key, limit) pair admitted the hit (and counted it).
    pub allowed: bool,
    /// The figures to show the client: when denied, those of the limit that blocked longest
    /// (its `retry_after` is when every limit admits the hit); when allowed, those of the
    /// limit with the least left.
    pub decision: Decision,
    /// Whose figures `decision` shows.
    pub binding: LimitRef,
    /// Every pair's own answer, keys outer, limits inner (one pair is held without
    /// allocating: see [`LimitDecisions`]).
    pub limits: LimitDecisions,
    /// Whether `decision`'s wait includes a penalty
    /// ([`Policy::with_block_duration`](crate::policy::Policy::with_block_duration)): the key
    /// is blocked, or this denial has just blocked it. Left out of the serde form when
    /// false, and false when absent.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "core::ops::Not::not"))]
    pub penalty: bool,
}

#[cfg(feature = "serde")]
impl From<(usize, usize)> for LimitRef {
    fn from((key, limit): (usize, usize)) -> LimitRef {
        LimitRef { key, limit }
    }
}

#[cfg(feature = "serde")]
impl From<LimitRef> for (usize, usize) {
    fn from(at: LimitRef) -> (usize, usize) {
        (at.key, at.limit)
    }
}

#[cfg(feature = "serde")]
impl From<(usize, usize, Decision)> for LimitDecision {
    fn from((key, limit, decision): (usize, usize, Decision)) -> LimitDecision {
        LimitDecision { at: LimitRef { key, limit }, decision }
    }
}

#[cfg(feature = "serde")]
impl From<LimitDecision> for (usize, usize, Decision) {
    fn from(d: LimitDecision) -> (usize, usize, Decision) {
        (d.at.key, d.at.limit, d.decision)
    }
}

impl PolicyDecision {
    /// The pair that blocked the hit, if it was denied.
    pub fn blocked_by(&self) -> Option<LimitRef> {
        (!self.allowed).then_some(self.binding)
    }
}

/// Every (key, limit) pair's own answer, read as a slice (`iter`, `len`, indexing); with the
/// `serde` feature, a list.
#[derive(Clone)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(from = "Vec<LimitDecision>", into = "Vec<LimitDecision>")
)]
pub struct LimitDecisions(Pairs);

#[derive(Clone)]
enum Pairs {
    One(LimitDecision),
    Many(Vec<LimitDecision>),
}

impl LimitDecisions {
    /// The list of one pair's answer, without allocating.
    #[inline]
    pub fn one(pair: LimitDecision) -> LimitDecisions {
        LimitDecisions(Pairs::One(pair))
    }
}

impl Deref for LimitDecisions {
    type Target = [LimitDecision];

    #[inline]
    fn deref(&self) -> &[LimitDecision] {
        match &self.0 {
            Pairs::One(pair) => core::slice::from_ref(pair),
            Pairs::Many(pairs) => pairs,
        }
    }
}

impl DerefMut for LimitDecisions {
    #[inline]
    fn deref_mut(&mut self) -> &mut [LimitDecision] {
        match &mut self.0 {
            Pairs::One(pair) => core::slice::from_mut(pair),
            Pairs::Many(pairs) => pairs,
        }
    }
}

#[cfg(feature = "serde")]
impl From<LimitDecisions> for Vec<LimitDecision> {
    fn from(pairs: LimitDecisions) -> Vec<LimitDecision> {
        match pairs.0 {
            Pairs::One(pair) => alloc::vec![pair],
            Pairs::Many(pairs) => pairs,
        }
    }
}

impl From<Vec<LimitDecision>> for LimitDecisions {
    #[inline]
    fn from(pairs: Vec<LimitDecision>) -> LimitDecisions {
        LimitDecisions(Pairs::Many(pairs))
    }
}

impl FromIterator<LimitDecision> for LimitDecisions {
    fn from_iter<I: IntoIterator<Item = LimitDecision>>(pairs: I) -> LimitDecisions {
        pairs.into_iter().collect::<Vec<_>>().into()
    }
}

impl<'a> IntoIterator for &'a LimitDecisions {
    type Item = &'a LimitDecision;
    type IntoIter = core::slice::Iter<'a, LimitDecision>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Equal when the pairs are, however they are held.
impl PartialEq for LimitDecisions {
    fn eq(&self, other: &LimitDecisions) -> bool {
        **self == **other
    }
}

impl Eq for LimitDecisions {}

impl core::fmt::Debug for LimitDecisions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Nanos;

    fn pair(limit: usize, remaining: u64) -> LimitDecision {
        let decision = Decision {
            allowed: true,
            limit: 5,
            remaining,
            reset_at: Nanos::new(9),
            retry_after: Nanos::ZERO,
            next_unit_after: Nanos::ZERO,
        };
        LimitDecision { at: LimitRef { key: 0, limit }, decision }
    }

    #[test]
    fn one_pair_reads_and_compares_as_a_list_of_one() {
        let mut one = LimitDecisions::one(pair(0, 3));
        assert_eq!(one, LimitDecisions::from(alloc::vec![pair(0, 3)]));
        assert_ne!(one, LimitDecisions::from(alloc::vec![pair(0, 3), pair(1, 2)]));
        assert_eq!((one.len(), one[0]), (1, pair(0, 3)));
        one[0].decision.remaining = 4;
        assert_eq!(one.iter().collect::<Vec<_>>(), [&pair(0, 4)]);
        assert_eq!(alloc::format!("{one:?}"), alloc::format!("{:?}", [pair(0, 4)]));
    }

    #[test]
    fn several_pairs_keep_their_order() {
        let many: LimitDecisions = [pair(0, 3), pair(1, 2)].into_iter().collect();
        assert_eq!(many.len(), 2);
        assert_eq!((&many).into_iter().map(|l| l.at.limit).collect::<Vec<_>>(), [0, 1]);
    }
}
