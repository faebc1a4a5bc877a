//! Every algorithm, one file each. Start with the module docs of the one you need: each
//! states its rule, its guarantee, and a pros and cons paragraph.
//!
//! | algorithm | file | state | guarantee in any interval of one window |
//! |---|---|---|---|
//! | fixed window, clock-aligned | [`fixed_window`] | 16 B | 2 x limit |
//! | fixed window, first hit | [`fixed_window_first_hit`] | 16 B | 2 x limit |
//! | sliding log | [`sliding_log`] | 16 B per hit | limit (exact) |
//! | sliding window counter | [`sliding_window`] | 24 B | < 2 x limit, limit per aligned window |
//! | sliding window, sub-buckets | [`sliding_buckets`] | 8 B per bucket | limit + one bucket |
//! | token bucket | [`token_bucket`] | 16 B | capacity + refills |
//! | GCRA | [`gcra`] | 8 B | burst + window / T |
//! | concurrency (feature `concurrency`) | [`concurrency`] | 16 B per holder | limit live leases at every instant |

pub mod alignment;
pub mod any;
#[cfg(feature = "concurrency")]
pub mod concurrency;
pub mod fixed_window;
pub mod fixed_window_first_hit;
pub mod gcra;
pub mod sliding_buckets;
pub mod sliding_log;
pub mod sliding_window;
pub mod token_bucket;

pub use alignment::Alignment;
#[cfg(feature = "concurrency")]
pub use concurrency::{Concurrency, ConcurrencyState, HeldLease, Ticket, MAX_CONCURRENCY, MAX_LEASE_TTL, MAX_QUEUE};
pub use any::{AnyAlgorithm, AnyState, Kind, LimitSpec};
pub use fixed_window::{FixedWindow, FixedWindowState};
pub use fixed_window_first_hit::{FirstHitState, FixedWindowFirstHit};
pub use gcra::{Gcra, GcraState};
pub use sliding_buckets::{SlidingBuckets, SlidingBucketsState, MAX_BUCKETS};
pub use sliding_log::{LogEntry, SlidingLog, SlidingLogState, MAX_LOG_LIMIT};
pub use sliding_window::{SlidingWindow, SlidingWindowState};
pub use token_bucket::{TokenBucket, TokenBucketState};
