//! Reserve, then settle: admit a hit on an estimate of its cost, and correct the charge once
//! the real cost is known (an LLM call's tokens, known when its response ends).
//!
//! [`Policy::reserve`] decides like [`Policy::check`] with the estimate as the cost; when it
//! admits, every key's state records the reservation in its ledger of open reservations.
//! [`Policy::settle`] closes it with the actual cost: the difference is given back (only what
//! the limit still holds of the reservation's charge, see [`give_back`]) or the excess is
//! charged whole, past the limit: the key goes into debt, up to one limit of it (see
//! [`charge_debt`]), and its next hits are denied until the debt is paid; only the excess past
//! that cap is forgiven. A reservation never settled stays charged at its estimate. Settling a reservation
//! that is not open on every key (settled already, the key reset or expired, or dropped from
//! a full ledger) is [`SettleError::UnknownReservation`] and changes nothing.
//!
//! The ledger is part of the key's state bytes ([`crate::codec`], version 3), so a store that
//! keeps opaque bytes with a compare-and-swap settles exactly as memory does: settling is a
//! pure function of the states, run by [`crate::store_protocol::CasRun`] like a check.
//! docs/reserve.md is the reference.
//!
//! ```
//! use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Quota};
//! use tollgate::policy::Policy;
//! let policy = Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new("100/m".parse().unwrap())));
//! let now = Nanos::from_secs(60);
//! let mut states = [None];
//! let reserved = policy.reserve(&mut states, now, 80, 7).unwrap();
//! assert!(reserved.allowed && reserved.decision.remaining == 20);
//! let settled = policy.settle(&mut states, now, 7, 80, 30).unwrap();
//! assert_eq!((settled.refunded, settled.decision.decision.remaining), (50, 70));
//! // Settling again is an error that changes nothing.
//! assert!(policy.settle(&mut states, now, 7, 80, 30).is_err());
//! ```

mod debt;
mod give_back;
pub(crate) mod token;

use alloc::vec::Vec;
use core::fmt;

use crate::algorithm::Algorithm;
use crate::error::CheckError;
use crate::policy::{Policy, PolicyDecision, PolicyState};
use crate::time::Nanos;

pub use crate::policy_state::{Open, MAX_OPEN};
pub use debt::charge_debt;
pub use give_back::give_back;
pub use token::{Reservation, TOKEN_VERSION};

/// The `code` of every settlement error, as every edge spells it (docs/vocabulary.md).
pub const CODES: [&str; 2] = ["unknown_reservation", "invalid_reservation"];

/// The fields a settlement answers beside the key's figures ([`Settled`]), as every edge
/// spells them.
pub const SETTLED_FIELDS: [&str; 3] = ["refunded", "charged", "forgiven"];

/// How long a reservation stays open at least: it can be settled until
/// `reserved_at + max(SETTLE_WITHIN, the policy's longest window)`. Past that it leaves the
/// ledger, charged at its estimate.
pub const SETTLE_WITHIN: Nanos = Nanos::from_secs(15 * 60);

/// What a settlement did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// The key's figures after the settlement, counting nothing: `allowed` says whether one
    /// more unit would be admitted now, `remaining` how many would, `retry_after` how long
    /// until one would.
    pub decision: PolicyDecision,
    /// Units given back (at most `estimate - actual`).
    pub refunded: u64,
    /// Units of the excess (`actual - estimate`) charged, past the limit where it had no room.
    pub charged: u64,
    /// Units of the excess past the debt cap of some limit ([`charge_debt`]), not charged.
    pub forgiven: u64,
}

/// Why a settlement was refused; it changed nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettleError {
    /// The reservation is not open on every key: settled already, the key reset or expired,
    /// dropped from a full ledger, or never made with this estimate.
    UnknownReservation,
    /// A reservation token that does not decode.
    InvalidReservation(&'static str),
}

impl SettleError {
    /// The error's `code` at every edge (docs/vocabulary.md).
    pub fn code(&self) -> &'static str {
        match self {
            SettleError::UnknownReservation => CODES[0],
            SettleError::InvalidReservation(_) => CODES[1],
        }
    }
}

impl fmt::Display for SettleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettleError::UnknownReservation => {
                write!(f, "the reservation is not open: settled already, or the key was reset, expired or dropped it")
            }
            SettleError::InvalidReservation(why) => write!(f, "invalid reservation: {why}"),
        }
    }
}

impl core::error::Error for SettleError {}

impl Policy {
    /// Takes the ledger out of a key's state, for a store that keeps ledgers apart from the
    /// limits' states (the npm memory limiter's compact records). The state left is `None`
    /// when it decides like a fresh key. [`attach_ledger`](Policy::attach_ledger) puts it back:
    /// together they round-trip a state exactly.
    pub fn detach_ledger(&self, state: &mut Option<PolicyState>) -> Vec<Open> {
        let Some(st) = state else { return Vec::new() };
        let open = core::mem::take(&mut st.open);
        if st.slots.iter().all(Option::is_none) && st.blocked_until == Nanos::ZERO {
            *state = None;
        } else {
            st.expires_at = self.expiry(st);
        }
        open
    }

    /// Puts a ledger taken by [`detach_ledger`](Policy::detach_ledger) back into a key's
    /// state (a fresh one if the key has none); an empty ledger changes nothing.
    pub fn attach_ledger(&self, state: &mut Option<PolicyState>, open: Vec<Open>) {
        if open.is_empty() {
            return;
        }
        let st = state.get_or_insert_with(|| self.fresh_state());
        st.open = open;
        st.expires_at = self.expiry(st);
    }

