//! Concurrency limits in a policy: acquire a lease, release it, renew it (docs/concurrency.md).
//!
//! A policy's `concurrency` limits ([`Concurrency`]) sit beside its rate limits and decide
//! with them, all or nothing: [`Policy::acquire`] is [`Policy::check`] that, when every limit
//! of every key admits the hit, gives the slot each concurrency limit took the caller's id.
//! [`Policy::release`] frees that lease on every key (a replay, or a lease that expired, is a
//! no-op that says so); [`Policy::renew`] extends it on every key, or is
//! [`LeaseError::UnknownLease`] and changes nothing. All three are pure functions of the
//! keys' states, so a store that keeps opaque bytes with a compare-and-swap runs them as it
//! runs a check ([`crate::store_protocol`]).
//!
//! ```
//! use tollgate::{AnyAlgorithm, Gcra, Nanos};
//! use tollgate::algorithms::Concurrency;
//! use tollgate::policy::{Limit, Policy};
//! let policy = Policy::new(vec![
//!     Limit::new("in-flight", AnyAlgorithm::Concurrency(Concurrency::new(1, Nanos::from_secs(30)).unwrap())).unwrap(),
//!     Limit::new("per-minute", AnyAlgorithm::Gcra(Gcra::new("60/m".parse().unwrap()).unwrap())).unwrap(),
//! ]).unwrap();
//! let now = Nanos::from_secs(1_000);
//! let mut states = [None];
//! assert!(policy.acquire(&mut states, now, 1, 7).unwrap().allowed);
//! assert_eq!(policy.lease_expires_at(&states, 7), Some(now + Nanos::from_secs(30)));
//! let second = policy.acquire(&mut states, now, 1, 8).unwrap();
//! assert!(!second.allowed && second.decision.retry_after == Nanos::from_secs(30));
//! assert!(policy.renew(&mut states, now + Nanos::from_secs(10), 7).is_ok());
//! assert!(policy.release(&mut states, now, 7).released);
//! assert!(!policy.release(&mut states, now, 7).released); // a replay changes nothing
//! assert!(policy.acquire(&mut states, now, 1, 8).unwrap().allowed);
//! ```

pub mod queue;
pub mod token;

use core::fmt;

use crate::algorithms::{AnyAlgorithm, AnyState, Concurrency};
use crate::error::CheckError;
use crate::policy::{Policy, PolicyDecision, PolicyState};
use crate::time::Nanos;

pub use token::{LeaseToken, LEASE_TOKEN_VERSION};

/// The `code` of every lease error, as every edge spells it (docs/vocabulary.md).
pub const CODES: [&str; 2] = ["unknown_lease", "invalid_lease"];

/// The fields a lease adds to an answer, as every edge spells them: an acquisition's token
/// (`lease`, `null` when none was taken), its expiry and a renewal's (`expiresAt`, ms since the
/// epoch), and whether a release freed it (`released`).
pub const LEASE_FIELDS: [&str; 3] = ["lease", "expiresAt", "released"];

/// Why a renewal (or a release's token) was refused; it changed nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseError {
    /// The lease is not live on every key: released, expired, the key reset, or never taken.
    UnknownLease,
    /// A lease token that does not decode.
    InvalidLease(&'static str),
}

impl LeaseError {
    /// The error's `code` at every edge (docs/vocabulary.md).
    pub fn code(&self) -> &'static str {
        match self {
            LeaseError::UnknownLease => CODES[0],
            LeaseError::InvalidLease(_) => CODES[1],
        }
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseError::UnknownLease => {
                write!(f, "the lease is not live: released already, expired, or its key was reset")
            }
            LeaseError::InvalidLease(why) => write!(f, "invalid lease: {why}"),
        }
    }
}

impl core::error::Error for LeaseError {}

/// What a release did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Released {
    /// The key's figures after the release, counting nothing (as a settlement's).
    pub decision: PolicyDecision,
    /// Whether the lease was live on some key and its slots are now free (`false`: a replay,
    /// or a lease that had expired: nothing changed but expired leases dropped).
    pub released: bool,
}

/// What a renewal did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renewed {
    /// The key's figures after the renewal, counting nothing.
    pub decision: PolicyDecision,
    /// The lease's new expiry (the earliest over its keys and limits).
    pub expires_at: Nanos,
}

/// Each concurrency limit's slot of a key state, with its algorithm.
fn concurrency_slots<'a>(
    policy: &'a Policy,
    st: &'a mut PolicyState,
) -> impl Iterator<Item = (&'a Concurrency, &'a mut Option<AnyState>)> + 'a {
    policy.limits().iter().zip(st.slots.iter_mut()).filter_map(|(l, s)| match l.algorithm() {
        AnyAlgorithm::Concurrency(c) => Some((c, s)),
        _ => None,
    })
}

