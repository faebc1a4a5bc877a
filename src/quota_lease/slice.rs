//! A holder's slice of one key's quota (module docs of [`crate::quota_lease`]), on the
//! holder's clock: the grants it admits from, the figures of its last exchange and the demand
//! since. Pure, as the ledger is: the holder keeps it, makes the exchanges it asks for
//! ([`SliceStep::Exchange`], [`Slice::renewal`]) and brings their answers back
//! ([`Slice::landed`]).
//!
//! The slice is a list of grants, oldest first, each with its lease (one lease for all of
//! them when the ledger says the new lease `extends` to everything held, as the fixed
//! windows' counters do); hits spend the oldest first and give-backs come from the newest, as
//! the ledger takes them back. Nothing is admitted from a grant once its lease lapsed.

use alloc::vec::Vec;

use super::{local_decision, renewal_due, slice_want, SliceGrant, MAX_TRANCHES};
use crate::policy::PolicyDecision;
use crate::time::Nanos;

/// A holder's slice of one key.
#[derive(Clone, Debug, Default)]
pub struct Slice {
    /// The grants, oldest first: (units not spent, when the grant's lease lapses). A spent
    /// grant stays until then (a refund goes back into the oldest live one).
    grants: Vec<(u64, Nanos)>,
    /// The figures of the last exchange: what the windows had left, the binding limit and
    /// when its window ends.
    left: u64,
    binding: usize,
    limit: u64,
    window_end: Nanos,
    /// Units asked for since the last exchange began (admitted or not).
    demand: u64,
    /// When the last exchange began.
    since: Nanos,
    /// The last exchange's lease ends where the end of a window cuts every lease short: no
    /// exchange before then would extend it.
    capped: bool,
    /// Denied here until then: the windows had too little left at the last exchange.
    spent_until: Nanos,
}

/// What a hit decided from a slice does next.
#[derive(Clone, Debug, PartialEq)]
pub enum SliceStep {
    /// The slice answers.
    Answer(PolicyDecision),
    /// The slice is short: an exchange with the ledger (or a wait for the one already out),
    /// then the hit is decided again.
    Exchange {
        /// The units the hit still needs.
        need: u64,
        /// The most to ask for.
        want: u64,
    },
    /// A peek the slice (`units`, live) cannot answer: the ledger's [`standing`] says what is
    /// left ([`Slice::peeked`]).
    ///
    /// [`standing`]: super::QuotaLedger::standing
    Peek {
        /// The slice's live units.
        units: u64,
    },
}

impl Slice {
    fn lapse(&mut self, now: Nanos) {
        self.grants.retain(|&(_, until)| now < until);
    }

    /// The units of the live grants.
    fn units(&self) -> u64 {
        self.grants.iter().map(|g| g.0).sum()
    }

    /// When the last grant's lease lapses (a slice that holds none may be forgotten then).
    pub fn until(&self) -> Nanos {
        self.grants.iter().map(|g| g.1).max().unwrap_or(Nanos::ZERO)
    }

    /// Spends `n` units (at most what the slice holds), oldest grant first.
    fn take(&mut self, mut n: u64) {
        for g in &mut self.grants {
            let k = n.min(g.0);
            (g.0, n) = (g.0 - k, n - k);
        }
    }

    /// Takes out `n` units (at most what the slice holds) to give back, newest grant first.
    fn give_back(&mut self, mut n: u64) -> u64 {
        let mut taken = 0;
        for g in self.grants.iter_mut().rev() {
            let k = n.min(g.0);
            (g.0, n, taken) = (g.0 - k, n - k, taken + k);
        }
        taken
    }

    fn decision(&self, allowed: bool, now: Nanos) -> PolicyDecision {
        let end = if self.window_end > now { self.window_end } else { now };
        local_decision(allowed, self.binding, self.limit, self.units().saturating_add(self.left), end, now)
    }

    /// The slice to ask for at `now` ([`slice_want`]): for the rest of a lease the end of a
    /// window cut short, or for a whole `ttl`.
    fn want(&self, need: u64, ttl: Nanos, now: Nanos) -> u64 {
        let until = self.until();
        let span = if self.capped && until > now { until - now } else { ttl };
        slice_want(self.demand, now.saturating_sub(self.since), span, need)
    }

    /// A hit of `cost` at `now` (`peek`: what it would get, changing nothing), under leases of
    /// `ttl`. `first`: the request's first try, whose demand is counted (once); `last`: its
    /// last, which denies a hit the slice is short of rather than ask for more.
    pub fn step(&mut self, peek: bool, cost: u64, now: Nanos, ttl: Nanos, first: bool, last: bool) -> SliceStep {
        self.lapse(now);
        if peek {
            return if self.units() >= cost {
                SliceStep::Answer(self.decision(true, now))
            } else {
                SliceStep::Peek { units: self.units() }
            };
        }
        if first {
            self.demand = self.demand.saturating_add(cost);
        }
        if self.units() >= cost {
            self.take(cost);
            return SliceStep::Answer(self.decision(true, now));
        }
        if self.spent_until > now || last {
            return SliceStep::Answer(self.decision(false, now));
        }
        SliceStep::Exchange { need: cost - self.units(), want: self.want(cost, ttl, now) }
    }