    /// Decides a hit of `estimate` at `now` like [`check`](Policy::check), all or nothing over
    /// `states`; when admitted, opens reservation `id` on every key. `id` is the caller's
    /// random draw (64 bits: a settlement after the key was reset must not find a new
    /// reservation of the same id).
    pub fn reserve(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        estimate: u64,
        id: u64,
    ) -> Result<PolicyDecision, CheckError> {
        let decision = self.check(states, now, estimate)?;
        if !decision.allowed {
            return Ok(decision);
        }
        let until = now.saturating_add(SETTLE_WITHIN.max(self.longest_window()));
        for st in states.iter_mut().flatten() {
            st.open.retain(|o| o.until > now && o.id != id);
            if st.open.len() >= MAX_OPEN {
                // The oldest out (no index to panic over in a wasm module).
                st.open.rotate_left(1);
                st.open.pop();
            }
            let marks = self
                .limits()
                .iter()
                .zip(&st.slots)
                .map(|(l, s)| s.as_ref().map_or(Nanos::ZERO, |s| l.algorithm().fresh_at(s)))
                .collect();
            st.open.push(Open { id, estimate, reserved_at: now, until, marks });
            st.expires_at = self.expiry(st);
        }
        Ok(decision)
    }

    /// Closes reservation `id` of `estimate` on every key of `states` with the `actual` cost
    /// at `now`: gives back what the limits still hold of `estimate - actual`, or charges the
    /// excess on every limit of every key, into debt up to each limit's cap (the least any
    /// limit takes is what every limit is charged). All or nothing: an error changes no state.
    pub fn settle(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        id: u64,
        estimate: u64,
        actual: u64,
    ) -> Result<Settled, SettleError> {
        let open_here =
            |st: &PolicyState| st.open.iter().any(|o| o.id == id && o.until > now && o.estimate == estimate);
        if !states.iter().all(|st| st.as_ref().is_some_and(open_here)) {
            return Err(SettleError::UnknownReservation);
        }
        let refund = estimate.saturating_sub(actual);
        let mut refunded = refund;
        for st in states.iter_mut().flatten() {
            // Out of the ledger (by `retain`: no index to panic over in a wasm module).
            let mut closed = None;
            st.open.retain(|o| {
                let this = closed.is_none() && o.id == id;
                if this {
                    closed = Some(o.marks.clone());
                }
                !this
            });
            let marks = closed.unwrap_or_default();
            for ((limit, slot), mark) in self.limits().iter().zip(st.slots.iter_mut()).zip(&marks) {
                let (new, given) = give_back(limit.algorithm(), slot.as_ref(), now, refund, *mark);
                *slot = new;
                refunded = refunded.min(given);
            }
            st.expires_at = self.expiry(st);
        }
        let (charged, forgiven) = self.charge_excess(states, now, actual.saturating_sub(estimate));
        for state in states.iter_mut() {
            if state
                .as_ref()
                .is_some_and(|st| st.slots.iter().all(Option::is_none) && st.blocked_until <= now && st.open.is_empty())
            {
                *state = None;
            }
        }
        let decision = self.figures(states, now);
        Ok(Settled { decision, refunded, charged, forgiven })
    }

    /// The key's figures at `now`, counting nothing: a one-unit peek whose pairs that admit
    /// it show what they hold without that unit (as a denied check shows them).
    pub(crate) fn figures(&self, states: &[Option<PolicyState>], now: Nanos) -> PolicyDecision {
        let Ok(mut d) = self.peek(states, now, 1) else { return unreachable_decision() };
        let unpeek = |x: &mut crate::decision::Decision| {
            if x.allowed {
                x.remaining = (x.remaining + 1).min(x.limit);
                x.next_unit_after = Nanos::ZERO;
            }
        };
        for l in d.limits.iter_mut() {
            unpeek(&mut l.decision);
        }
        unpeek(&mut d.decision);
        d
    }

    /// Charges `excess` units at `now` on every limit of every key, past the limits as far as
    /// every debt cap allows ([`debt`]): returns (charged, forgiven).
    fn charge_excess(&self, states: &mut [Option<PolicyState>], now: Nanos, excess: u64) -> (u64, u64) {
        if excess == 0 {
            return (0, 0);
        }
        let mut pairs = Vec::new();
        for st in states.iter() {
            for (i, limit) in self.limits().iter().enumerate() {
                pairs.push((limit.algorithm(), st.as_ref().and_then(|st| st.slots.get(i)).and_then(Option::as_ref)));
            }
        }
        let units = debt::common_charge(&pairs, now, excess);
        drop(pairs);
        if units == 0 {
            return (0, excess);
        }
        for state in states.iter_mut() {
            let st = state.get_or_insert_with(|| self.fresh_state());
            for (limit, slot) in self.limits().iter().zip(st.slots.iter_mut()) {
                *slot = debt::charge_debt(limit.algorithm(), slot.as_ref(), now, units).0;
            }
            st.expires_at = self.expiry(st);
        }
        (units, excess - units)
    }
}

/// A cost of 1 is never refused (every limit holds at least one unit); this is never built.
#[cold]
fn unreachable_decision() -> PolicyDecision {
    let at = crate::policy::LimitRef::default();
    let decision = crate::decision::Decision {
        allowed: false,
        limit: 0,
        remaining: 0,
        reset_at: Nanos::ZERO,
        retry_after: Nanos::ZERO,
        next_unit_after: Nanos::ZERO,
    };
    PolicyDecision {
        allowed: false,
        decision,
        binding: at,
        limits: crate::policy::LimitDecisions::one(crate::policy::LimitDecision { at, decision }),
        penalty: false,
    }
}
