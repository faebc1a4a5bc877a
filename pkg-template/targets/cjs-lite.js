// Node CommonJS, `require("tollgate/lite")`: esbuild bundles lib/lite.js with this module
// standing in for lite-wasm.js; the wasm-bindgen `nodejs` glue loads the lite module
// synchronously from its directory when required.
const glue = require("./tollgate_wasm_lite.js");
export const { Policy, Limiter, wasmMemory } = glue;
