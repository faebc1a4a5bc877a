// Browsers and bundlers: fetch and instantiate both modules once, in parallel (top-level
// await), then everything is sync. The extras module (pacer, lease holder, the Redis store's StorePolicy and Synced) cannot be
// instantiated lazily here: a browser compiles a module of its size only asynchronously.
import init from "../tollgate_wasm.js";
import initExtras, * as extrasGlue from "../tollgate_wasm_extras.js";
await Promise.all([
  init({ module_or_path: new URL("../tollgate_wasm_bg.wasm", import.meta.url) }),
  initExtras({ module_or_path: new URL("../tollgate_wasm_extras_bg.wasm", import.meta.url) }),
]);
export { Policy, Limiter, validateKeys, wasmMemory } from "../tollgate_wasm.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`). */
export function extras() {
  return extrasGlue;
}
