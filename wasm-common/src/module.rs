//! What each wasm module needs once, whatever else it exports: its memory for the JS layer,
//! the start hook and the panic handler, and its allocator ([`allocator!`]). Every module
//! depends on this crate, so each links its own copy of these exports (and no module may
//! define them again).

use wasm_bindgen::prelude::*;

#[doc(hidden)]
pub use talc;

/// Declares the module's allocator: talc instead of std's dlmalloc (smaller; see this crate's
/// Cargo.toml). Single-threaded wasm only, as the modules are built. A macro rather than a
/// static here: the allocator's generic code is compiled in the crate that declares it, so
/// each module compiles its allocator at its own opt-level (the limiter's at 3, where its hot
/// path allocates), as it compiles the rest of its own code.
#[macro_export]
macro_rules! allocator {
    () => {
        #[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
        #[global_allocator]
        static ALLOCATOR: $crate::module::talc::wasm::WasmDynamicTalc =
            $crate::module::talc::wasm::new_wasm_dynamic_allocator();
    };
}

/// The module's linear memory, so that JavaScript can read decisions written into a buffer
/// inside it without a copy (see `out.rs`, `lib/limiter/decision.js`).
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
/// panic machinery and the `core::fmt` code it keeps for messages nobody would read
/// (docs/benchmarks.md, wasm size). No panic is meant to happen: bad input is a thrown error,
/// not a panic.
#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
