//! Policies: several limits at once, over one or several keys, all or nothing.
//!
//! `10/s + 120/min + 240/h` for `ip:1.2.3.4` and `user:42`: every limit applies to every key,
//! and a hit is counted only if every (key, limit) pair admits it. A rejected hit counts
//! nowhere, so a client that retries is not punished and the limiter does not drift. The
//! decision names the limit that blocked.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::{AnyAlgorithm, AnyState, Kind};
use crate::decide::{self, Read, Slots, SlotsMut};
use crate::decision::Decision;
use crate::error::{CheckError, ConfigError};
pub use crate::limit_decisions::{LimitDecision, LimitDecisions, LimitRef, PolicyDecision};
use crate::penalty::{cover, Escalation, Penalty};
use crate::policy_state::{open_until, policy_state};
pub use crate::policy_state::{PolicyState, MAX_LIMITS};
use crate::time::Nanos;

/// One named limit of a policy. The name appears in the `RateLimit` headers and in the
/// decision's `blocked_by`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    name: Box<str>,
    algorithm: AnyAlgorithm,
}

impl Limit {
    /// A limit named `name` (1 to 64 characters of `A-Z a-z 0-9 - _ . :`).
    pub fn new(name: &str, algorithm: AnyAlgorithm) -> Result<Limit, ConfigError> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
        if !valid {
            return Err(ConfigError::InvalidLimitName { name: name.to_string() });
        }
        Ok(Limit { name: name.into(), algorithm })
    }

    /// The limit's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The limit's algorithm.
    pub fn algorithm(&self) -> &AnyAlgorithm {
        &self.algorithm
    }
}

/// A list of limits that apply together.
///
/// ```
/// use tollgate::{AnyAlgorithm, Gcra, Nanos, Quota};
/// use tollgate::policy::{Limit, Policy};
/// let gcra = |q: &str| AnyAlgorithm::Gcra(Gcra::new(q.parse().unwrap()).unwrap());
/// let policy = Policy::new(vec![
///     Limit::new("per-second", gcra("10/s")).unwrap(),
///     Limit::new("per-minute", gcra("12/m")).unwrap(),
/// ]).unwrap();
/// let mut states = [None, None]; // ip:1.2.3.4 and user:42
/// let now = Nanos::from_secs(1_000);
/// for _ in 0..10 {
///     assert!(policy.check(&mut states, now, 1).unwrap().allowed);
/// }
/// let eleventh = policy.check(&mut states, now, 1).unwrap();
/// assert!(!eleventh.allowed);
/// assert_eq!(policy.limits()[eleventh.binding.limit].name(), "per-second");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    limits: Vec<Limit>,
    /// How long a key stays blocked once the limits deny it, and what a denial during a block
    /// does to it (none by default); see [`crate::penalty`].
    pub(crate) penalty: Penalty,
}

impl Policy {
    /// A policy of `limits` (1 to [`MAX_LIMITS`], distinct names).
    pub fn new(limits: Vec<Limit>) -> Result<Policy, ConfigError> {
        if limits.is_empty() {
            return Err(ConfigError::EmptyPolicy);
        }
        if limits.len() > MAX_LIMITS {
            return Err(ConfigError::TooManyLimits { count: limits.len(), max: MAX_LIMITS });
        }
        for (i, l) in limits.iter().enumerate() {
            if limits[..i].iter().any(|m| m.name == l.name) {
                return Err(ConfigError::DuplicateLimitName { name: String::from(&*l.name) });
            }
        }
        Ok(Policy { limits, penalty: Penalty::default() })
    }

    /// A policy of one limit named `default`.
    pub fn single(algorithm: AnyAlgorithm) -> Policy {
        Policy { limits: alloc::vec![Limit { name: "default".into(), algorithm }], penalty: Penalty::default() }
    }

    /// This policy with a penalty: a key the limits deny is blocked for `block_duration`
    /// from that denial (zero: no penalty, the default).
    pub fn with_block_duration(mut self, block_duration: Nanos) -> Policy {
        self.penalty.block = block_duration;
        self
    }

    /// How long a denied key stays blocked (zero: no penalty).
    #[inline]
    pub fn block_duration(&self) -> Nanos {
        self.penalty.block
    }

