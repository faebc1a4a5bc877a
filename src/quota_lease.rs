//! Leased quota: one authority (a key's Durable Object) grants holders (isolates) slices of
//! the current window's quota; each holder admits hits from its slice on its own and gives
//! back what it did not use. [`QuotaLedger`] is the authority's book, pure like the rest of
//! the core: how much to grant, what came back, what each window holds.
//!
//! **The bound.** The ledger grants at most a window's limit in that window, counting a unit
//! as used from the moment it is granted until it comes back. A slice lapses at the end of its
//! lease, never later than the end of the earliest current window of the policy's limits, and
//! a holder admits from a slice only while it is live: every unit a holder admits is admitted
//! in the window that granted it. So the hits admitted in any window never exceed its limit:
//! zero over-admission, whatever the number of holders and however their requests interleave.
//!
//! **What the ledger takes.** Fixed windows aligned to the clock (`fixed-window`, with or
//! without `offset`), one or several: their windows are the same for every holder, so a
//! slice granted in a window is spent in it. The others are refused by
//! [`QuotaLedger::for_policy`]: a sliding window (log, buckets, weighted) counts a hit until a
//! window after the hit, so a unit granted at `t` and spent later would count from `t` and
//! leave the window too early (over-admission up to a slice per lease); a token bucket or
//! GCRA refills continuously, so a slice granted ahead is capacity taken ahead; a first-hit
//! window starts per key, which is one holder's clock. Those policies stay exact or synced.
//!
//! **A holder that vanishes.** A slice not given back counts as spent: a crashed holder costs
//! at most its slice, in that window only (the slice lapses at the lease's end, and with it
//! the window's count; the next window starts from zero).
//!
//! **Sizing.** A holder asks for `need` units (the hit at hand) and `want` (the slice it would
//! like, from its recent demand). It gets `need`, and up to `want` while that stays within an
//! equal split of what the window has left among the holders with a live lease (itself
//! included), never more than is left.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::algorithm::Algorithm;
use crate::algorithms::alignment::Alignment;
use crate::algorithms::AnyAlgorithm;
use crate::decision::Decision;
use crate::error::DecodeError;
use crate::lease::{LeaseError, MAX_HOLDER_LEN};
use crate::limit_decisions::LimitDecisions;
use crate::policy::{LimitDecision, LimitRef, Policy, PolicyDecision};
use crate::quota::MAX_WINDOW;
use crate::time::Nanos;

/// The most holders whose leases a ledger remembers: a new holder beyond that replaces the
/// lease that lapses soonest (whose units then stay counted as spent: never over-admission).
pub const MAX_HOLDERS: usize = 1024;

/// Why a policy cannot be leased (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Unleasable {
    /// The index of the first limit that is not a clock-aligned fixed window.
    pub limit: usize,
}

/// One limit's current window: where it starts and how much of it is granted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WindowCount {
    /// The window's start.
    pub start: Nanos,
    /// Units granted in it and not given back (spent, or held by a live slice).
    pub granted: u64,
}

/// A holder's live lease.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Slice {
    holder: Box<str>,
    /// Units granted and not given back.
    held: u64,
    /// When the lease lapses.
    expires_at: Nanos,
}

/// What one [`exchange`](QuotaLedger::exchange) leaves the holder with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SliceGrant {
    /// Units granted by this exchange.
    pub granted: u64,
    /// Units this exchange took back.
    pub returned: u64,
    /// Units of the holder's lease not given back (the most it may give back later).
    pub held: u64,
    /// When the holder's lease lapses: it admits from its slice only before then.
    pub expires_at: Nanos,
    /// Units the windows have left to grant (the least over the limits).
    pub left: u64,
    /// The limit whose window has the least left: its index in the policy and its limit.
    pub binding: usize,
    /// That limit's units per window.
    pub limit: u64,
    /// When the earliest current window ends.
    pub window_end: Nanos,
}

/// A holder's answer to a hit it decided from its slice at `now`: `allowed` or not, with the
/// figures of the binding limit (`binding`, whose windows allow `limit` units) as the holder
/// sees them: `remaining` is its own slice plus what the windows had left at its last
/// exchange, and a denied hit may come back when the earliest window ends (`window_end`).
pub fn local_decision(
    allowed: bool,
    binding: usize,
    limit: u64,
    remaining: u64,
    window_end: Nanos,
    now: Nanos,
) -> PolicyDecision {
    let wait = window_end.saturating_sub(now);
    let decision = Decision {
        allowed,
        limit,
        remaining,
        reset_at: window_end,
        retry_after: if allowed { Nanos::ZERO } else { wait },
        next_unit_after: if remaining > 0 { Nanos::ZERO } else { wait },
    };
    let at = LimitRef { key: 0, limit: binding };
    PolicyDecision {
        allowed,
        decision,
        binding: at,
        limits: LimitDecisions::one(LimitDecision { at, decision }),
        penalty: false,
    }
}

