// Node CommonJS: dist/cjs/lib/wasm.js, standing in for wasm.js and for extras.js (the extras
// classes are linked into the limiter's module) under lib/'s modules converted to CommonJS one
// by one (dist/cjs/lib/). The glue is the `web` one converted to CommonJS
// (dist/cjs/tollgate_wasm.js), and the module is the one .wasm file every target loads, in
// dist/: read and instantiated synchronously when first required.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const glue = require("../tollgate_wasm.js");
glue.initSync({ module: readFileSync(join(__dirname, "..", "..", "tollgate_wasm_bg.wasm")) });
export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = glue;
/** The classes a `RateLimiter` never uses, in the same module: lib/ reaches them as `extras()`. */
export const extras = () => glue;
