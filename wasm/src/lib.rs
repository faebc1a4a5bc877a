//! The wasm-bindgen layer of the npm package `tollgate`: the limiter's module (`RateLimiter`,
//! `Policy`, `KeyHandle`). The pacer, the lease holder and the Redis store's `Synced` are a
//! second module, `wasm-extras/`; what both share (errors, the spec parser over JS values,
//! time, the decision buffer, the module set-up) is the crate `wasm-common/`. Built without its default
//! `full` feature this crate is the lite module of `tollgate/lite` (one limit, one key per
//! call, no key handles or batches; docs/js-layer.md, "The lite module").
//!
//! A thin adapter: every decision is the core crate's. Each exported class lives in its own
//! module; the JavaScript API users see is in `pkg-template/lib/` (see docs/js-layer.md).
//! Nothing panics across the boundary: bad input becomes a thrown `TypeError`/`RangeError`
//! naming the field and the value, and the limiter's state is left as it was.
#![no_std]
// The lite module is a subset of this source: what only the full module calls is dead there.
// The full build (the default) still reports dead code.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

extern crate alloc;
#[cfg(feature = "full")]
extern crate tollgate_wasm_extras;

#[cfg(feature = "full")]
mod batch;
#[cfg(feature = "full")]
mod batch_out;
#[cfg(feature = "full")]
mod cached_run;
mod controls;
mod duration;
mod headers;
#[cfg(feature = "full")]
mod ip_key;
#[cfg(test)]
mod key_rules_tests;
mod key_store;
#[cfg(feature = "full")]
mod leases;
#[cfg(feature = "full")]
mod ledgers;
mod limiter;
mod policy;
mod policy_states;
mod record_words;
#[cfg(feature = "full")]
mod reservations;
mod slab;
#[cfg(feature = "full")]
mod validate_keys;

// The bindings every module shares, under the names the files here use (`crate::errors`, ...).
use tollgate_wasm_common::{errors, out, spec, time};

tollgate_wasm_common::allocator!();

pub use controls::Controls;
pub use limiter::Limiter;
pub use policy::Policy;

/// What the lite module (built without the `full` feature) answers a policy of several limits
/// or a penalty (`limits` or a penalty option given: `wasm-common`'s `build_one_limit`).
#[cfg(not(feature = "full"))]
const LITE_ONE_LIMIT: &str =
    "tollgate/lite decides by one limit, without blockDuration; for several or a penalty, use RateLimiter from \"tollgate\" or \"tollgate/limiter\"";
