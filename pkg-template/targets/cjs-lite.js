// Node CommonJS: dist/cjs/lib/lite-wasm.js, standing in for lite-wasm.js under lib/lite.js
// converted to CommonJS; the lite module's glue (converted to CommonJS) instantiates
// dist/tollgate_wasm_lite_bg.wasm, the file the other targets load, synchronously when required.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const glue = require("../tollgate_wasm_lite.js");
glue.initSync({ module: readFileSync(join(__dirname, "..", "..", "tollgate_wasm_lite_bg.wasm")) });
export const { Controls, Policy, Limiter, durationMs, wasmMemory } = glue;
