// Deno (the "deno" condition): the .wasm file imported as a compiled WebAssembly.Module
// (source phase import): part of the module graph, so no read permission, no fetch.
import source wasmModule from "../tollgate_wasm_bg.wasm";
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

const wasm = started(glue, wasmModule);
export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = wasm;
/** The classes a `RateLimiter` never uses (`Pacer`, `LeaseHolder`, `StorePolicy`, `StoreRetry`,
 * `BlockedCache`, `Synced`, `countedDecision`), in the same module: lib/ reaches them as `extras()`. */
export const extras = () => wasm;