    /// After an admitted hit at `now`: whether to begin the next exchange ([`renewal_due`]),
    /// and then what to give back (what the slice holds beyond the new demand) and to ask for.
    pub fn renewal(&self, now: Nanos, ttl: Nanos) -> Option<(u64, u64)> {
        let lease_left = self.until().saturating_sub(now);
        if !renewal_due(self.units(), self.demand, lease_left, ttl, self.capped) {
            return None;
        }
        let want = self.want(0, ttl, now);
        Some((self.units().saturating_sub(want), want))
    }

    /// An exchange begins at `now`: the demand is counted afresh from here, and `give_back`
    /// units (at most what the slice holds) come out of it, never admitted here again. Returns
    /// the units taken out, which the exchange gives back.
    pub fn begin(&mut self, give_back: u64, now: Nanos) -> u64 {
        self.demand = 0;
        self.since = now;
        self.give_back(give_back)
    }

    /// The ledger's answer `g` to an exchange begun at `now` that asked for `need`, with
    /// leases of `ttl`; the ledger's times are on its clock, which read `ledger_now`, and are
    /// taken as long after `now` as after it. The lease is measured from `now`, before the
    /// request left; it is the new grant's, or every grant's when `g` `extends`. The slice
    /// keeps no more than the ledger's record of this holder (`held`): units the ledger
    /// already counts as spent (their lease lapsed there before the request arrived) are
    /// dropped, oldest first. Short of `need`, the slice denies for a quarter of a lease.
    pub fn landed(&mut self, g: &SliceGrant, ledger_now: Nanos, need: u64, now: Nanos, ttl: Nanos) {
        let here = |t: Nanos| now + t.saturating_sub(ledger_now);
        self.lapse(now);
        let until = here(g.expires_at);
        self.capped = g.expires_at < ledger_now.saturating_add(ttl);
        if g.extends {
            self.grants.iter_mut().for_each(|h| h.1 = until);
        }
        if g.granted > 0 {
            self.grants.push((g.granted, until));
        }
        let excess = self.units().saturating_sub(g.held);
        self.take(excess);
        if self.grants.len() > MAX_TRANCHES {
            // Spent grants go first; none the ledger still counts for this holder.
            let spent = self.grants.iter().take_while(|h| h.0 == 0).count();
            self.grants.drain(..spent.min(self.grants.len() - MAX_TRANCHES));
        }
        self.window_end = here(g.window_end);
        (self.left, self.binding, self.limit) = (g.left, g.binding, g.limit);
        self.spent_until = if g.granted < need {
            let recheck = now + Nanos::from_millis(ttl.as_millis_ceil().div_ceil(4));
            recheck.min(self.window_end)
        } else {
            Nanos::ZERO
        };
    }

    /// What a hit of `cost` would get at `now` from the ledger's standing `g` (read at
    /// `ledger_now`, nothing granted) plus `units`, the slice [`SliceStep::Peek`] named (no
    /// more than the ledger's record of it holds).
    pub fn peeked(g: &SliceGrant, ledger_now: Nanos, units: u64, cost: u64, now: Nanos) -> PolicyDecision {
        let remaining = g.left.saturating_add(units.min(g.held));
        let end = now + g.window_end.saturating_sub(ledger_now);
        local_decision(remaining >= cost, g.binding, g.limit, remaining, end, now)
    }

    /// Gives `cost` units back to the slice while a lease is live (they were granted to it),
    /// into its oldest live grant; answers what a hit of cost 1 would get at `now`.
    pub fn refund(&mut self, cost: u64, now: Nanos) -> PolicyDecision {
        self.lapse(now);
        if let Some(oldest) = self.grants.first_mut() {
            oldest.0 = oldest.0.saturating_add(cost);
        }
        self.decision(self.units() >= 1, now)
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::*;

    #[test]
    fn a_slice_spends_its_oldest_grant_first_and_gives_back_from_its_newest() {
        let (a, b) = (Nanos::from_millis(100), Nanos::from_millis(200));
        let mut s = Slice { grants: vec![(3, a), (4, b)], ..Slice::default() };
        s.take(2);
        assert_eq!((s.grants.clone(), s.units(), s.until()), (vec![(1, a), (4, b)], 5, b));
        assert_eq!(s.give_back(3), 3);
        assert_eq!(s.grants, vec![(1, a), (1, b)]);
        // A spent grant stays until its lease lapses; then only the later one is left.
        s.take(1);
        s.lapse(a);
        assert_eq!(s.grants, vec![(1, b)]);
        assert_eq!(s.give_back(5), 1);
        s.lapse(b);
        assert_eq!((s.units(), s.until()), (0, Nanos::ZERO));
    }
}
