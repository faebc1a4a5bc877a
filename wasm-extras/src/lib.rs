//! The npm package's second wasm module: `Pacer`, `LeaseHolder`, and for the Redis store
//! `StorePolicy`, `StoreRetry` (and its `SwapRun`), `BlockedCache` and `Synced`; `countedDecision`
//! for the stores that count hits themselves (express-rate-limit's).
//!
//! Kept apart from the limiter's module (`wasm/`) so that a user of `RateLimiter`, `Policy`
//! and `KeyHandle` does not load the pacer, the lease rules and the sync machinery (sizes in
//! docs/benchmarks.md). The JavaScript layer instantiates it on first use where
//! that can be synchronous (docs/js-layer.md).
//!
//! The helpers every module needs (errors, time conversions, the decision buffer, building a
//! policy, the module set-up) are the crate `wasm-common/`, which exports only the set-up every
//! module has, so no export of one module appears in another.
#![no_std]

extern crate alloc;

// The shared bindings, under the names the files here use (`crate::errors`, ...).
use tollgate_wasm_common::{errors, msg, out, spec, time};


mod answer;
mod blocked_cache;
mod counted;
mod lease_holder;
mod pacer;
mod store_lease;
mod store_policy;
mod store_reserve;
mod store_retry;
mod synced;

pub use blocked_cache::BlockedCache;
pub use lease_holder::LeaseHolder;
pub use pacer::Pacer;
pub use store_policy::StorePolicy;
pub use store_retry::{StoreRetry, SwapRun};
pub use counted::{counted_decision, unknown_policy_headers};
pub use synced::Synced;
