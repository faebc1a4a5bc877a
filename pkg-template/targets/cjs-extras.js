// Node CommonJS: stands in for extras.js in the bundle; the extras module's `nodejs` glue
// (pacer, lease holder, the Redis store's StorePolicy and Synced) is required on first use.
let extrasGlue;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), loaded once. */
export function extras() {
  extrasGlue ??= require("./tollgate_wasm_extras.js");
  return extrasGlue;
}
