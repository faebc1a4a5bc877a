//! Waiting in line for a concurrency slot: a bounded, fair FIFO queue kept in the key's state
//! (docs/concurrency.md, "Waiting in line"), so every process that shares the state's bytes
//! (one store's compare-and-swap, or one process's memory) shares one line.
//!
//! A waiter is a [`Ticket`] in each concurrency limit's state: its id (the lease id it takes
//! when admitted), until when it is alive (its last poll plus the claim window) and its
//! deadline (its arrival plus `maxWait`). [`Policy::acquire_queued`] is the one transition:
//!
//! - an id already holding a live lease: admitted again, nothing changes (a replay);
//! - an id in line: a poll. It is admitted when the policy admits the hit counting only the
//!   live tickets ahead of it as taken ([`Concurrency`](crate::algorithms::Concurrency)
//!   counts a line's tickets as taken slots); else it keeps its place, alive for another
//!   claim window, until its deadline passes ([`QueueStatus::TimedOut`]: it leaves the line);
//! - a new id: admitted when the policy admits the hit behind everyone in line; else it joins
//!   the back of the line, unless `max_queue` live tickets wait already
//!   ([`QueueStatus::Full`]) or its deadline has passed.
//!
//! So a freed slot goes to the head of the line: no hit without a ticket, and no ticket
//! behind, can take it while the head is alive. A waiter that stops polling (it died) keeps
//! its place at most one claim window, then its ticket is dropped; a ticket admitted whose
//! waiter never learns it holds an ordinary lease, freed by its expiry. Time going back
//! frees nothing: a poll never shortens a ticket's life, and deadlines are fixed at arrival.
//!
//! ```
//! use tollgate::{AnyAlgorithm, Nanos};
//! use tollgate::algorithms::Concurrency;
//! use tollgate::concurrency::queue::{QueueArgs, QueueStatus};
//! use tollgate::policy::{Limit, Policy};
//! let p = Policy::new(vec![Limit::new("in-flight", AnyAlgorithm::Concurrency(Concurrency::new(1, Nanos::from_secs(30)).unwrap())).unwrap()]).unwrap();
//! let now = Nanos::from_secs(1_000);
//! let args = QueueArgs::new(10, now + Nanos::from_secs(5));
//! let mut states = [None];
//! assert_eq!(p.acquire_queued(&mut states, now, 1, 1, args).unwrap().status, QueueStatus::Admitted);
//! assert_eq!(p.acquire_queued(&mut states, now, 1, 2, args).unwrap().status, QueueStatus::Waiting { position: 0 });
//! assert_eq!(p.acquire_queued(&mut states, now, 1, 3, args).unwrap().status, QueueStatus::Waiting { position: 1 });
//! assert!(!p.acquire(&mut states, now, 1, 4).unwrap().allowed); // no overtaking
//! p.release(&mut states, now, 1);
//! assert_eq!(p.acquire_queued(&mut states, now, 1, 3, args).unwrap().status, QueueStatus::Waiting { position: 1 });
//! assert_eq!(p.acquire_queued(&mut states, now, 1, 2, args).unwrap().status, QueueStatus::Admitted);
//! ```

use alloc::vec::Vec;

use crate::algorithms::{AnyAlgorithm, AnyState, Concurrency, Ticket, MAX_QUEUE};
use crate::error::CheckError;
use crate::policy::{Policy, PolicyDecision, PolicyState};
use crate::time::Nanos;

/// How long a waiter keeps its place after its last poll: a waiter that died leaves the line
/// this long after its last poll. Long enough that a live process whose event loop stalls (a
/// loaded machine, a garbage collection) keeps its place; Bottleneck's Redis clients are
/// dropped after 10 s of silence.
pub const CLAIM_WINDOW: Nanos = Nanos::from_millis(5_000);

/// How long a waiter sleeps between polls when a slot may be its next (it polls sooner when a
/// lease expires sooner); a waiter further back polls less often, one more of these per
/// `limit` waiters ahead, at most [`POLL_MOST`].
pub const POLL_EVERY: Nanos = Nanos::from_millis(50);

/// The longest a waiter sleeps between polls: well within the claim window.
pub const POLL_MOST: Nanos = Nanos::from_millis(500);

/// The `status` names of a waiting acquisition, as every edge spells them.
pub const QUEUE_STATUSES: [&str; 4] = ["admitted", "waiting", "full", "timed_out"];

/// A waiting acquisition's arguments: the most live tickets the line may hold for this
/// arrival to join it, the waiter's deadline (its arrival plus `maxWait`; a poll keeps the
/// ticket's own), and the claim window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueArgs {
    /// Join only when fewer live tickets wait (0: never wait). At most [`MAX_QUEUE`].
    pub max_queue: u64,
    /// When a new ticket gives up.
    pub deadline: Nanos,
    /// How long a poll keeps the ticket alive ([`CLAIM_WINDOW`]).
    pub claim: Nanos,
}

