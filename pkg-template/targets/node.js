// Node ESM: instantiate the limiter's module synchronously from the file next to the glue.
// The extras module (pacer, lease holder, the Redis store's StorePolicy and Synced) is
// extras.js's, on first use.
import { readFileSync } from "node:fs";
import { initSync } from "../tollgate_wasm.js";
initSync({ module: readFileSync(new URL("../tollgate_wasm_bg.wasm", import.meta.url)) });
export { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } from "../tollgate_wasm.js";
