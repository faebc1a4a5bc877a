//! Leased quota: one authority (a key's Durable Object) grants holders (isolates) slices of
//! the key's quota; each holder admits hits from its slice on its own and gives back what it
//! did not use. [`QuotaLedger`] is the authority's book, pure like the rest of the core: how
//! much to grant, what came back, what each slice may still be spent on. It never grants more
//! than a hit would be admitted with at the time of the grant, and a holder admits from a
//! slice only while its lease is live (at most the lease's `ttl` after the grant).
//!
//! **Two books.** A policy whose limits are all fixed windows aligned to the clock
//! (`fixed-window`, with or without `offset`) keeps a count per limit of the units granted in
//! its current window (`counters.rs`): a slice lapses at the end of the earliest current
//! window, so every unit a holder admits is admitted in the window that granted it, and the
//! hits admitted in a window never exceed its limit: **zero over-admission**, whatever the
//! number of holders and however their requests interleave. A lease renewed in the window
//! extends the whole slice (every unit of a window is alike).
//!
//! Every other policy (a sliding log, window or buckets, a token bucket, GCRA, a first-hit
//! window, several limits among which one of those) keeps the key's own state under the
//! policy (`charged.rs`): a grant is charged into it as one hit of its size at the grant's time
//! (as [`Policy::reserve`] charges an estimate), and units given back leave it by the core's
//! give-back rules ([`crate::reserve::give_back`], as a settlement's), which free only units
//! the limit still holds of that grant. Each grant is a tranche with its own lease, `ttl`
//! after the grant (never past the end of a fixed window's current window, first-hit ones
//! included); a later exchange does not extend it.
//!
//! **The bound of the charged book.** The charges that stand keep the algorithm's own bound
//! (as settled reservations do, docs/reserve.md), and a unit is admitted less than `ttl`
//! after the grant that charged it. So what the key admits in any interval `[a, b]` was
//! charged in `(a - ttl, b]`: the algorithm's bound over an interval `ttl` longer. Per
//! algorithm (`W` its window, `T` GCRA's emission interval, `ttl` the lease):
//!
//! | algorithm | admitted at most |
//! |---|---|
//! | `fixed-window`, clock-aligned or first-hit | its limit per window: zero over-admission (a tranche lapses at its window's end) |
//! | `gcra` | `burst + (b - a + ttl) / T` in any `[a, b]`: `rate × ttl` more than GCRA alone |
//! | `token-bucket` | `capacity + refill × ⌈(b - a + ttl) / interval⌉` in any `[a, b]`: the refills of one `ttl` more |
//! | `sliding-log` | `limit × (1 + ⌈ttl / W⌉)` in any window-long interval: the log's limit plus the units granted in the `ttl` before it |
//! | `sliding-window` | `limit × (1 + ⌈ttl / W⌉)` in any aligned window: its limit plus the units granted in the `ttl` before it |
//! | `sliding-buckets` | `limit × (1 + ⌈ttl / W⌉)` over any span of its buckets, likewise |
//!
//! With several limits, each keeps its row. A `ttl` short beside `W` (or beside `1 / rate`)
//! keeps the excess small: the units granted within one `ttl` before the interval.
//!
//! **A holder that vanishes.** A slice not given back counts as spent: a crashed holder costs
//! at most its slice. In the counters book that is in its window only (the next window starts
//! from zero); in the charged book its units count as hits at their grant for as long as the
//! algorithm counts a hit.
//!
//! **Sizing.** A holder asks for `need` units (the hit at hand) and `want` (the slice it would
//! like, from its recent demand: [`slice_want`], twice its demand's rate over the span the
//! slice can last, and it begins the next exchange when [`renewal_due`] says so: about one
//! exchange per lease at a steady rate). It gets `need`, and up to `want` while that stays
//! within an equal split of what is left to grant among the holders with a live lease
//! (itself included), never more than is left.
//!
//! **A holder's side.** [`SliceGrant::extends`] says whether the new lease covers every unit
//! the holder holds (the counters book) or only this grant (the charged book: the holder
//! keeps each grant's units with their own lease, spends the oldest first and gives back from
//! the newest, as the book takes back from the newest).

mod charged;
mod counters;
mod holder;
mod slice;

use alloc::vec::Vec;

use crate::decision::Decision;
use crate::error::DecodeError;
use crate::lease::{LeaseError, MAX_HOLDER_LEN};
use crate::limit_decisions::LimitDecisions;
use crate::policy::{LimitDecision, LimitRef, Policy, PolicyDecision};
use crate::quota::MAX_WINDOW;
use crate::time::Nanos;

use charged::Charged;
use counters::Counters;
pub use holder::{renewal_due, slice_want};
pub use slice::{Slice, SliceStep};

/// The most holders whose leases a ledger remembers: a new holder beyond that replaces the
/// lease that lapses soonest (whose units then stay counted as spent: never over-admission).
pub const MAX_HOLDERS: usize = 1024;

/// The most grants (tranches) of one holder the charged book remembers: a grant beyond that
/// makes the oldest leave the book (its units then stay counted as spent).
pub const MAX_TRANCHES: usize = 8;

