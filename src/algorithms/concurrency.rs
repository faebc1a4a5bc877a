//! Concurrency: how many at once, not how many per window. A semaphore of `limit` slots whose
//! holders are **leases** that expire.
//!
//! The state of a key is its live leases, each an id and an expiry. An admitted hit takes one
//! slot and gets a lease lasting `lease_ttl`; [`Concurrency::release`] frees it (a release
//! of a lease that is not live is a no-op), [`Concurrency::renew`] extends a live one, and a
//! lease that reaches its expiry frees its slot by itself at the next decision, so a holder
//! that crashed holds its slot at most `lease_ttl`.
//!
//! **Cost**: one slot per hit, whatever its cost (a semaphore of requests: the cost of a hit
//! is what the policy's rate and token limits count). So a cost is never too large for it.
//!
//! **Guarantee**: at every instant at most `limit` live leases (`expires_at > now`), whatever
//! the interleaving of acquisitions, releases, renewals, expiries and replays.
//!
//! **Time**: a clock that goes back frees nothing (a lease is live while `now` is before its
//! expiry, so an earlier `now` sees more of them live), and a lease taken or renewed then
//! expires no earlier than the latest lease's expiry: the state is never written "in the
//! past". A denial's `retry_after` is exact: the nearest live lease's expiry, if no release
//! comes first.
//!
//! **Ids**: the lease's id is the caller's random draw ([`crate::concurrency`]: time and
//! randomness are arguments); a plain `check` takes an anonymous slot (id 0) that only its
//! expiry frees.
//!
//! **Pros**: bounds what is in flight (a GPU pool, an upstream that allows N parallel
//! calls), shared across processes and at the edge; composes with rates in one policy.
//! **Cons**: a state of `16 B` per holder; holders must release (or renew long work), or
//! their slots stay taken until the lease expires.

use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::decision::{Decision, Outcome};
use crate::error::{CheckError, ConfigError};
use crate::time::Nanos;

/// The most slots a concurrency limit may have (its state holds one lease per slot).
pub const MAX_CONCURRENCY: u64 = 10_000;

/// The longest lease a concurrency limit may give: an hour.
pub const MAX_LEASE_TTL: Nanos = Nanos::from_secs(3_600);

/// A concurrency limit: `limit` slots, each lease lasting `lease_ttl` unless renewed.
///
/// ```
/// use tollgate::{algorithm::check_slot, Nanos};
/// use tollgate::algorithms::Concurrency;
/// let c = Concurrency::new(2, Nanos::from_secs(30)).unwrap();
/// let mut state = None;
/// let now = Nanos::from_secs(1_000);
/// assert!(check_slot(&c, &mut state, now, 1).unwrap().allowed);
/// assert!(check_slot(&c, &mut state, now, 500).unwrap().allowed); // one slot, whatever the cost
/// let third = check_slot(&c, &mut state, now, 1).unwrap();
/// assert_eq!(third.retry_after, Nanos::from_secs(30)); // the nearest lease's expiry
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Concurrency {
    limit: u64,
    lease_ttl: Nanos,
}

/// One live lease: the caller's id (0: anonymous) and when it expires.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct HeldLease {
    /// The id drawn at acquisition; 0 for a slot a plain check took.
    pub id: u64,
    /// When the slot frees itself unless renewed or released first.
    pub expires_at: Nanos,
}

/// The most tickets a key's line may hold ([`crate::concurrency::queue`]).
pub const MAX_QUEUE: u64 = 10_000;

/// A waiter's place in a key's line ([`crate::concurrency::queue`]): its id (the lease id it
/// takes when admitted), until when it counts as alive (its last poll plus the claim window:
/// a waiter that stops asking leaves the line then), and its `maxWait` deadline.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    /// The caller's random draw, the lease's id once admitted.
    pub id: u64,
    /// The waiter's last poll plus the claim window.
    pub alive_until: Nanos,
    /// When the waiter gives up (its arrival plus `maxWait`).
    pub deadline: Nanos,
}

impl Ticket {
    /// Whether the ticket still holds its place at `now`.
    pub fn live(&self, now: Nanos) -> bool {
        self.alive_until > now && self.deadline > now
    }

    /// When the ticket stops holding its place, unless polled again.
    pub fn ends_at(&self) -> Nanos {
        self.alive_until.min(self.deadline)
    }
}

