// Node CommonJS: esbuild bundles lib/ into one CommonJS file (dist/cjs/tollgate.js) with this
// module standing in for wasm.js and for extras.js (the extras classes are linked into the
// limiter's module). The glue is the `web` one converted to CommonJS (dist/cjs/tollgate_wasm.js),
// and the module is the one .wasm file every target loads, in dist/: read and instantiated
// synchronously when required.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const glue = require("./tollgate_wasm.js");
glue.initSync({ module: readFileSync(join(__dirname, "..", "tollgate_wasm_bg.wasm")) });
export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = glue;
/** The classes a `RateLimiter` never uses, in the same module: lib/ reaches them as `extras()`. */
export const extras = () => glue;
