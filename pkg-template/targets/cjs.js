// Node CommonJS: esbuild bundles lib/ into one .cjs file with this module standing in for
// wasm.js. The glue is the `web` one converted to CommonJS (dist/cjs/tollgate_wasm.js), and the
// module is the one .wasm file every target loads, in dist/: read and instantiated
// synchronously when required (the extras module: cjs-extras.js, on first use).
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const glue = require("./tollgate_wasm.js");
glue.initSync({ module: readFileSync(join(__dirname, "..", "tollgate_wasm_bg.wasm")) });
export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = glue;
