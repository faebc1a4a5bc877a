// Node ESM: instantiate the limiter's module synchronously from the file next to the glue;
// the extras module (pacer, lease holder, the Redis store's StorePolicy and Synced) on first use, as synchronously.
import { readFileSync } from "node:fs";
import { initSync } from "../tollgate_wasm.js";
import * as extrasGlue from "../tollgate_wasm_extras.js";
initSync({ module: readFileSync(new URL("../tollgate_wasm_bg.wasm", import.meta.url)) });
export { Policy, Limiter, validateKeys, wasmMemory } from "../tollgate_wasm.js";

let extrasReady = false;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated once. */
export function extras() {
  if (!extrasReady) {
    extrasGlue.initSync({ module: readFileSync(new URL("../tollgate_wasm_extras_bg.wasm", import.meta.url)) });
    extrasReady = true;
  }
  return extrasGlue;
}
