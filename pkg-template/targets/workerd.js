// workerd / Cloudflare Workers: the runtime imports .wasm as a compiled WebAssembly.Module,
// so instantiation is synchronous (no fetch, no top-level await): the limiter's module at
// load, the extras module (pacer, lease holder, the Redis store's StorePolicy and Synced) on first use.
import wasmModule from "../tollgate_wasm_bg.wasm";
import extrasModule from "../tollgate_wasm_extras_bg.wasm";
import { initSync } from "../tollgate_wasm.js";
import * as extrasGlue from "../tollgate_wasm_extras.js";
initSync({ module: wasmModule });
export { Policy, Limiter, validateKeys, wasmMemory } from "../tollgate_wasm.js";

let extrasReady = false;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated once. */
export function extras() {
  if (!extrasReady) {
    extrasGlue.initSync({ module: extrasModule });
    extrasReady = true;
  }
  return extrasGlue;
}
