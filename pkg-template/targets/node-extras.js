// Node ESM: the extras module (pacer, lease holder, the Redis store's StorePolicy and Synced),
// instantiated synchronously from its file on first use.
import { readFileSync } from "node:fs";
import * as extrasGlue from "../tollgate_wasm_extras.js";

let extrasReady = false;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated once. */
export function extras() {
  if (!extrasReady) {
    extrasGlue.initSync({ module: readFileSync(new URL("../tollgate_wasm_extras_bg.wasm", import.meta.url)) });
    extrasReady = true;
  }
  return extrasGlue;
}
