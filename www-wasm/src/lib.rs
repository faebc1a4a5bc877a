//! The playground's own wasm module (www/): `describeState`, the core's description of a
//! key's state (`tollgate::describe`) for the readout of the state that decided each hit.
//!
//! Not part of the npm package: the page loads it beside the package's lite module, so the
//! package's three modules and their size budgets (tests/js/size.test.mjs) stay as they are.
//! `scripts/build-www.sh` builds it into `www/vendor/tollgate-www/`. Its set-up (allocator,
//! memory export, start hook, panic handler), JS errors and the spec parser over JS values are
//! the crate `wasm-common/`, as for the package's modules.
#![no_std]

extern crate alloc;

// The shared bindings, under the names describe.rs uses (`crate::errors`, ...).
use tollgate_wasm_common::{errors, spec, time};

tollgate_wasm_common::allocator!();

mod describe;

pub use describe::describe_state;
