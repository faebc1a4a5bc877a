//! Penalties: once the limits deny a key, the key stays blocked for the policy's block
//! duration (rate-limiter-flexible's `blockDuration`), whatever the limits would say.
//!
//! The block is part of the key's state ([`PolicyState::blocked_until`]), so every store and
//! every edge applies it alike: a denial that starts a block is a state change (stores write
//! it), a hit during the block is denied and counted nowhere, and the block does not grow
//! while the client keeps knocking (as in rate-limiter-flexible: a client that retries at
//! `retryAfter` gets in). A decision whose wait includes a block says so
//! ([`PolicyDecision::penalty`]); its `retry_after` and `reset_at` cover the block, and so do
//! the headers written from it.
//!
//! ```
//! use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Quota};
//! use tollgate::policy::Policy;
//! let fw = AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(2).unwrap()));
//! let policy = Policy::single(fw).with_block_duration(Nanos::from_secs(60));
//! let mut states = [None];
//! let now = Nanos::from_secs(1_000);
//! assert!(policy.check(&mut states, now, 1).unwrap().allowed);
//! assert!(policy.check(&mut states, now, 1).unwrap().allowed);
//! let third = policy.check(&mut states, now, 1).unwrap(); // denied: the block starts
//! assert!(!third.allowed && third.penalty);
//! assert_eq!(third.decision.retry_after, Nanos::from_secs(60));
//! // The window has long reset, the block has not.
//! let later = policy.check(&mut states, now + Nanos::from_secs(30), 1).unwrap();
//! assert!(!later.allowed && later.penalty);
//! assert_eq!(later.decision.retry_after, Nanos::from_secs(30));
//! assert!(policy.check(&mut states, now + Nanos::from_secs(60), 1).unwrap().allowed);
//! ```
//!
//! Two escalations keep a client that keeps knocking out, as @fastify/rate-limit's options of
//! the same names do ([`Escalation`]):
//! - `continueExceeding`: each hit denied during a block renews it, to the block duration from
//!   that hit ([`Policy::with_continue_exceeding`](crate::policy::Policy::with_continue_exceeding));
//! - `exponentialBackoff`: each hit denied during a block doubles it, from that hit: the n-th
//!   denial of a block blocks for `blockDuration * 2^(n-1)`, at most a cap
//!   ([`Policy::with_exponential_backoff`](crate::policy::Policy::with_exponential_backoff)).
//!
//! Either way a denied hit is still counted by no limit: only the block (and, doubling, the
//! number of denials it took, [`PolicyState::strikes`]) changes, and a store writes it; the
//! denial's wait covers the block as it left it. A peek knocks at nothing: it answers the block
//! as it stands. A clock that went back never shortens a block. Once a block ends, the key's
//! next denial starts a block of `blockDuration` again.
//!
//! ```
//! use tollgate::{AnyAlgorithm, FixedWindow, Nanos, Quota};
//! use tollgate::policy::Policy;
//! let fw = AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(1).unwrap()));
//! let policy = Policy::single(fw)
//!     .with_block_duration(Nanos::from_secs(1))
//!     .with_exponential_backoff(Nanos::from_secs(4));
//! let mut states = [None];
//! let t = Nanos::from_secs(1_000);
//! assert!(policy.check(&mut states, t, 1).unwrap().allowed);
//! for want in [1, 2, 4, 4] {
//!     let d = policy.check(&mut states, t, 1).unwrap(); // 1 s, doubled, then the cap
//!     assert_eq!(d.decision.retry_after, Nanos::from_secs(want));
//! }
//! ```

use crate::limit_decisions::PolicyDecision;
use crate::policy_state::PolicyState;
use crate::time::Nanos;