    /// This policy with each hit denied during a block renewing the block
    /// (`continueExceeding`); it takes effect with a block duration.
    pub fn with_continue_exceeding(mut self) -> Policy {
        self.penalty.escalation = Escalation::Renew;
        self
    }

    /// This policy with each hit denied during a block doubling the block, to at most `cap`
    /// (`exponentialBackoff`; a cap below the block duration is the block duration).
    pub fn with_exponential_backoff(mut self, cap: Nanos) -> Policy {
        self.penalty.escalation = Escalation::Double { cap };
        self
    }

    /// What a hit denied during a block does to it.
    #[inline]
    pub fn escalation(&self) -> Escalation {
        self.penalty.escalation
    }

    /// Whether a hit denied during a block changes the key's state (a store must then see
    /// every such hit: a cached denial would not renew the block).
    #[inline]
    pub fn escalates(&self) -> bool {
        self.penalty.escalates()
    }

    /// The limits, in order.
    #[inline]
    pub fn limits(&self) -> &[Limit] {
        &self.limits
    }

    /// The algorithm of each limit, in order (the shape stored state must have).
    pub fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        self.limits.iter().map(|l| l.algorithm.kind())
    }

    /// The longest time any state of this policy can matter.
    pub fn longest_window(&self) -> Nanos {
        self.limits.iter().map(|l| l.algorithm.longest_window()).max().unwrap_or(Nanos::ZERO)
    }

    /// Whether every limit's counts can be merged across nodes.
    pub fn is_mergeable(&self) -> bool {
        self.kinds().all(Kind::is_mergeable)
    }

    /// Refuses a cost some limit can never admit, naming that limit.
    pub fn validate_cost(&self, cost: u64) -> Result<(), CheckError> {
        if cost == 0 {
            return Err(CheckError::ZeroCost);
        }
        for (i, l) in self.limits.iter().enumerate() {
            if cost > l.algorithm.capacity() {
                return Err(CheckError::CostExceedsCapacity { cost, capacity: l.algorithm.capacity(), limit: i });
            }
        }
        Ok(())
    }

    /// Decides a hit of `cost` at `now` for keys whose states are `states` (one per key,
    /// `None` for a fresh key), all or nothing: when every pair admits it, every state is
    /// updated in place; otherwise none changes.
    ///
    /// ```
    /// use tollgate::{AnyAlgorithm, Gcra, Nanos};
    /// use tollgate::policy::{Limit, Policy};
    /// let gcra = |q: &str| AnyAlgorithm::Gcra(Gcra::new(q.parse().unwrap()).unwrap());
    /// let policy = Policy::new(vec![
    ///     Limit::new("second", gcra("2/s")).unwrap(),
    ///     Limit::new("minute", gcra("3/m")).unwrap(),
    /// ]).unwrap();
    /// let now = Nanos::from_secs(1);
    /// let mut states = [None, None]; // two keys, e.g. an IP and a user, both fresh
    /// assert!(policy.check(&mut states, now, 2).unwrap().allowed);
    /// let d = policy.check(&mut states, now + Nanos::from_secs(1), 2).unwrap();
    /// assert!(!d.allowed); // "minute" has one left of 3: nothing is counted anywhere
    /// assert_eq!(policy.limit_name(d.binding), "minute");
    /// assert!(policy.check(&mut states, now, 4).is_err()); // a cost that can never fit
    /// ```
    #[inline]
    pub fn check(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, CheckError> {
        match self.one_pair(states) {
            Some(limit) => self.check_one(limit, &mut states[0], now, cost).map(one_pair_decision),
            None => self.check_pairs(states, now, cost),
        }
    }

    /// [`check`](Policy::check) of a cost [`validate_cost`](Policy::validate_cost) accepted
    /// already (a [`crate::Limiter`] validates it before it touches the store, and not twice).
    #[inline]
    pub(crate) fn check_valid_cost(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, CheckError> {
        match self.one_pair(states) {
            Some(limit) => self.check_one_valid(limit, &mut states[0], now, cost).map(one_pair_decision),
            None => self.check_pairs_valid(states, now, cost),
        }
    }

    /// `check` of every pair: all peeked first (`decide`), then, when all admit the hit, all
    /// counted; a denial by the limits starts the penalty's block.
    fn check_pairs(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, CheckError> {
        self.validate_cost(cost)?;
        self.check_pairs_valid(states, now, cost)
    }

    /// `check_pairs` of a validated cost.
    fn check_pairs_valid(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, CheckError> {
        let mut peeked = self.decide_valid(states, now, cost)?;
        if !peeked.allowed {
            if self.penalty.block > Nanos::ZERO {
                if !peeked.penalty {
                    self.penalty.start_block(states, now, &mut peeked);
                } else if self.penalty.escalates() {
                    // A denial during a block: renewed or doubled, and the wait covers that (a
                    // peek, which knocks at nothing, answers the block as it stands).
                    self.penalty.escalate_blocks(states, now);
                    cover(&mut peeked, now, self.penalty.blocked_until(states));
                }
            }
            return Ok(peeked);
        }
        let mut limits = Vec::with_capacity(peeked.limits.len());
        let n = self.limits.len();
        decide::count(
            |i| &self.limits[i % n].algorithm,
            &mut Keys { states: &mut *states, limits: n },
            now,
            cost,
            |i, decision| limits.push(LimitDecision { at: LimitRef { key: i / n, limit: i % n }, decision }),
        )?;
        for state in states.iter_mut() {
            let st = state.get_or_insert_with(|| self.fresh_state());
            st.expires_at = self.expiry(st);
        }
        debug_assert!(limits.iter().zip(peeked.limits.iter()).all(|(a, b)| a == b));
        Ok(PolicyDecision { limits: limits.into(), ..peeked })
    }

    /// The decision [`check`](Policy::check) would make, changing nothing.
    #[inline]
    pub fn peek(&self, states: &[Option<PolicyState>], now: Nanos, cost: u64) -> Result<PolicyDecision, CheckError> {
        match self.one_pair(states) {
            Some(limit) => self.peek_one(limit, states[0].as_ref(), now, cost).map(one_pair_decision),
            None => self.decide(states, now, cost),
        }
    }

    /// [`peek`](Policy::peek) of a cost [`validate_cost`](Policy::validate_cost) accepted already.
    #[inline]
    pub(crate) fn peek_valid_cost(
        &self,
        states: &[Option<PolicyState>],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, CheckError> {
        match self.one_pair(states) {
            Some(limit) => self.peek_one_valid(limit, states[0].as_ref(), now, cost).map(one_pair_decision),
            None => self.decide_valid(states, now, cost),
        }
    }

    /// The one limit when `states` is one key under a policy of one limit without a penalty
    /// (every in-memory limiter's common case): then the pair's decision is the policy's, and
    /// `check` and `peek` ask the limit alone, without first peeking at every pair. They
    /// decide exactly as the general path (the property tests hold both).
    #[inline]
    fn one_pair(&self, states: &[Option<PolicyState>]) -> Option<&Limit> {
        match (states, &self.limits[..]) {
            ([_], [limit]) if self.penalty.block == Nanos::ZERO => Some(limit),
            _ => None,
        }
    }

    /// The one limit's peek of a key's state (its first slot, as the general path reads it).
    fn peek_one(
        &self,
        limit: &Limit,
        state: Option<&PolicyState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Decision, CheckError> {
        self.validate_cost(cost)?;
        self.peek_one_valid(limit, state, now, cost)
    }

    /// `peek_one` of a validated cost.
    fn peek_one_valid(
        &self,
        limit: &Limit,
        state: Option<&PolicyState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Decision, CheckError> {
        let slot = state.and_then(|s| s.slots.first()).and_then(Option::as_ref);
        decide::peek(|_| &limit.algorithm, &Read(slot), now, cost, |_, _| {})
    }

    /// The one limit's check of a key's state (its first slot, as the general path counts it),
    /// its expiry kept.
    fn check_one(
        &self,
        limit: &Limit,
        state: &mut Option<PolicyState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Decision, CheckError> {
        self.validate_cost(cost)?;
        self.check_one_valid(limit, state, now, cost)
    }

    /// `check_one` of a validated cost.
    fn check_one_valid(
        &self,
        limit: &Limit,
        state: &mut Option<PolicyState>,
        now: Nanos,
        cost: u64,
    ) -> Result<Decision, CheckError> {
        // Each arm returns the algorithm's answer as it gave it (no unwrapping and re-wrapping).
        match state {
            Some(st) => {
                let answer = decide::count(|_| &limit.algorithm, &mut st.slots[0], now, cost, |_, _| {});
                if matches!(answer, Ok(Decision { allowed: true, .. })) {
                    st.expires_at = self.expiry(st);
                }
                answer
            }
            None => {
                let mut slot = None;
                let answer = decide::count(|_| &limit.algorithm, &mut slot, now, cost, |_, _| {});
                if let Some(s) = slot {
                    let mut st = policy_state(alloc::vec![Some(s)], Nanos::ZERO);
                    st.expires_at = self.expiry(&st);
                    *state = Some(st);
                }
                answer
            }
        }
    }

    /// Every pair's peek, and the policy's answer from them: a key still blocked by a penalty
    /// ([`crate::penalty`]) is denied whatever the limits say.
    fn decide(&self, states: &[Option<PolicyState>], now: Nanos, cost: u64) -> Result<PolicyDecision, CheckError> {
        self.validate_cost(cost)?;
        self.decide_valid(states, now, cost)
    }

    /// `decide` of a validated cost.
    fn decide_valid(
        &self,
        states: &[Option<PolicyState>],
        now: Nanos,
        cost: u64,
    ) -> Result<PolicyDecision, CheckError> {
        let mut limits = Vec::with_capacity(states.len() * self.limits.len());
        let n = self.limits.len();
        decide::peek(
            |i| &self.limits[i % n].algorithm,
            &Keys { states, limits: n },
            now,
            cost,
            |i, decision| limits.push(LimitDecision { at: LimitRef { key: i / n, limit: i % n }, decision }),
        )?;
        let admitted = limits.iter().all(|l| l.decision.allowed);
        let blocked_until = self.penalty.blocked_until(states);
        let allowed = admitted && blocked_until <= now;
        let binding = if admitted {
            // The pair with the least left (the first on ties).
            limits.iter().min_by_key(|l| l.decision.remaining)
        } else {
            // The denying pair with the longest wait (the first on ties): once it admits the
            // hit, so do all the others, because every algorithm only gets more permissive
            // as time passes without hits.
            limits.iter().filter(|l| !l.decision.allowed).rev().max_by_key(|l| l.decision.retry_after)
        };
        let binding = *binding.expect("a policy has at least one limit and a check at least one key");
        if !allowed {
            for l in limits.iter_mut().filter(|l| l.decision.allowed) {
                // A concurrency limit's hit takes one slot whatever its cost.
                #[cfg(feature = "concurrency")]
                let units = self.limits.get(l.at.limit).map_or(cost, |x| x.algorithm.units(cost));
                #[cfg(not(feature = "concurrency"))]
                let units = cost;
                l.decision.remaining = (l.decision.remaining + units).min(l.decision.limit);
                // Nothing was counted: this limit has `cost` (at least one unit) free now.
                l.decision.next_unit_after = Nanos::ZERO;
            }
        }
        let mut decided = PolicyDecision {
            allowed,
            decision: binding.decision,
            binding: binding.at,
            limits: limits.into(),
            penalty: false,
        };
        if blocked_until > now {
            cover(&mut decided, now, blocked_until);
        }
        Ok(decided)
    }

    /// Gives back `cost` units to every limit of every key (a request that turned out not to
    /// count), never beyond the fresh state. A key that becomes fresh becomes `None`.
    pub fn refund(&self, states: &mut [Option<PolicyState>], now: Nanos, cost: u64) {
        for state in states.iter_mut() {
            let Some(st) = state else { continue };
            for (j, limit) in self.limits.iter().enumerate() {
                if let Some(slot) = st.slots.get_mut(j) {
                    *slot = slot.as_ref().and_then(|s| limit.algorithm.refund(s, now, cost));
                }
            }
            if st.slots.iter().all(Option::is_none) && st.blocked_until <= now && st.open.is_empty() {
                *state = None;
            } else {
                st.expires_at = self.expiry(st);
            }
        }
    }

    /// A key state with every limit fresh.
    pub fn fresh_state(&self) -> PolicyState {
        policy_state(alloc::vec![None; self.limits.len()], Nanos::ZERO)
    }

    /// When `state` decides like a fresh key: when its last limit does.
    pub fn expiry(&self, state: &PolicyState) -> Nanos {
        self.limits
            .iter()
            .zip(&state.slots)
            .filter_map(|(l, s)| s.as_ref().map(|s| l.algorithm.fresh_at(s)))
            .max()
            .unwrap_or(Nanos::ZERO)
            .max(state.blocked_until)
            .max(open_until(state))
    }

    /// Whether stored `state` fits this policy: one slot per limit, each of the limit's
    /// algorithm and within its bounds. Stores call this on every state they read.
    pub fn validate_state(&self, state: &PolicyState) -> Result<(), crate::DecodeError> {
        if state.slots.len() != self.limits.len() {
            return Err(crate::DecodeError::LimitCountMismatch {
                expected: self.limits.len(),
                found: state.slots.len(),
            });
        }
        for (limit, slot) in self.limits.iter().zip(&state.slots) {
            if let Some(s) = slot {
                crate::codec::validate_state(&limit.algorithm, s)?;
            }
        }
        Ok(())
    }

    /// Stored `bytes` as a state of this policy: decoded, then validated (`validate_state`).
    pub fn decode_state(&self, bytes: &[u8]) -> Result<PolicyState, crate::DecodeError> {
        let state = PolicyState::decode(bytes)?;
        self.validate_state(&state)?;
        Ok(state)
    }

    /// A key state made of one slot per limit (e.g. imported from elsewhere), validated
    /// against this policy, with its expiry computed. `None` when every slot is fresh.
    pub fn state_from_slots(&self, slots: Vec<Option<AnyState>>) -> Result<Option<PolicyState>, crate::DecodeError> {
        self.restore(policy_state(slots, Nanos::ZERO))
    }

    /// A decoded `state` (e.g. imported from elsewhere), validated against this policy, with its
    /// expiry computed and its penalty block kept. `None` when it decides like a fresh key.
    pub fn restore(&self, mut state: PolicyState) -> Result<Option<PolicyState>, crate::DecodeError> {
        self.validate_state(&state)?;
        if state.slots.iter().all(Option::is_none) && state.blocked_until == Nanos::ZERO && state.open.is_empty() {
            return Ok(None);
        }
        state.expires_at = self.expiry(&state);
        Ok(Some(state))
    }

    /// A readable name for `at`, e.g. `"per-second"`.
    pub fn limit_name(&self, at: LimitRef) -> &str {
        self.limits.get(at.limit).map_or("", |l| l.name())
    }
}

/// A policy's keys as the pairs a hit is decided over: keys outer, limits inner (pair `i` is
/// key `i / limits`'s slot of limit `i % limits`). Counting in a fresh key gives it a state.
struct Keys<B> {
    states: B,
    limits: usize,
}

impl<B: AsRef<[Option<PolicyState>]>> Slots<AnyState> for Keys<B> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.states.as_ref().len() * self.limits
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&AnyState> {
        let key = self.states.as_ref()[i / self.limits].as_ref();
        key.and_then(|s| s.slots.get(i % self.limits)).and_then(Option::as_ref)
    }
}

impl SlotsMut<AnyState> for Keys<&mut [Option<PolicyState>]> {
    #[inline(always)]
    fn get_mut(&mut self, i: usize) -> Option<&mut AnyState> {
        let key = self.states[i / self.limits].as_mut();
        key.and_then(|s| s.slots.get_mut(i % self.limits)).and_then(Option::as_mut)
    }

    fn fill(&mut self, i: usize, state: AnyState) {
        let limits = self.limits;
        let key = self.states[i / limits].get_or_insert_with(|| policy_state(alloc::vec![None; limits], Nanos::ZERO));
        key.slots[i % limits] = Some(state);
    }
}

/// The policy's answer when one pair decided: that pair's decision.
fn one_pair_decision(decision: Decision) -> PolicyDecision {
    let at = LimitRef::default();
    PolicyDecision {
        allowed: decision.allowed,
        decision,
        binding: at,
        limits: LimitDecisions::one(LimitDecision { at, decision }),
        penalty: false,
    }
}

impl From<Limit> for Policy {
    fn from(limit: Limit) -> Policy {
        Policy { limits: alloc::vec![limit], penalty: Penalty::default() }
    }
}
