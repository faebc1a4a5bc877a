//! A fixed-size state read from and written to the words of its record in the key store
//! (`key_store.rs`), as the concrete algorithm's own state type: what lets a check call the
//! algorithm itself rather than go through `AnyState` and `AnyAlgorithm` (`Limiter::count_in`,
//! the batches' loop in `cached_run.rs`), and, for the rest of the store, as an `AnyState`.

use tollgate::algorithms::{AnyState, FirstHitState, FixedWindowState, GcraState, TokenBucketState};
use tollgate::{Kind, Nanos, SlidingWindowState};

/// A fixed-size state as the little-endian words of its record.
pub(crate) trait Words: Sized {
    fn read(w: &[u8]) -> Self;
    fn write(&self, w: &mut [u8]);
}

/// The words a record keeps for a state of `kind`; `None` for the algorithms whose states
/// vary in size (the sliding log and sliding buckets).
pub(crate) fn width(kind: Kind) -> Option<usize> {
    match kind {
        Kind::Gcra => Some(1),
        Kind::TokenBucket | Kind::FixedWindow | Kind::FixedWindowFirstHit => Some(2),
        Kind::SlidingWindow => Some(3),
        _ => None,
    }
}

/// The state of `kind` in the words `w`.
pub(crate) fn read_any(kind: Kind, w: &[u8]) -> AnyState {
    match kind {
        Kind::TokenBucket => AnyState::TokenBucket(Words::read(w)),
        Kind::FixedWindow => AnyState::FixedWindow(Words::read(w)),
        Kind::FixedWindowFirstHit => AnyState::FixedWindowFirstHit(Words::read(w)),
        Kind::SlidingWindow => AnyState::SlidingWindow(Words::read(w)),
        _ => AnyState::Gcra(Words::read(w)),
    }
}

/// Writes `s` into the words `w` (a state `width` gives words for).
pub(crate) fn write_any(s: &AnyState, w: &mut [u8]) {
    match s {
        AnyState::Gcra(g) => g.write(w),
        AnyState::TokenBucket(t) => t.write(w),
        AnyState::FixedWindow(f) => f.write(w),
        AnyState::FixedWindowFirstHit(f) => f.write(w),
        AnyState::SlidingWindow(s) => s.write(w),
        // Never kept in words (`width` is `None` for them).
        AnyState::SlidingLog(_) | AnyState::SlidingBuckets(_) => {}
        #[cfg(feature = "full")]
        AnyState::Concurrency(_) => {}
    }
}

#[inline(always)]
pub(crate) fn word(w: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&w[8 * i..8 * i + 8]);
    u64::from_le_bytes(b)
}

#[inline(always)]
pub(crate) fn put(w: &mut [u8], i: usize, v: u64) {
    w[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
}

impl Words for GcraState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        GcraState { tat: Nanos::new(word(w, 0)) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.tat.as_nanos());
    }
}

impl Words for TokenBucketState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        TokenBucketState { tokens: word(w, 0), anchor: Nanos::new(word(w, 1)) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.tokens);
        put(w, 1, self.anchor.as_nanos());
    }
}

impl Words for FixedWindowState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        FixedWindowState { start: Nanos::new(word(w, 0)), count: word(w, 1) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.start.as_nanos());
        put(w, 1, self.count);
    }
}

impl Words for FirstHitState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        FirstHitState { start: Nanos::new(word(w, 0)), count: word(w, 1) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.start.as_nanos());
        put(w, 1, self.count);
    }
}

impl Words for SlidingWindowState {
    #[inline(always)]
    fn read(w: &[u8]) -> Self {
        SlidingWindowState { start: Nanos::new(word(w, 0)), current: word(w, 1), previous: word(w, 2) }
    }
    #[inline(always)]
    fn write(&self, w: &mut [u8]) {
        put(w, 0, self.start.as_nanos());
        put(w, 1, self.current);
        put(w, 2, self.previous);
    }
}
