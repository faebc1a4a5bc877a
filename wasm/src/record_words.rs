//! A fixed-size state read from and written to the words of its record in the key store
//! (`key_store.rs`), as the concrete algorithm's own state type: what lets a check call the
//! algorithm itself rather than go through `AnyState` and `AnyAlgorithm` (`check_entry`, the
//! batches' loop in `cached_run.rs`). The layout is `key_store::to_words`'s.

use tollgate::algorithms::{FirstHitState, FixedWindowState, GcraState, TokenBucketState};
use tollgate::{Nanos, SlidingWindowState};

/// A fixed-size state as the little-endian words of its record (the layout of `to_words`).
pub(crate) trait Words: Sized {
    fn read(w: &[u8]) -> Self;
    fn write(&self, w: &mut [u8]);
}

#[inline(always)]
fn word(w: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&w[8 * i..8 * i + 8]);
    u64::from_le_bytes(b)
}

#[inline(always)]
fn put(w: &mut [u8], i: usize, v: u64) {
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