impl QueueArgs {
    /// `max_queue` (capped at [`MAX_QUEUE`]) and `deadline`, with the default claim window.
    pub fn new(max_queue: u64, deadline: Nanos) -> QueueArgs {
        QueueArgs { max_queue: max_queue.min(MAX_QUEUE), deadline, claim: CLAIM_WINDOW }
    }
}

/// Where a waiting acquisition stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueStatus {
    /// It holds a lease of its id.
    Admitted,
    /// In line, `position` live tickets ahead of it: poll again after `poll_after`.
    Waiting {
        /// Live tickets ahead.
        position: u64,
    },
    /// Refused: the line already holds `max_queue` live tickets.
    Full,
    /// Refused: its deadline passed (it left the line).
    TimedOut,
}

impl QueueStatus {
    /// The status's name at every edge ([`QUEUE_STATUSES`]).
    pub fn name(&self) -> &'static str {
        match self {
            QueueStatus::Admitted => QUEUE_STATUSES[0],
            QueueStatus::Waiting { .. } => QUEUE_STATUSES[1],
            QueueStatus::Full => QUEUE_STATUSES[2],
            QueueStatus::TimedOut => QUEUE_STATUSES[3],
        }
    }
}

/// What a waiting acquisition did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The policy's decision: allowed only when admitted (a waiter's is the denial that
    /// keeps it waiting, as the line's head would see it).
    pub decision: PolicyDecision,
    /// Admitted, waiting, or refused and why.
    pub status: QueueStatus,
    /// When to poll again while waiting: the nearest of [`POLL_EVERY`], the denial's wait and
    /// the deadline (zero otherwise).
    pub poll_after: Nanos,
    /// The lease's expiry when admitted.
    pub expires_at: Option<Nanos>,
}

/// Each concurrency limit's state of a key, mutable.
fn lines<'a>(policy: &'a Policy, st: &'a mut PolicyState) -> impl Iterator<Item = (&'a Concurrency, &'a mut Option<AnyState>)> + 'a {
    policy.limits().iter().zip(st.slots.iter_mut()).filter_map(|(l, s)| match l.algorithm() {
        AnyAlgorithm::Concurrency(c) => Some((c, s)),
        _ => None,
    })
}

/// The line of one concurrency slot at `now`, without `id`: the live tickets, and `id`'s
/// ticket with its index among them when it was live.
fn split(slot: &Option<AnyState>, now: Nanos, id: u64) -> (Vec<Ticket>, Option<(usize, Ticket)>) {
    let mut rest = Vec::new();
    let mut own = None;
    if let Some(AnyState::Concurrency(s)) = slot {
        for t in s.queue.iter() {
            if t.id == id {
                own = Some((rest.len(), *t));
            } else if t.live(now) {
                rest.push(*t);
            }
        }
    }
    (rest, own)
}

/// The keys' figures at `now`, answered as `allowed` (one copy of the figures' code).
#[inline(never)]
fn figures_as(policy: &Policy, states: &[Option<PolicyState>], now: Nanos, allowed: bool) -> PolicyDecision {
    let mut d = policy.figures(states, now);
    d.allowed = allowed;
    d.decision.allowed = allowed;
    d
}

fn set_queue(slot: &mut Option<AnyState>, queue: Vec<Ticket>) {
    match slot {
        Some(AnyState::Concurrency(s)) => s.queue = queue,
        None if !queue.is_empty() => *slot = Some(AnyState::Concurrency(crate::algorithms::ConcurrencyState { leases: Vec::new(), queue })),
        _ => {}
    }
    if let Some(AnyState::Concurrency(s)) = slot {
        if s.leases.is_empty() && s.queue.is_empty() {
            *slot = None;
        }
    }
}

