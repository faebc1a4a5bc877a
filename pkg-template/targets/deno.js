// Deno (the "deno" condition): the .wasm file imported as a compiled WebAssembly.Module
// (source phase import): part of the module graph, so no read permission, no fetch.
import source wasmModule from "../tollgate_wasm_bg.wasm";
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = started(glue, wasmModule);
