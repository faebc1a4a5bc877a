//! A key's state under a policy, below the policy that decides over it: its slots, its
//! expiry, its penalty block and its ledger of open reservations. The codec, the penalty and
//! the reservations read and write it; [`crate::policy`] decides over it.

use alloc::vec::Vec;

use crate::algorithms::AnyState;
use crate::time::Nanos;

/// The most limits one policy may have.
pub const MAX_LIMITS: usize = 16;

/// One key's state under a policy: one slot per limit, and when the whole key becomes fresh.
///
/// The expiry travels with the state so that any store can drop it on time without knowing
/// the policy: the in-memory map prunes by it, Redis sets it as the key's expiry, a Durable
/// Object sets its alarm to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyState {
    pub(crate) slots: Vec<Option<AnyState>>,
    pub(crate) expires_at: Nanos,
    /// Until when the key is blocked by a penalty
    /// ([`Policy::with_block_duration`](crate::policy::Policy::with_block_duration)); zero when
    /// it is not.
    pub(crate) blocked_until: Nanos,
    /// How many denials the current block has taken since it started (an
    /// [`Escalation::Double`](crate::penalty::Escalation::Double) block doubles with each); zero
    /// when it is not blocked or the block does not escalate.
    pub(crate) strikes: u32,
    /// The key's open reservations ([`crate::reserve`]): empty unless the key reserved.
    pub(crate) open: Vec<Open>,
}

impl PolicyState {
    /// The state of each limit, in the policy's order (`None`: fresh).
    #[inline]
    pub fn slots(&self) -> &[Option<AnyState>] {
        &self.slots
    }

    /// From this instant the key decides like a fresh key and may be dropped.
    pub fn expires_at(&self) -> Nanos {
        self.expires_at
    }

    /// Until when a penalty blocks the key (zero: never blocked, or the policy has none).
    pub fn blocked_until(&self) -> Nanos {
        self.blocked_until
    }

    /// How many denials the key's current block has taken since it started (zero: none, or
    /// the policy's block does not escalate).
    pub fn strikes(&self) -> u32 {
        self.strikes
    }

    /// How many reservations are open on the key ([`crate::reserve`]).
    pub fn open_reservations(&self) -> usize {
        self.open.len()
    }

    /// The slots, moved out (a store that keeps them elsewhere needs no copy of a sliding
    /// log's timestamps).
    pub fn into_slots(self) -> Vec<Option<AnyState>> {
        self.slots
    }
}

/// Builds a [`PolicyState`] from slots (the codec and tests use this).
pub(crate) fn policy_state(slots: Vec<Option<AnyState>>, expires_at: Nanos) -> PolicyState {
    PolicyState { slots, expires_at, blocked_until: Nanos::ZERO, strikes: 0, open: Vec::new() }
}

/// The most reservations one key holds open. A reservation past this many is admitted and
/// the oldest open one is dropped from the ledger: it stays charged at its estimate and can
/// no longer be settled ([`SettleError::UnknownReservation`](crate::reserve::SettleError::UnknownReservation)).
pub const MAX_OPEN: usize = 32;

/// One open reservation in a key's ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Open {
    /// The caller-drawn id ([`Policy::reserve`](crate::policy::Policy::reserve)).
    pub(crate) id: u64,
    /// The units charged when it was reserved.
    pub(crate) estimate: u64,
    /// When it was reserved.
    pub(crate) reserved_at: Nanos,
    /// Until when it can be settled.
    pub(crate) until: Nanos,
    /// Per limit, the slot's `fresh_at` right after the reservation was charged: what
    /// [`give_back`](crate::reserve::give_back) measures how much of the charge the limit still holds by.
    pub(crate) marks: Vec<Nanos>,
}

impl Open {
    /// Until when it can be settled: past this, a store keeping ledgers apart may drop it.
    pub fn until(&self) -> Nanos {
        self.until
    }
}

/// The latest instant an open reservation of `state` can be settled (zero: none open): the
/// state lives at least that long.
pub(crate) fn open_until(state: &PolicyState) -> Nanos {
    state.open.iter().map(|o| o.until).max().unwrap_or(Nanos::ZERO)
}
