// Node ESM, `tollgate/lite`: instantiate the lite module synchronously from the file next to
// the glue (the full module is never loaded by this entry).
import { readFileSync } from "node:fs";
import { initSync } from "../tollgate_wasm_lite.js";
initSync({ module: readFileSync(new URL("../tollgate_wasm_lite_bg.wasm", import.meta.url)) });
export { Controls, Policy, Limiter, durationMs, wasmMemory } from "../tollgate_wasm_lite.js";
