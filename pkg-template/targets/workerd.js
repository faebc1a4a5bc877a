// workerd / Cloudflare Workers (the "workerd" condition): the runtime imports .wasm as a
// compiled WebAssembly.Module (compiling bytes at run time is refused there).
import wasmModule from "../tollgate_wasm_bg.wasm";
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

const wasm = started(glue, wasmModule);
export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = wasm;
/** The classes a `RateLimiter` never uses (`Pacer`, `LeaseHolder`, `StorePolicy`, `StoreRetry`,
 * `BlockedCache`, `Synced`, `countedDecision`), in the same module: lib/ reaches them as `extras()`. */
export const extras = () => wasm;
