// workerd / Cloudflare Workers: the extras module (pacer, lease holder, the Redis store's
// StorePolicy and Synced), imported as a compiled module with the modules that use it and
// instantiated synchronously on first use.
import extrasModule from "../tollgate_wasm_extras_bg.wasm";
import * as extrasGlue from "../tollgate_wasm_extras.js";

let extrasReady = false;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated once. */
export function extras() {
  if (!extrasReady) {
    extrasGlue.initSync({ module: extrasModule });
    extrasReady = true;
  }
  return extrasGlue;
}
