// Node CommonJS: esbuild bundles lib/ into one .cjs file with this module standing in for
// wasm.js; the wasm-bindgen `nodejs` glue loads the module synchronously from its directory.
const glue = require("./tollgate_wasm.js");
export const { Policy, Limiter, Pacer, LeaseHolder, Synced, validateKeys, wasmMemory } = glue;
