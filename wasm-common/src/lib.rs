//! What every wasm module of tollgate shares: the npm package's limiter module (`wasm/`, also
//! built as the lite module), its extras module (`wasm-extras/`) and the playground's module
//! (`www-wasm/`). Each of them depends on this crate and on the core, never on another
//! module's files.
//!
//! Only `module.rs` exports anything to JavaScript (`wasmMemory` and the start hook), and every
//! module wants exactly those: a dependency's `#[wasm_bindgen]` exports are linked into each
//! module that uses it, so nothing else here may carry `#[wasm_bindgen]`. The rest is plain
//! Rust the modules call: JS errors with the core's codes and fields, the core's spec parser
//! over JS values, time and cost conversions, and the decision buffer JavaScript reads.
#![no_std]

extern crate alloc;

pub mod errors;
#[cfg(feature = "concurrency")]
pub mod lease;
pub mod module;
pub mod msg;
pub mod out;
pub mod reserve;
pub mod spec;
pub mod time;
