//! What each wasm module of the package needs once, whatever it exports: its allocator, its
//! memory for the JS layer, and the start hook. `wasm/` and `wasm-extras/` both compile this
//! file (the extras through `#[path]`), so each module has its own copy of these exports.

use wasm_bindgen::prelude::*;

/// The module's allocator: talc instead of std's dlmalloc (smaller; see wasm/Cargo.toml).
/// Single-threaded wasm only, as this module is built.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// The module's linear memory, so that JavaScript can read decisions written into a buffer
/// inside it without a copy (see `out.rs`, `lib/decision.js`).
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

/// Without the `std` feature (a release build) the module links no std, so it answers a panic
/// itself: it traps at once, as std's handler does under `panic = "abort"`, but without std's
/// panic machinery and the `core::fmt` code it keeps for messages nobody would read (most of
/// the 2.6 KB gzipped the limiter's module lost with it; docs/benchmarks.md). No panic is
/// meant to happen: bad input is a thrown error, not a panic.
#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
