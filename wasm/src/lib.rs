//! The wasm-bindgen layer of the npm package `tollgate`: the limiter's module (`RateLimiter`,
//! `Policy`, `KeyHandle`). The pacer, the lease holder and the Redis store's `Synced` are a
//! second module, `wasm-extras/`, which compiles this crate's `errors`, `out`, `spec` and
//! `time` files into itself (they export nothing to JavaScript).
//!
//! A thin adapter: every decision is the core crate's. Each exported class lives in its own
//! module; the JavaScript API users see is in `pkg-template/lib/` (see docs/js-layer.md).
//! Nothing panics across the boundary: bad input becomes a thrown `TypeError`/`RangeError`
//! naming the field and the value, and the limiter's state is left as it was.
#![no_std]

extern crate alloc;

mod batch;
mod cached_run;
mod core_messages;
mod errors;
mod key_store;
mod limiter;
mod msg;
mod out;
mod policy;
mod spec;
mod time;
mod validate_keys;

pub use limiter::Limiter;
pub use policy::Policy;

/// The module's allocator: talc instead of std's dlmalloc (smaller; see wasm/Cargo.toml).
/// Single-threaded wasm only, as this module is built.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

use wasm_bindgen::prelude::*;

/// The module's linear memory, so that JavaScript can read decisions written into a buffer
/// inside it without a copy (see `out.rs`).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// In a debug build (`--features debug`), report panics on the console. Release builds have no
/// hook: no code path is meant to panic.
#[wasm_bindgen(start)]
pub fn start() {
    #[cfg(feature = "debug")]
    console_error_panic_hook::set_once();
}