/// What a hit denied during a block does to the block.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Escalation {
    /// Nothing: the block ends when it was set to (rate-limiter-flexible's `blockDuration`).
    #[default]
    None,
    /// The block is renewed to the block duration from the denied hit (`continueExceeding`).
    Renew,
    /// The block doubles from the denied hit, to at most `cap` (`exponentialBackoff`).
    Double {
        /// The longest block (`maxBlockDuration`), at least the block duration.
        cap: Nanos,
    },
}

/// A policy's penalty: how long a key the limits deny stays blocked (zero: no penalty) and
/// what a hit denied during the block does to it. [`Policy`](crate::policy::Policy) holds one
/// and sets it through its `with_block_duration`, `with_continue_exceeding` and
/// `with_exponential_backoff`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Penalty {
    pub(crate) block: Nanos,
    pub(crate) escalation: Escalation,
}

impl Penalty {
    /// Whether a hit denied during a block changes the key's state.
    #[inline]
    pub(crate) fn escalates(&self) -> bool {
        self.block > Nanos::ZERO && self.escalation != Escalation::None
    }

    /// How long a block lasts from the denial that gives it its `strikes`-th strike.
    fn block_after(&self, strikes: u32) -> Nanos {
        match self.escalation {
            Escalation::Double { cap } => {
                let cap = cap.max(self.block);
                if strikes >= 63 {
                    cap
                } else {
                    self.block.saturating_mul(1u64 << strikes).min(cap)
                }
            }
            _ => self.block,
        }
    }

    /// After a hit denied during a block (at `now`): renews or doubles the block of every key
    /// blocked at `now`.
    #[inline(never)]
    pub(crate) fn escalate_blocks(&self, states: &mut [Option<PolicyState>], now: Nanos) {
        for st in states.iter_mut().flatten().filter(|st| st.blocked_until > now) {
            if let Escalation::Double { .. } = self.escalation {
                st.strikes = st.strikes.saturating_add(1);
            }
            // Never shorter than it was: a clock that went back does not shorten a block.
            st.blocked_until = now.saturating_add(self.block_after(st.strikes)).max(st.blocked_until);
            st.expires_at = st.expires_at.max(st.blocked_until);
        }
    }

    /// After the limits denied a hit (`denied`, not a block's denial): blocks every key a
    /// limit denied, from `now`, and makes the decision's wait cover the block.
    #[inline(never)]
    pub(crate) fn start_block(&self, states: &mut [Option<PolicyState>], now: Nanos, denied: &mut PolicyDecision) {
        let until = now.saturating_add(self.block);
        for l in denied.limits.iter().filter(|l| !l.decision.allowed) {
            // A limit denies only a key with state (a fresh one admits any valid cost).
            if let Some(Some(st)) = states.get_mut(l.at.key) {
                st.blocked_until = until;
                st.strikes = 0;
                // The expiry covers the slots already; now it covers the block too.
                st.expires_at = st.expires_at.max(until);
            }
        }
        cover(denied, now, until);
    }

    /// Until when a penalty blocks any of the keys whose states are `states` (zero: none, or the
    /// policy has no penalty, whose blocks are then ignored).
    #[inline(never)]
    pub(crate) fn blocked_until(&self, states: &[Option<PolicyState>]) -> Nanos {
        let mut until = Nanos::ZERO;
        if self.block > Nanos::ZERO {
            for s in states.iter().flatten() {
                until = until.max(s.blocked_until);
            }
        }
        until
    }
}

/// Makes `d` a denial whose wait covers a block until `until` (after `now`). The pairs keep
/// the limits' own answers.
#[inline(never)]
pub(crate) fn cover(d: &mut PolicyDecision, now: Nanos, until: Nanos) {
    let wait = until - now;
    d.allowed = false;
    d.penalty = true;
    d.decision.allowed = false;
    d.decision.remaining = 0;
    d.decision.retry_after = d.decision.retry_after.max(wait);
    d.decision.next_unit_after = d.decision.next_unit_after.max(wait);
    d.decision.reset_at = d.decision.reset_at.max(until);
}
