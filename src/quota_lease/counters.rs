//! The book of a policy whose limits are all clock-aligned fixed windows: a count per
//! limit of the units granted in its current window (the module docs of
//! [`crate::quota_lease`]: zero over-admission).

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{SliceGrant, WindowCount, MAX_HOLDERS};
use crate::algorithm::Algorithm;
use crate::algorithms::alignment::Alignment;
use crate::algorithms::AnyAlgorithm;
use crate::codec::{put, Reader};
use crate::error::DecodeError;
use crate::lease::MAX_HOLDER_LEN;
use crate::policy::Policy;
use crate::time::Nanos;

/// The version byte of the bytes [`Counters::encode`] writes.
pub(super) const VERSION: u8 = 1;

/// A holder's live lease.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Slice {
    holder: Box<str>,
    /// Units granted and not given back.
    held: u64,
    /// When the lease lapses.
    expires_at: Nanos,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Counters {
    /// Each limit's units per window and window boundaries.
    limits: Vec<(u64, Alignment)>,
    /// Each limit's current window.
    windows: Vec<WindowCount>,
    slices: Vec<Slice>,
}

impl Counters {
    /// The book of `policy` when its limits are all clock-aligned fixed windows.
    pub(super) fn for_policy(policy: &Policy) -> Option<Counters> {
        let mut limits = Vec::new();
        for l in policy.limits() {
            match l.algorithm() {
                AnyAlgorithm::FixedWindow(fw) => limits.push((fw.limit(), fw.alignment())),
                _ => return None,
            }
        }
        let windows = limits.iter().map(|_| WindowCount { start: Nanos::ZERO, granted: 0 }).collect();
        Some(Counters { limits, windows, slices: Vec::new() })
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
    pub(super) fn windows(&self, now: Nanos) -> Vec<WindowCount> {
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
        let window_end = self.window_end();
        SliceGrant { granted, returned, held, expires_at, left, binding, limit, window_end, extends: true }
    }

    /// What `holder` would find at `now` without asking for anything (a peek): what it
    /// holds on a live lease (`held`, `expires_at`; 0 and `now` when none) and what the
    /// windows have left to grant, the book unchanged (`granted` and `returned` are 0).
    pub(super) fn standing(&self, holder: &str, now: Nanos) -> SliceGrant {
        let mut rolled = self.clone();
        rolled.roll(now);
        let mine = rolled.slices.iter().find(|s| &*s.holder == holder);
        let (held, expires_at) = mine.map_or((0, now), |s| (s.held, s.expires_at));
        let (left, binding, limit) = rolled.left();
        let window_end = rolled.window_end();
        SliceGrant { granted: 0, returned: 0, held, expires_at, left, binding, limit, window_end, extends: true }
    }

    /// When everything the ledger holds stops mattering: the end of the latest current window.
    pub(super) fn expiry(&self) -> Nanos {
        self.limits.iter().zip(&self.windows).map(|((_, a), w)| a.end_of(w.start)).max().unwrap_or(Nanos::ZERO)
    }

    /// Compact bytes of the windows and leases (for Durable Object storage).
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = alloc::vec![VERSION];
        put(&mut out, self.windows.len() as u64);
        for w in &self.windows {
            put(&mut out, w.start.as_nanos());
            put(&mut out, w.granted);
        }
        put(&mut out, self.slices.len() as u64);
        for s in &self.slices {
            put(&mut out, s.held);
            put(&mut out, s.expires_at.as_nanos());
            put(&mut out, s.holder.len() as u64);
            out.extend_from_slice(s.holder.as_bytes());
        }
        out
    }

    /// Restores what [`encode`](QuotaLedger::encode) wrote for a policy of the same limits.
    pub(super) fn restore(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader::new(bytes);
        let version = r.byte()?;
        if version != VERSION {
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