impl Policy {
    /// Acquires a slot for `id` waiting in line (see the module): admits it, keeps it in
    /// line, or refuses it, all at `now` over `states`, all or nothing with the policy's rate
    /// limits. Id 0 is refused as a plain [`acquire`](Policy::acquire) would take an
    /// anonymous slot: it is decided by `acquire` and never waits.
    pub fn acquire_queued(
        &self,
        states: &mut [Option<PolicyState>],
        now: Nanos,
        cost: u64,
        id: u64,
        args: QueueArgs,
    ) -> Result<Queued, CheckError> {
        self.validate_cost(cost)?;
        if id == 0 || !self.has_concurrency() {
            let decision = self.acquire(states, now, cost, id)?;
            let status = if decision.allowed { QueueStatus::Admitted } else { QueueStatus::Full };
            let expires_at = self.lease_expires_at(states, id).filter(|_| decision.allowed);
            return Ok(Queued { decision, status, poll_after: Nanos::ZERO, expires_at });
        }
        // A replay of an admitted poll: it holds its lease already.
        if let Some(at) = self.lease_expires_at(states, id).filter(|&at| at > now) {
            let decision = figures_as(self, states, now, true);
            return Ok(Queued { decision, status: QueueStatus::Admitted, poll_after: Nanos::ZERO, expires_at: Some(at) });
        }
        // Each line without `id`, and `id`'s place (the furthest back over the lines).
        let mut rests: Vec<Vec<Vec<Ticket>>> = Vec::with_capacity(states.len());
        let mut own: Option<Ticket> = None;
        let mut place: Vec<Vec<usize>> = Vec::with_capacity(states.len());
        for state in states.iter_mut() {
            let (mut r, mut p) = (Vec::new(), Vec::new());
            if let Some(st) = state {
                for (_, slot) in lines(self, st) {
                    let (rest, mine) = split(slot, now, id);
                    if let Some((i, t)) = mine {
                        own = Some(own.map_or(t, |o: Ticket| Ticket { deadline: o.deadline.min(t.deadline), alive_until: o.alive_until.max(t.alive_until), id }));
                        p.push(i);
                    } else {
                        p.push(rest.len());
                    }
                    r.push(rest);
                }
            }
            rests.push(r);
            place.push(p);
        }
        // A ticket whose waiter stopped polling lost its place: it arrives again.
        let own = own.filter(|t| t.alive_until > now);
        let deadline = own.map_or(args.deadline, |t| t.deadline);
        // The view: each line holds only the tickets ahead of `id`.
        let mut view: Vec<Option<PolicyState>> = states.to_vec();
        for (k, state) in view.iter_mut().enumerate() {
            if let Some(st) = state {
                for (j, (_, slot)) in lines(self, st).enumerate() {
                    let ahead = if own.is_some() { place[k][j] } else { rests[k][j].len() };
                    set_queue(slot, rests[k][j][..ahead].to_vec());
                }
            }
        }
        // A ticket past its deadline is never admitted; an arrival is always decided once (maxWait 0).
        let decision = if deadline > now || own.is_none() { Some(self.acquire(&mut view, now, cost, id)?) } else { None };
        let admitted = decision.as_ref().is_some_and(|d| d.allowed);
        // The states written: the view's (what the decision did), each line whole again.
        let position = place.iter().flatten().copied().max().unwrap_or(0) as u64;
        let waiters = rests.iter().flatten().map(Vec::len).max().unwrap_or(0) as u64;
        let status = if admitted {
            QueueStatus::Admitted
        } else if deadline <= now {
            QueueStatus::TimedOut
        } else if own.is_some() {
            QueueStatus::Waiting { position }
        } else if waiters >= args.max_queue {
            QueueStatus::Full
        } else {
            QueueStatus::Waiting { position: waiters }
        };
        let alive = |t: Ticket| Ticket { alive_until: t.alive_until.max(now.saturating_add(args.claim)), ..t };
        let mine = match status {
            QueueStatus::Waiting { .. } => Some(alive(own.unwrap_or(Ticket { id, alive_until: now, deadline }))),
            _ => None,
        };
        if decision.is_some() {
            for (k, state) in view.iter_mut().enumerate() {
                let st = state.get_or_insert_with(|| self.fresh_state());
                for (j, (_, slot)) in lines(self, st).enumerate() {
                    // A key fresh before the decision has an empty line.
                    let mut q = rests[k].get_mut(j).map(core::mem::take).unwrap_or_default();
                    if let Some(t) = mine {
                        let at = if own.is_some() { place[k].get(j).map_or(0, |&i| i.min(q.len())) } else { q.len() };
                        q.insert(at, t);
                    }
                    set_queue(slot, q);
                }
                self.settle_queue(state, now);
            }
            states.clone_from_slice(&view);
        } else {
            // Timed out: the ticket leaves every line; nothing else changes.
            for (k, state) in states.iter_mut().enumerate() {
                if let Some(st) = state {
                    for (j, (_, slot)) in lines(self, st).enumerate() {
                        set_queue(slot, core::mem::take(&mut rests[k][j]));
                    }
                }
                self.settle_queue(state, now);
            }
        }
        let decision = match decision {
            Some(d) => d,
            None => figures_as(self, states, now, false),
        };
        let poll_after = match status {
            QueueStatus::Waiting { position } => {
                let slots = self
                    .limits()
                    .iter()
                    .filter_map(|l| match l.algorithm() {
                        AnyAlgorithm::Concurrency(c) => Some(crate::Algorithm::limit(c)),
                        _ => None,
                    })
                    .min()
                    .unwrap_or(1);
                let every = Nanos::new(POLL_EVERY.as_nanos().saturating_mul(1 + position / slots)).min(POLL_MOST);
                let wait = if decision.decision.retry_after > Nanos::ZERO { decision.decision.retry_after } else { every };
                wait.min(every).min(deadline.saturating_sub(now)).max(Nanos::new(1))
            }
            _ => Nanos::ZERO,
        };
        let expires_at = if admitted { self.lease_expires_at(states, id) } else { None };
        Ok(Queued { decision, status, poll_after, expires_at })
    }

    /// A key's state after a line changed: `None` once fresh, its expiry computed otherwise.
    fn settle_queue(&self, state: &mut Option<PolicyState>, now: Nanos) {
        let Some(st) = state else { return };
        if st.slots.iter().all(Option::is_none) && st.blocked_until <= now && st.open.is_empty() {
            *state = None;
        } else {
            st.expires_at = self.expiry(st);
        }
    }
}
