// Node CommonJS: esbuild bundles lib/ into one .cjs file with this module standing in for
// wasm.js; the wasm-bindgen `nodejs` glue loads the limiter's module synchronously from its
// directory when required (the extras module: cjs-extras.js, on first use).
const glue = require("./tollgate_wasm.js");
export const { Policy, Limiter, validateKeys, wasmMemory } = glue;
