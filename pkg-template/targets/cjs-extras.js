// Node CommonJS: stands in for extras.js in the bundle; the extras module (pacer, lease holder,
// the Redis store's StorePolicy and Synced) is required and instantiated on first use, from the
// same .wasm file in dist/ as every other target's.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
let extrasGlue;
/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), loaded once. */
export function extras() {
  if (extrasGlue === undefined) {
    const glue = require("./tollgate_wasm_extras.js");
    glue.initSync({ module: readFileSync(join(__dirname, "..", "tollgate_wasm_extras_bg.wasm")) });
    extrasGlue = glue;
  }
  return extrasGlue;
}
