// Node CommonJS: esbuild bundles lib/ into one .cjs file with this module standing in for
// wasm.js; the wasm-bindgen `nodejs` glue loads its module synchronously from its directory
// when required: the limiter's at load, the extras module (pacer, lease holder, the Redis store's StorePolicy and Synced) on
// first use.
const glue = require("./tollgate_wasm.js");
export const { Policy, Limiter, validateKeys, wasmMemory } = glue;

let extrasGlue;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), loaded once. */
export function extras() {
  extrasGlue ??= require("./tollgate_wasm_extras.js");
  return extrasGlue;
}