/// The grant ledger of one key (module docs).
///
/// ```
/// use tollgate::quota_lease::QuotaLedger;
/// use tollgate::{Nanos, Policy, Quota, FixedWindow};
/// use tollgate::algorithms::AnyAlgorithm;
/// let policy = Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(10).unwrap())));
/// let mut ledger = QuotaLedger::for_policy(&policy).unwrap();
/// let (ttl, t) = (Nanos::from_millis(500), Nanos::from_secs(100));
/// // a asks for a slice of 8 while alone and gets it; b then gets its half of the 2 left.
/// let a = ledger.exchange("a", 0, 1, 8, ttl, t).unwrap();
/// let b = ledger.exchange("b", 0, 1, 8, ttl, t).unwrap();
/// assert_eq!((a.granted, b.granted, b.left), (8, 1, 1));
/// // a spent 3 and gives 5 back; b's half of the 6 left is 3.
/// assert_eq!(ledger.exchange("a", 5, 0, 0, ttl, t).unwrap().held, 3);
/// assert_eq!(ledger.exchange("b", 0, 1, 8, ttl, t).unwrap().granted, 3);
/// // The window never grants more than 10; the next second starts from zero.
/// assert_eq!(ledger.exchange("a", 0, 8, 8, ttl, t).unwrap().granted, 3);
/// assert_eq!(ledger.exchange("a", 0, 1, 8, ttl, t + Nanos::from_secs(1)).unwrap().granted, 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaLedger {
    /// Each limit's units per window and window boundaries.
    limits: Vec<(u64, Alignment)>,
    /// Each limit's current window.
    windows: Vec<WindowCount>,
    slices: Vec<Slice>,
}

impl QuotaLedger {
    /// The ledger of `policy`, whose limits must all be clock-aligned fixed windows.
    pub fn for_policy(policy: &Policy) -> Result<QuotaLedger, Unleasable> {
        let mut limits = Vec::new();
        for (i, l) in policy.limits().iter().enumerate() {
            match l.algorithm() {
                AnyAlgorithm::FixedWindow(fw) => limits.push((fw.limit(), fw.alignment())),
                _ => return Err(Unleasable { limit: i }),
            }
        }
        let windows = limits.iter().map(|_| WindowCount { start: Nanos::ZERO, granted: 0 }).collect();
        Ok(QuotaLedger { limits, windows, slices: Vec::new() })
    }

    /// Moves every limit to its window at `now` (a clock that went back stays in the stored
    /// window) and forgets lapsed leases (their units stay counted in their window).
    fn roll(&mut self, now: Nanos) {
        for ((_, align), w) in self.limits.iter().zip(self.windows.iter_mut()) {
            let start = align.start_of(now);
            if start > w.start {
                *w = WindowCount { start, granted: 0 };
            }
        }
        self.slices.retain(|s| s.expires_at > now);
    }

    /// Each limit's current window at `now`.
    pub fn windows(&self, now: Nanos) -> Vec<WindowCount> {
        let mut rolled = self.clone();
        rolled.roll(now);
        rolled.windows
    }

    /// The end of the earliest current window (after [`roll`](Self::roll)).
    fn window_end(&self) -> Nanos {
        self.limits.iter().zip(&self.windows).map(|((_, a), w)| a.end_of(w.start)).min().unwrap_or(Nanos::ZERO)
    }

    /// (units left, that limit's index, its limit): the limit with the least left.
    fn left(&self) -> (u64, usize, u64) {
        self.limits
            .iter()
            .zip(&self.windows)
            .enumerate()
            .map(|(i, (&(limit, _), w))| (limit.saturating_sub(w.granted), i, limit))
            .min()
            .unwrap_or((0, 0, 0))
    }

    /// One request of `holder` at `now`: it gives back `give_back` units of its lease it did
    /// not use (at most what it holds), then gets `need` units and up to `want` (module docs),
    /// never more than the windows have left; its lease (all it holds) then lasts until
    /// `now + ttl` or the end of the earliest window, whichever comes first. A grant of
    /// fewer than asked (even none) is not an error: it is all there is.
    pub fn exchange(
        &mut self,
        holder: &str,
        give_back: u64,
        need: u64,
        want: u64,
        ttl: Nanos,
        now: Nanos,
    ) -> Result<SliceGrant, LeaseError> {
        if holder.is_empty() || holder.len() > MAX_HOLDER_LEN {
            return Err(LeaseError::BadHolder);
        }
        if ttl == Nanos::ZERO || ttl > MAX_WINDOW {
            return Err(LeaseError::BadTtl);
        }
        self.roll(now);
        let mine = self.slices.iter().position(|s| &*s.holder == holder);
        let returned = mine.map_or(0, |i| give_back.min(self.slices[i].held));
        for w in &mut self.windows {
            w.granted -= returned;
        }
        let live = self.slices.len() + usize::from(mine.is_none());
        let (left, _, _) = self.left();
        let split = left.div_ceil(live as u64);
        let granted = need.max(want.min(split)).min(left);
        for w in &mut self.windows {
            w.granted += granted;
        }
        let expires_at = (now + ttl).min(self.window_end());
        let held = match mine {
            Some(i) => {
                let s = &mut self.slices[i];
                s.held = s.held - returned + granted;
                s.expires_at = expires_at;
                s.held
            }
            None => {
                let new = Slice { holder: holder.into(), held: granted, expires_at };
                if self.slices.len() < MAX_HOLDERS {
                    self.slices.push(new);
                } else if let Some(soonest) = self.slices.iter_mut().min_by_key(|s| s.expires_at) {
                    *soonest = new;
                }
                granted
            }
        };
        let (left, binding, limit) = self.left();
        Ok(SliceGrant { granted, returned, held, expires_at, left, binding, limit, window_end: self.window_end() })
    }