/// One limit's current window: where it starts and how much of it is granted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WindowCount {
    /// The window's start.
    pub start: Nanos,
    /// Units granted in it and not given back (spent, or held by a live slice).
    pub granted: u64,
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
    /// When the holder's lease lapses: it admits from this grant (and, when `extends`, from
    /// everything it holds) only before then.
    pub expires_at: Nanos,
    /// Units left to grant now (the least over the limits): the most a hit would be admitted
    /// with.
    pub left: u64,
    /// The limit whose window has the least left: its index in the policy and its limit.
    pub binding: usize,
    /// That limit's units per window.
    pub limit: u64,
    /// When more units will be left to grant: the end of the earliest current window (the
    /// counters book), or when one unit more than `left` would be admitted (the charged book).
    pub window_end: Nanos,
    /// Whether `expires_at` is the lease of every unit the holder holds (the counters book)
    /// or of this grant's units only (the charged book: earlier grants keep their leases).
    pub extends: bool,
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
/// let mut ledger = QuotaLedger::for_policy(&policy);
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
///
/// Any other algorithm is charged a grant at its time (module docs), here GCRA at 10/s:
///
/// ```
/// use tollgate::quota_lease::QuotaLedger;
/// use tollgate::{Gcra, Nanos, Policy, Quota};
/// use tollgate::algorithms::AnyAlgorithm;
/// let policy = Policy::single(AnyAlgorithm::Gcra(Gcra::new(Quota::per_second(10).unwrap()).unwrap()));
/// let mut ledger = QuotaLedger::for_policy(&policy);
/// let (ttl, t) = (Nanos::from_millis(200), Nanos::from_secs(100));
/// let a = ledger.exchange("a", 0, 1, 6, ttl, t).unwrap();
/// assert_eq!((a.granted, a.left, a.extends, a.expires_at), (6, 4, false, t + ttl));
/// // a gives back the 6 at once: GCRA frees them all, as a settlement would.
/// assert_eq!(ledger.exchange("a", 6, 0, 0, ttl, t).unwrap().left, 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaLedger {
    book: Book,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Book {
    Counters(Counters),
    Charged(Charged),
}

impl QuotaLedger {
    /// The ledger of `policy`: the counters book when every limit is a clock-aligned fixed
    /// window, the charged book otherwise (module docs).
    pub fn for_policy(policy: &Policy) -> QuotaLedger {
        let book = match Counters::for_policy(policy) {
            Some(c) => Book::Counters(c),
            None => Book::Charged(Charged::new(policy)),
        };
        QuotaLedger { book }
    }

    /// Whether the ledger admits no more than each window's limit (the counters book: every
    /// limit a clock-aligned fixed window), rather than the bound of the charged book.
    pub fn counts_windows(&self) -> bool {
        matches!(self.book, Book::Counters(_))
    }

    /// Each limit's current window at `now` (the counters book; empty for the charged one).
    pub fn windows(&self, now: Nanos) -> Vec<WindowCount> {
        match &self.book {
            Book::Counters(c) => c.windows(now),
            Book::Charged(_) => Vec::new(),
        }
    }

    /// One request of `holder` at `now`: it gives back `give_back` units of its lease it did
    /// not use (at most what it holds), then gets `need` units and up to `want` (module docs),
    /// never more than is left to grant; the lease of what it gets (and, in the counters book,
    /// of all it holds) then lasts until `now + ttl` or the end of the earliest fixed window,
    /// whichever comes first. A grant of fewer than asked (even none) is not an error: it is
    /// all there is.
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
        Ok(match &mut self.book {
            Book::Counters(c) => c.exchange(holder, give_back, need, want, ttl, now),
            Book::Charged(c) => c.exchange(holder, give_back, need, want, ttl, now),
        })
    }

    /// What `holder` would find at `now` without asking for anything (a peek): what it
    /// holds on a live lease (`held`, `expires_at`; 0 and `now` when none) and what is left
    /// to grant, the ledger unchanged (`granted` and `returned` are 0).
    ///
    /// ```
    /// use tollgate::quota_lease::QuotaLedger;
    /// use tollgate::{Nanos, Policy, Quota, FixedWindow};
    /// use tollgate::algorithms::AnyAlgorithm;
    /// let policy = Policy::single(AnyAlgorithm::FixedWindow(FixedWindow::new(Quota::per_second(10).unwrap())));
    /// let mut ledger = QuotaLedger::for_policy(&policy);
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
        match &self.book {
            Book::Counters(c) => c.standing(holder, now),
            Book::Charged(c) => c.standing(holder, now),
        }
    }

    /// When everything the ledger holds stops mattering (the counters book: the end of the
    /// latest current window; the charged book: the key's state is fresh and every lease
    /// lapsed).
    pub fn expiry(&self) -> Nanos {
        match &self.book {
            Book::Counters(c) => c.expiry(),
            Book::Charged(c) => c.expiry(),
        }
    }

    /// Compact bytes of the ledger (for Durable Object storage): version 1 for the counters
    /// book, version 2 for the charged book.
    pub fn encode(&self) -> Vec<u8> {
        match &self.book {
            Book::Counters(c) => c.encode(),
            Book::Charged(c) => c.encode(),
        }
    }

    /// Restores what [`encode`](QuotaLedger::encode) wrote for a policy of the same limits.
    /// Bytes of the other book (the policy changed) are an error, as bytes of other limits.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        match &mut self.book {
            Book::Counters(c) => c.restore(bytes),
            Book::Charged(c) => c.restore(bytes),
        }
    }
}
