#![no_std]
#![doc = include_str!("../docs/crate.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod access;
pub mod answer;
pub mod algorithm;
pub mod algorithms;
pub mod blocked;
pub mod calendar;
pub mod codec;
#[cfg(feature = "concurrency")]
pub mod concurrency;
pub mod counted;
pub mod decide;
pub mod decision;
pub mod describe;
pub mod error;
pub mod guard;
pub mod headers;
pub mod ip_key;
pub mod keyed;
pub mod layout;
pub mod lease;
pub mod lease_holder;
pub mod limit_decisions;
pub mod limiter;
pub mod merge;
pub mod messages;
pub mod pacer;
pub mod penalty;
pub mod policy;
pub mod policy_codec;
pub mod policy_state;
pub mod quota;
pub mod quota_lease;
pub mod reconfigure;
pub mod reserve;
#[cfg(feature = "std")]
pub mod sharded;
pub mod spec;
pub mod store;
pub mod store_protocol;
pub mod sync;
pub mod sync_node;
pub mod sync_queue;
pub mod text;
pub mod time;

pub use algorithm::Algorithm;
pub use algorithms::{
    AnyAlgorithm, AnyState, FixedWindow, FixedWindowFirstHit, Gcra, Kind, LimitSpec, SlidingBuckets, SlidingLog,
    SlidingWindow, SlidingWindowState, TokenBucket,
};
pub use decision::{Decision, Outcome};
pub use error::{CheckError, ConfigError, DecodeError};
pub use keyed::KeyedLimiter;
pub use limiter::Limiter;
pub use policy::{Limit, Policy, PolicyDecision, PolicyState};
pub use quota::Quota;
pub use store::{MemoryStore, Store};
pub use time::Nanos;