    /// What `holder` would find at `now` without asking for anything (a peek): what it
    /// holds on a live lease (`held`, `expires_at`; 0 and `now` when none) and what the
    /// windows have left to grant, the ledger unchanged (`granted` and `returned` are 0).
    ///
    /// ```
    /// use tollgate::quota_lease::QuotaLedger;
    /// use tollgate::{Nanos, Policy, Quota, FixedWindow};
    /// use tollgate::algorithms::AnyAlgorithm;
    /// let policy = Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(10).unwrap())));
    /// let mut ledger = QuotaLedger::for_policy(&policy).unwrap();
    /// let (ttl, t) = (Nanos::from_millis(500), Nanos::from_secs(100));
    /// ledger.exchange("a", 0, 4, 4, ttl, t).unwrap();
    /// let before = ledger.clone();
    /// let (a, b) = (ledger.standing("a", t), ledger.standing("b", t));
    /// assert_eq!((a.held, a.left, b.held, b.left, a.limit), (4, 6, 0, 6, 10));
    /// assert_eq!(ledger, before);
    /// // a's lease lapsed: its slice stays spent in this window.
    /// assert_eq!(ledger.standing("a", t + ttl).held, 0);
    /// assert_eq!(ledger.standing("a", t + Nanos::from_secs(1)).left, 10);
    /// ```
    pub fn standing(&self, holder: &str, now: Nanos) -> SliceGrant {
        let mut rolled = self.clone();
        rolled.roll(now);
        let mine = rolled.slices.iter().find(|s| &*s.holder == holder);
        let (held, expires_at) = mine.map_or((0, now), |s| (s.held, s.expires_at));
        let (left, binding, limit) = rolled.left();
        SliceGrant { granted: 0, returned: 0, held, expires_at, left, binding, limit, window_end: rolled.window_end() }
    }

    /// When everything the ledger holds stops mattering: the end of the latest current window.
    pub fn expiry(&self) -> Nanos {
        self.limits.iter().zip(&self.windows).map(|((_, a), w)| a.end_of(w.start)).max().unwrap_or(Nanos::ZERO)
    }

    /// Compact bytes of the windows and leases (for Durable Object storage).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = alloc::vec![1u8];
        crate::codec::put(&mut out, self.windows.len() as u64);
        for w in &self.windows {
            crate::codec::put(&mut out, w.start.as_nanos());
            crate::codec::put(&mut out, w.granted);
        }
        crate::codec::put(&mut out, self.slices.len() as u64);
        for s in &self.slices {
            crate::codec::put(&mut out, s.held);
            crate::codec::put(&mut out, s.expires_at.as_nanos());
            crate::codec::put(&mut out, s.holder.len() as u64);
            out.extend_from_slice(s.holder.as_bytes());
        }
        out
    }

    /// Restores what [`encode`](QuotaLedger::encode) wrote for a policy of the same limits.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = crate::codec::Reader::new(bytes);
        let version = r.byte()?;
        if version != 1 {
            return Err(DecodeError::UnknownVersion(version));
        }
        let n = r.len(crate::policy::MAX_LIMITS as u64)?;
        if n != self.limits.len() {
            return Err(DecodeError::LimitCountMismatch { expected: self.limits.len(), found: n });
        }
        let mut windows = Vec::with_capacity(n);
        for _ in 0..n {
            let start = r.time()?;
            windows.push(WindowCount { start, granted: r.varint()? });
        }
        let count = r.len(MAX_HOLDERS as u64)?;
        let mut slices = Vec::with_capacity(count);
        for _ in 0..count {
            let held = r.varint()?;
            let expires_at = r.time()?;
            let len = r.len(MAX_HOLDER_LEN as u64)?;
            let holder = core::str::from_utf8(r.take(len)?).map_err(|_| DecodeError::Invalid("holder is not UTF-8"))?;
            slices.push(Slice { holder: holder.into(), held, expires_at });
        }
        r.finish()?;
        // Held units are part of every window's grant: a ledger that says otherwise is corrupt.
        let held = slices.iter().fold(0u64, |sum, s| sum.saturating_add(s.held));
        if windows.iter().any(|w| w.granted < held) {
            return Err(DecodeError::Invalid("leases hold more than the windows granted"));
        }
        self.windows = windows;
        self.slices = slices;
        Ok(())
    }
}
