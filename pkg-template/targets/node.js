// Node ESM: instantiate synchronously from the file next to the glue.
import { readFileSync } from "node:fs";
import { initSync } from "../tollgate_wasm.js";
initSync({ module: readFileSync(new URL("../tollgate_wasm_bg.wasm", import.meta.url)) });
export { Policy, Limiter, Pacer, LeaseHolder, Synced, validateKeys, wasmMemory } from "../tollgate_wasm.js";
