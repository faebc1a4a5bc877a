//! The list of a policy decision's (key, limit) answers ([`PolicyDecision::limits`]).
//!
//! One pair is held inline: one key under one limit is every in-memory limiter's common case,
//! and its decision should not allocate and free a list on every call. Several pairs are held
//! in a `Vec`. Either way the list reads as a slice of [`LimitDecision`]s, keys outer, limits
//! inner.
//!
//! [`PolicyDecision::limits`]: crate::policy::PolicyDecision::limits

use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};

use crate::policy::LimitDecision;

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
    use crate::policy::LimitRef;
    use crate::{Decision, Nanos};

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
