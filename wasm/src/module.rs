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
