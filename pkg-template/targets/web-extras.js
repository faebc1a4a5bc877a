// Browsers and bundlers: the extras module (pacer, lease holder, the Redis store's StorePolicy
// and Synced), fetched and instantiated when a module that uses it is first imported (its own
// top-level await; a browser compiles a module of its size only asynchronously). The modules
// that import this one are the only ones that need it, so a bundle without them never loads it.
import initExtras, * as extrasGlue from "../tollgate_wasm_extras.js";
await initExtras({ module_or_path: new URL("../tollgate_wasm_extras_bg.wasm", import.meta.url) });

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`). */
export function extras() {
  return extrasGlue;
}