impl Policy {
    /// Whether some limit of the policy is a concurrency limit (its hits take leases).
    pub fn has_concurrency(&self) -> bool {
        self.limits().iter().any(|l| matches!(l.algorithm(), AnyAlgorithm::Concurrency(_)))
    }

    /// Decides a hit of `cost` at `now` like [`check`](Policy::check), all or nothing over
    /// `states`; when admitted, the slot every concurrency limit of every key took is lease
    /// `id`: the caller's random draw (64 bits, never 0: a release after the key was reset
    /// must not find a new lease of the same id; 0 leaves the slots anonymous, as `check`
    /// does, freed only by their expiry).
    #[inline(never)]
    pub fn acquire(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        cost: u64,
        id: u64,
    ) -> Result<PolicyDecision, CheckError> {
        // Not inlined (`inline(never)`): the check it runs is large, and its callers (the limiter's
        // acquire, the store's waiting acquisition) share one copy.
        let decision = self.check(states, now, cost)?;
        if decision.allowed && id != 0 {
            for st in states.iter_mut().flatten() {
                for (_, slot) in concurrency_slots(self, st) {
                    if let Some(AnyState::Concurrency(s)) = slot {
                        Concurrency::stamp(s, id);
                    }
                }
            }
        }
        Ok(decision)
    }

    /// When lease `id` expires: the earliest over the keys' concurrency limits that hold it
    /// (`None`: none holds it, e.g. the policy has no concurrency limit).
    pub fn lease_expires_at(&self, states: &[Option<PolicyState>], id: u64) -> Option<Nanos> {
        let mut at: Option<Nanos> = None;
        for st in states.iter().flatten() {
            for s in st.slots.iter().flatten() {
                if let AnyState::Concurrency(s) = s {
                    for l in s.leases.iter().filter(|l| l.id == id && id != 0) {
                        at = Some(at.map_or(l.expires_at, |a| a.min(l.expires_at)));
                    }
                }
            }
        }
        at
    }

    /// Frees lease `id` at `now` on every key of `states` that holds it (and drops their
    /// expired leases). Never an error: a replay, or a lease that expired, frees nothing and
    /// says so (`released: false`).
    pub fn release(&self, states: &mut [Option<PolicyState>], now: Nanos, id: u64) -> Released {
        let mut released = false;
        for state in states.iter_mut() {
            let Some(st) = state else { continue };
            for (c, slot) in concurrency_slots(self, st) {
                if let Some(AnyState::Concurrency(s)) = slot {
                    let (new, was) = c.release(s, now, id);
                    released |= was;
                    *slot = new.map(AnyState::Concurrency);
                }
            }
            self.settle_expiry(state, now);
        }
        Released { decision: self.figures(states, now), released }
    }

    /// Extends lease `id` at `now` to `now + leaseTtl` on every key and concurrency limit
    /// (never shortening it). All or nothing: unless the lease is live on every key,
    /// [`LeaseError::UnknownLease`] and no state changes.
    pub fn renew(&self, states: &mut [Option<PolicyState>], now: Nanos, id: u64) -> Result<Renewed, LeaseError> {
        let live = |st: &PolicyState| {
            self.limits().iter().zip(&st.slots).all(|(l, s)| match (l.algorithm(), s) {
                (AnyAlgorithm::Concurrency(_), Some(AnyState::Concurrency(s))) => {
                    s.leases.iter().any(|l| l.id == id && l.expires_at > now)
                }
                (AnyAlgorithm::Concurrency(_), _) => false,
                _ => true,
            })
        };
        if id == 0 || !self.has_concurrency() || !states.iter().all(|s| s.as_ref().is_some_and(live)) {
            return Err(LeaseError::UnknownLease);
        }
        for state in states.iter_mut() {
            let Some(st) = state else { continue };
            for (c, slot) in concurrency_slots(self, st) {
                if let Some(AnyState::Concurrency(s)) = slot {
                    if let Some((new, _)) = c.renew(s, now, id) {
                        *s = new;
                    }
                }
            }
            self.settle_expiry(state, now);
        }
        let expires_at = self.lease_expires_at(states, id).unwrap_or(now);
        Ok(Renewed { decision: self.figures(states, now), expires_at })
    }

    /// A state after a release or renewal: `None` once it decides like a fresh key, its
    /// expiry computed otherwise.
    fn settle_expiry(&self, state: &mut Option<PolicyState>, now: Nanos) {
        let Some(st) = state else { return };
        if st.slots.iter().all(Option::is_none) && st.blocked_until <= now && st.open.is_empty() {
            *state = None;
        } else {
            st.expires_at = self.expiry(st);
        }
    }
}