/// A key's leases, in the order they were taken (the newest last), and its line of waiters
/// in arrival order (empty unless callers wait in line).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConcurrencyState {
    /// The leases, some maybe expired (they are dropped at the next write).
    pub leases: Vec<HeldLease>,
    /// The waiters' tickets, first come first; some maybe dead (dropped at the next write).
    pub queue: Vec<Ticket>,
}

impl ConcurrencyState {
    /// The latest lease expiry (zero when none).
    pub fn latest_expiry(&self) -> Nanos {
        self.leases.iter().map(|l| l.expires_at).max().unwrap_or(Nanos::ZERO)
    }

    /// When the key is fresh: its last lease expired and its last ticket ended.
    pub fn fresh_at(&self) -> Nanos {
        self.queue.iter().map(Ticket::ends_at).fold(self.latest_expiry(), Nanos::max)
    }

    pub(crate) fn live(&self, now: Nanos) -> impl Iterator<Item = &HeldLease> + '_ {
        self.leases.iter().filter(move |l| l.expires_at > now)
    }

    /// The tickets still in line at `now`, in order.
    pub fn waiting(&self, now: Nanos) -> impl Iterator<Item = &Ticket> + '_ {
        self.queue.iter().filter(move |t| t.live(now))
    }

    /// The state with the given leases and this state's tickets live at `now` but `id`'s
    /// (`None` when both are empty).
    fn with_leases(&self, leases: Vec<HeldLease>, now: Nanos, id: u64) -> Option<ConcurrencyState> {
        let queue: Vec<Ticket> = self.waiting(now).filter(|t| t.id != id || id == 0).copied().collect();
        (!leases.is_empty() || !queue.is_empty()).then_some(ConcurrencyState { leases, queue })
    }
}

impl Concurrency {
    /// `limit` slots (1 to [`MAX_CONCURRENCY`]), leases of `lease_ttl` (1 ns to
    /// [`MAX_LEASE_TTL`]).
    pub fn new(limit: u64, lease_ttl: Nanos) -> Result<Concurrency, ConfigError> {
        if limit == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if limit > MAX_CONCURRENCY {
            return Err(ConfigError::LimitTooLarge { limit, max: MAX_CONCURRENCY });
        }
        if lease_ttl == Nanos::ZERO {
            return Err(ConfigError::ZeroWindow);
        }
        if lease_ttl > MAX_LEASE_TTL {
            let max_ms = MAX_LEASE_TTL.as_nanos() / 1_000_000;
            return Err(ConfigError::WindowTooLong { window_ms: lease_ttl.as_nanos() / 1_000_000, max_ms });
        }
        Ok(Concurrency { limit, lease_ttl })
    }

    /// `limit` slots of leases of `lease_ttl`, unchecked (a configuration already validated).
    pub(crate) const fn from_parts(limit: u64, lease_ttl: Nanos) -> Concurrency {
        Concurrency { limit, lease_ttl }
    }

    /// How long a lease lasts unless renewed.
    pub fn lease_ttl(&self) -> Nanos {
        self.lease_ttl
    }

    /// The expiry a lease taken or renewed at `now` gets: `now + lease_ttl`, and never before
    /// the latest expiry of `state` (a clock that went back writes nothing in the past).
    fn expiry(&self, state: Option<&ConcurrencyState>, now: Nanos) -> Nanos {
        let fresh = now.saturating_add(self.lease_ttl);
        state.map_or(fresh, |s| fresh.max(s.latest_expiry()))
    }

