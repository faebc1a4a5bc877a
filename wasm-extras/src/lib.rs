//! The npm package's second wasm module: `Pacer`, `LeaseHolder`, and for the Redis store
//! `StorePolicy`, `BlockedCache` and `Synced`.
//!
//! Kept apart from the limiter's module (`wasm/`) so that a user of `RateLimiter`, `Policy`
//! and `KeyHandle` does not load the pacer, the lease rules and the sync machinery (issue 3,
//! wasm size; docs/benchmarks.md). The JavaScript layer instantiates it on first use where
//! that can be synchronous (docs/js-layer.md).
//!
//! The helpers both modules need (errors, time conversions, the decision buffer, building a
//! policy) are the files of `wasm/src/`, compiled into each module: they export nothing to
//! JavaScript, so no export of one module appears in the other, and the limiter's module is
//! built exactly as before (its crate and profile are unchanged).
#![no_std]

extern crate alloc;

// Not every shared helper is used here (e.g. `decode_error`, `Out::write_one`).
#[path = "../../wasm/src/core_messages.rs"]
mod core_messages;
#[allow(dead_code)]
#[path = "../../wasm/src/errors.rs"]
mod errors;
#[path = "../../wasm/src/module.rs"]
mod module;
#[path = "../../wasm/src/msg.rs"]
mod msg;
#[allow(dead_code)]
#[path = "../../wasm/src/out.rs"]
mod out;
#[path = "../../wasm/src/spec.rs"]
mod spec;
#[path = "../../wasm/src/time.rs"]
mod time;

mod blocked_cache;
mod lease_holder;
mod pacer;
mod store_policy;
mod synced;

pub use blocked_cache::BlockedCache;
pub use lease_holder::LeaseHolder;
pub use pacer::Pacer;
pub use store_policy::StorePolicy;
pub use synced::Synced;
