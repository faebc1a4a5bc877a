//! The playground's own wasm module (www/): `describeState`, the core's description of a
//! key's state (`tollgate::describe`) for the readout of the state that decided each hit.
//!
//! Not part of the npm package: the page loads it beside the package's lite module, so the
//! package's three modules and their size budgets (tests/js/size.test.mjs) stay as they are.
//! `scripts/build-www.sh` builds it into `www/vendor/tollgate-www/`. It reuses the helpers of
//! `wasm/src/` (errors, the spec parser over JS values, time) as the extras module does.
#![no_std]

extern crate alloc;

#[path = "../../wasm/src/core_messages.rs"]
mod core_messages;
#[allow(dead_code)]
#[path = "../../wasm/src/errors.rs"]
mod errors;
#[path = "../../wasm/src/module.rs"]
mod module;
#[allow(dead_code)]
#[path = "../../wasm/src/msg.rs"]
mod msg;
#[allow(dead_code)]
#[path = "../../wasm/src/spec.rs"]
mod spec;
#[allow(dead_code)]
#[path = "../../wasm/src/time.rs"]
mod time;

mod describe;

pub use describe::describe_state;
