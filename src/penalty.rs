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

use crate::policy::{Policy, PolicyDecision, PolicyState};
use crate::time::Nanos;

impl Policy {
    /// This policy with a penalty: a key the limits deny is blocked for `block_duration`
    /// from that denial (zero: no penalty, the default).
    pub fn with_block_duration(mut self, block_duration: Nanos) -> Policy {
        self.block_duration = block_duration;
        self
    }

    /// How long a denied key stays blocked (zero: no penalty).
    #[inline]
    pub fn block_duration(&self) -> Nanos {
        self.block_duration
    }

    /// After the limits denied a hit (`denied`, not a block's denial): blocks every key a
    /// limit denied, from `now`, and makes the decision's wait cover the block.
    #[inline(never)]
    pub(crate) fn start_block(&self, states: &mut [Option<PolicyState>], now: Nanos, denied: &mut PolicyDecision) {
        let until = now.saturating_add(self.block_duration);
        for l in denied.limits.iter().filter(|l| !l.decision.allowed) {
            // A limit denies only a key with state (a fresh one admits any valid cost).
            if let Some(Some(st)) = states.get_mut(l.at.key) {
                st.blocked_until = until;
                // The expiry covers the slots already; now it covers the block too.
                st.expires_at = st.expires_at.max(until);
            }
        }
        cover(denied, now, until);
    }
}

/// Until when a penalty blocks any of the keys whose states are `states` (zero: none, or the
/// policy has no penalty, whose blocks are then ignored).
#[inline(never)]
pub(crate) fn blocked_until(policy: &Policy, states: &[Option<PolicyState>]) -> Nanos {
    let mut until = Nanos::ZERO;
    if policy.block_duration > Nanos::ZERO {
        for s in states.iter().flatten() {
            until = until.max(s.blocked_until);
        }
    }
    until
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
