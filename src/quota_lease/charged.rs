//! The book of every other policy (a sliding window, sliding log or buckets, a token bucket,
//! GCRA, a first-hit window, or several limits among which one of those): the key's own
//! state under the policy, into which every grant is charged as a hit of its size at the
//! grant's time (as [`Policy::reserve`] charges an estimate), and a tranche per grant: its
//! units not given back, when its lease lapses, and each limit's mark (the limit's
//! `fresh_at` right after the charge, as a reservation keeps it). Units given back leave the
//! state by the core's give-back rules ([`crate::reserve::give_back`], as a settlement's):
//! a limit frees only units it still holds of that tranche, never units other grants took or
//! time already freed. The bound is in the module docs of [`crate::quota_lease`].
//!
//! A tranche's lease is its own: `ttl` after its grant (never past the end of a fixed
//! window's current window, first-hit ones included), and a later exchange does not extend
//! it, since a unit is charged at the time of its grant and admitting it later is what the
//! bound pays for. A holder spends its oldest tranche first and gives back from its newest,
//! as the book takes back from the newest: a unit given back is never one the holder spent.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{SliceGrant, MAX_HOLDERS, MAX_TRANCHES};
use crate::algorithm::Algorithm;
use crate::algorithms::AnyAlgorithm;
use crate::codec::{put, Reader};
use crate::error::DecodeError;
use crate::lease::MAX_HOLDER_LEN;
use crate::policy::{Policy, PolicyState};
use crate::reserve::give_back;
use crate::time::Nanos;

/// The version byte of the bytes [`Charged::encode`] writes.
pub(super) const VERSION: u8 = 2;

/// The units of one grant a holder has not given back.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tranche {
    units: u64,
    /// When its lease lapses: the holder admits none of its units from then on.
    expires_at: Nanos,
    /// Per limit, the limit's `fresh_at` right after the grant was charged, moved back when a
    /// give-back frees what the limit held at or after it.
    marks: Vec<Nanos>,
}

/// A holder and its tranches, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    name: Box<str>,
    /// Its lease: it counts among the holders an equal split is made for until then.
    until: Nanos,
    tranches: Vec<Tranche>,
}

impl Holder {
    fn held(&self) -> u64 {
        self.tranches.iter().map(|t| t.units).sum()
    }
}

/// The charged book of one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Charged {
    policy: Policy,
    /// The key's state under the policy: every grant charged, less what came back.
    state: Option<PolicyState>,
    holders: Vec<Holder>,
}

impl Charged {
    pub(super) fn new(policy: &Policy) -> Charged {
        Charged { policy: policy.clone(), state: None, holders: Vec::new() }
    }

    /// Forgets lapsed tranches (their units stay charged: spent) and lapsed holders.
    fn roll(&mut self, now: Nanos) {
        for h in &mut self.holders {
            h.tranches.retain(|t| t.expires_at > now);
        }
        self.holders.retain(|h| h.until > now || !h.tranches.is_empty());
    }