    // Not inlined: every dispatch over the algorithms (check, peek, the batch loops) would
    // otherwise carry a copy; a concurrency decision allocates its new state anyway.
    #[inline(never)]
    fn decide(&self, state: Option<&ConcurrencyState>, now: Nanos, cost: u64) -> Result<Outcome<ConcurrencyState>, CheckError> {
        if cost == 0 {
            return Err(CheckError::ZeroCost);
        }
        let live = state.map_or(0, |s| s.live(now).count() as u64);
        // Waiters in line hold their places: a hit without a ticket never overtakes them.
        let waiting = state.map_or(0, |s| s.waiting(now).count() as u64);
        let nearest = |s: Option<&ConcurrencyState>| {
            s.and_then(|s| s.live(now).map(|l| l.expires_at).chain(s.waiting(now).map(Ticket::ends_at)).min())
                .map_or(Nanos::ZERO, |e| e.saturating_sub(now))
        };
        if live.saturating_add(waiting) >= self.limit {
            let wait = nearest(state);
            let decision = Decision {
                allowed: false,
                limit: self.limit,
                remaining: 0,
                reset_at: state.map_or(now, ConcurrencyState::latest_expiry),
                retry_after: wait,
                next_unit_after: wait,
            };
            return Ok(Outcome { decision, state: None });
        }
        let expires_at = self.expiry(state, now);
        let mut leases = state.map_or_else(Vec::new, |s| live_at(s, now));
        leases.push(HeldLease { id: 0, expires_at });
        let queue = state.map_or_else(Vec::new, |s| s.waiting(now).copied().collect());
        let new = ConcurrencyState { leases, queue };
        let remaining = self.limit - live - waiting - 1;
        let decision = Decision {
            allowed: true,
            limit: self.limit,
            remaining,
            reset_at: new.latest_expiry(),
            retry_after: Nanos::ZERO,
            next_unit_after: if remaining > 0 { Nanos::ZERO } else { nearest(Some(&new)) },
        };
        Ok(Outcome { decision, state: Some(new) })
    }

    /// Gives the newest lease of `state` (the one an admitted check just took) the id `id`.
    pub fn stamp(state: &mut ConcurrencyState, id: u64) {
        if let Some(last) = state.leases.last_mut() {
            last.id = id;
        }
    }

    /// Frees the live lease `id` at `now` (and drops the expired ones), and takes `id`'s ticket
    /// out of the line (a waiter that gave up): the new state (`None` when nothing is left)
    /// and whether the lease `id` was live. Id 0 (anonymous) is never released.
    pub fn release(&self, state: &ConcurrencyState, now: Nanos, id: u64) -> (Option<ConcurrencyState>, bool) {
        let was = id != 0 && state.live(now).any(|l| l.id == id);
        let mut leases = live_at(state, now);
        leases.retain(|l| !(was && l.id == id));
        (state.with_leases(leases, now, id), was)
    }

    /// Extends the live lease `id` to `now + lease_ttl` (never shortening it, and never before
    /// the latest expiry: see [`Concurrency`]'s time rule), dropping the expired ones: the new
    /// state and the lease's new expiry, or `None` when `id` is not live (released, expired,
    /// or never taken), changing nothing.
    pub fn renew(&self, state: &ConcurrencyState, now: Nanos, id: u64) -> Option<(ConcurrencyState, Nanos)> {
        if id == 0 || !state.live(now).any(|l| l.id == id) {
            return None;
        }
        let expires_at = self.expiry(Some(state), now);
        let mut leases = live_at(state, now);
        for l in leases.iter_mut().filter(|l| l.id == id) {
            l.expires_at = l.expires_at.max(expires_at);
        }
        let queue = state.waiting(now).copied().collect();
        Some((ConcurrencyState { leases, queue }, expires_at))
    }
}

/// The leases of `state` live at `now`, in their order (a copy, then the expired dropped).
fn live_at(state: &ConcurrencyState, now: Nanos) -> Vec<HeldLease> {
    let mut leases = state.leases.clone();
    leases.retain(|l| l.expires_at > now);
    leases
}

impl Algorithm for Concurrency {
    type State = ConcurrencyState;

    fn name(&self) -> &'static str {
        "concurrency"
    }

    fn limit(&self) -> u64 {
        self.limit
    }

    /// Any cost: a hit takes one slot whatever its cost.
    fn capacity(&self) -> u64 {
        u64::MAX
    }

    fn advertised_quota(&self) -> (u64, Nanos) {
        (self.limit, self.lease_ttl)
    }

    fn longest_window(&self) -> Nanos {
        self.lease_ttl
    }

    fn check(&self, state: Option<&ConcurrencyState>, now: Nanos, cost: u64) -> Result<Outcome<ConcurrencyState>, CheckError> {
        self.decide(state, now, cost)
    }

    /// A refund gives nothing back: a slot is freed by [`release`](Concurrency::release) or
    /// its expiry, never by a count.
    fn refund(&self, state: &ConcurrencyState, _now: Nanos, _cost: u64) -> Option<ConcurrencyState> {
        (!state.leases.is_empty() || !state.queue.is_empty()).then(|| state.clone())
    }

    fn fresh_at(&self, state: &ConcurrencyState) -> Nanos {
        state.fresh_at()
    }
}