    /// Each limit's `fresh_at` (zero for a fresh limit).
    fn fresh_ats(&self) -> Vec<Nanos> {
        let slots = self.state.as_ref().map(|s| s.slots());
        self.policy
            .limits()
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let slot = slots.and_then(|s| s.get(i)).and_then(Option::as_ref);
                slot.map_or(Nanos::ZERO, |s| l.algorithm().fresh_at(s))
            })
            .collect()
    }

    /// Gives `units` of tranche `t` of holder `h` back to every limit at `now`, each limit as
    /// far as its give-back rule allows (what it does not free stays charged: spent). Every
    /// mark at or after the tranche's moves back by what the limit's `fresh_at` moved.
    fn give_back(&mut self, h: usize, t: usize, units: u64, now: Nanos) {
        let Some(marks) = self.holders.get(h).and_then(|h| h.tranches.get(t)).map(|t| t.marks.clone()) else {
            return;
        };
        let Some(st) = self.state.as_mut() else { return };
        for (l, limit) in self.policy.limits().iter().enumerate() {
            let (Some(slot), Some(&mark)) = (st.slots.get_mut(l), marks.get(l)) else { continue };
            let a = limit.algorithm();
            let before = slot.as_ref().map_or(Nanos::ZERO, |s| a.fresh_at(s));
            let (new, _) = give_back(a, slot.as_ref(), now, units, mark);
            let after = new.as_ref().map_or(now.min(before), |s| a.fresh_at(s));
            *slot = new;
            let moved = before.saturating_sub(after);
            if moved > Nanos::ZERO {
                for m in self.holders.iter_mut().flat_map(|h| &mut h.tranches).filter_map(|t| t.marks.get_mut(l)) {
                    if *m >= mark {
                        *m = m.saturating_sub(moved);
                    }
                }
            }
        }
        if st.slots.iter().all(Option::is_none) && st.open.is_empty() && st.blocked_until <= now {
            self.state = None;
        } else {
            st.expires_at = self.policy.expiry(st);
        }
    }

    /// Charges `units` as one hit at `now`; false (nothing charged) if the policy denies it.
    fn charge(&mut self, units: u64, now: Nanos) -> bool {
        let mut states = [self.state.take()];
        let allowed = self.policy.check(&mut states, now, units).is_ok_and(|d| d.allowed);
        let [state] = states;
        self.state = state;
        allowed
    }

    /// When a tranche granted at `now` lapses: `now + ttl`, never past the end of the current
    /// window of a fixed-window limit (clock-aligned or first-hit).
    fn lease_end(&self, now: Nanos, ttl: Nanos) -> Nanos {
        let slots = self.state.as_ref().map(|s| s.slots());
        let mut end = now.saturating_add(ttl);
        for (i, l) in self.policy.limits().iter().enumerate() {
            let a = l.algorithm();
            if matches!(a, AnyAlgorithm::FixedWindow(_) | AnyAlgorithm::FixedWindowFirstHit(_)) {
                if let Some(s) = slots.and_then(|s| s.get(i)).and_then(Option::as_ref) {
                    end = end.min(a.fresh_at(s));
                }
            }
        }
        end
    }

    /// (units a grant could take now, the binding limit's index, its limit, when one unit
    /// more than that would be admitted): the most a hit would be admitted with, found by
    /// peeks (the remaining after one unit first, then halving).
    fn figures(&self, now: Nanos) -> (u64, usize, u64, Nanos) {
        let states = core::slice::from_ref(&self.state);
        let peek = |cost: u64| self.policy.peek(states, now, cost).ok();
        let allows = |cost: u64| peek(cost).is_some_and(|d| d.allowed);
        let capacity = self.policy.limits().iter().map(|l| l.algorithm().capacity()).min().unwrap_or(0);
        let Some(one) = peek(1) else { return (0, 0, 0, now) };
        if !one.allowed {
            return (0, one.binding.limit, one.decision.limit, now.saturating_add(one.decision.retry_after));
        }
        let hint = one.decision.remaining.saturating_add(1).min(capacity);
        let left = if allows(hint) && (hint == capacity || !allows(hint + 1)) {
            hint
        } else {
            let (mut lo, mut hi) = (1, capacity);
            while lo < hi {
                let mid = hi - (hi - lo) / 2;
                if allows(mid) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            lo
        };
        let at = peek(left).map_or((0, 0), |d| (d.binding.limit, d.decision.limit));
        let next = if left < capacity {
            peek(left + 1).map_or(now, |d| now.saturating_add(d.decision.retry_after))
        } else {
            now
        };
        (left, at.0, at.1, next)
    }

    /// [`QuotaLedger::exchange`](super::QuotaLedger::exchange) for this book: the units given
    /// back come out of the holder's newest tranches; the grant is charged and is a new
    /// tranche, whose lease is `expires_at` (the others keep theirs).
    pub(super) fn exchange(
        &mut self,
        holder: &str,
        give_back: u64,
        need: u64,
        want: u64,
        ttl: Nanos,
        now: Nanos,
    ) -> SliceGrant {
        self.roll(now);
        let mine = self.holders.iter().position(|h| &*h.name == holder);
        let mut returned = 0;
        if let Some(h) = mine {
            let mut rest = give_back.min(self.holders[h].held());
            let mut t = self.holders[h].tranches.len();
            while rest > 0 && t > 0 {
                t -= 1;
                let k = rest.min(self.holders[h].tranches[t].units);
                self.give_back(h, t, k, now);
                self.holders[h].tranches[t].units -= k;
                (rest, returned) = (rest - k, returned + k);
            }
            self.holders[h].tranches.retain(|t| t.units > 0);
        }
        let live = self.holders.len() + usize::from(mine.is_none());
        let (left, _, _, _) = self.figures(now);
        let split = left.div_ceil(live as u64);
        let mut granted = need.max(want.min(split)).min(left);
        if granted > 0 && !self.charge(granted, now) {
            granted = 0;
        }
        let expires_at = self.lease_end(now, ttl);
        let tranche = (granted > 0).then(|| Tranche { units: granted, expires_at, marks: self.fresh_ats() });
        let until = now.saturating_add(ttl);
        let h = match mine {
            Some(h) => {
                self.holders[h].until = until;
                h
            }
            None => {
                let new = Holder { name: holder.into(), until, tranches: Vec::new() };
                if self.holders.len() < MAX_HOLDERS {
                    self.holders.push(new);
                    self.holders.len() - 1
                } else {
                    // The lease that lapses soonest leaves the book; its units stay spent.
                    let soonest = (0..self.holders.len()).min_by_key(|&i| self.holders[i].until).unwrap_or(0);
                    self.holders[soonest] = new;
                    soonest
                }
            }
        };
        let tranches = &mut self.holders[h].tranches;
        tranches.extend(tranche);
        if tranches.len() > MAX_TRANCHES {
            // The oldest leaves the book; its units stay spent.
            tranches.remove(0);
        }
        let held = self.holders[h].held();
        let (left, binding, limit, window_end) = self.figures(now);
        SliceGrant { granted, returned, held, expires_at, left, binding, limit, window_end, extends: false }
    }

    /// [`QuotaLedger::standing`](super::QuotaLedger::standing) for this book: `expires_at` is
    /// when the holder's last tranche lapses.
    pub(super) fn standing(&self, holder: &str, now: Nanos) -> SliceGrant {
        let mut rolled = self.clone();
        rolled.roll(now);
        let mine = rolled.holders.iter().find(|h| &*h.name == holder);
        let held = mine.map_or(0, Holder::held);
        let expires_at = mine.and_then(|h| h.tranches.iter().map(|t| t.expires_at).max()).unwrap_or(now);
        let (left, binding, limit, window_end) = rolled.figures(now);
        SliceGrant { granted: 0, returned: 0, held, expires_at, left, binding, limit, window_end, extends: false }
    }

    /// When everything the book holds stops mattering: the key's state is fresh and every
    /// lease lapsed.
    pub(super) fn expiry(&self) -> Nanos {
        let state = self.state.as_ref().map_or(Nanos::ZERO, |s| s.expires_at());
        let leases = self.holders.iter().flat_map(|h| h.tranches.iter().map(|t| t.expires_at).chain([h.until]));
        leases.fold(state, Nanos::max)
    }

    /// Compact bytes of the state and leases (for Durable Object storage).
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = alloc::vec![VERSION];
        let state = self.state.as_ref().map(PolicyState::encode).unwrap_or_default();
        put(&mut out, state.len() as u64);
        out.extend_from_slice(&state);
        put(&mut out, self.holders.len() as u64);
        for h in &self.holders {
            put(&mut out, h.name.len() as u64);
            out.extend_from_slice(h.name.as_bytes());
            put(&mut out, h.until.as_nanos());
            put(&mut out, h.tranches.len() as u64);
            for t in &h.tranches {
                put(&mut out, t.units);
                put(&mut out, t.expires_at.as_nanos());
                for m in &t.marks {
                    put(&mut out, m.as_nanos());
                }
            }
        }
        out
    }

    /// Restores what [`encode`](Charged::encode) wrote for a policy of the same limits.
    pub(super) fn restore(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader::new(bytes);
        let version = r.byte()?;
        if version != VERSION {
            return Err(DecodeError::UnknownVersion(version));
        }
        let len = r.len(bytes.len() as u64)?;
        let state = match len {
            0 => None,
            _ => self.policy.restore(PolicyState::decode(r.take(len)?)?)?,
        };
        let n = self.policy.limits().len();
        let count = r.len(MAX_HOLDERS as u64)?;
        let mut holders = Vec::with_capacity(count);
        for _ in 0..count {
            let len = r.len(MAX_HOLDER_LEN as u64)?;
            let name = core::str::from_utf8(r.take(len)?).map_err(|_| DecodeError::Invalid("holder is not UTF-8"))?;
            let until = r.time()?;
            let k = r.len(MAX_TRANCHES as u64)?;
            let mut tranches = Vec::with_capacity(k);
            for _ in 0..k {
                let (units, expires_at) = (r.varint()?, r.time()?);
                let marks = (0..n).map(|_| r.time()).collect::<Result<Vec<_>, _>>()?;
                tranches.push(Tranche { units, expires_at, marks });
            }
            holders.push(Holder { name: name.into(), until, tranches });
        }
        r.finish()?;
        self.state = state;
        self.holders = holders;
        Ok(())
    }
}
