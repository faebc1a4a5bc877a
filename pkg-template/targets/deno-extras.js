// Deno (the "deno" condition): the .wasm file imported as a compiled WebAssembly.Module
// (source phase import): part of the module graph, so no read permission, no fetch.
import source wasmModule from "../tollgate_wasm_extras_bg.wasm";
import * as glue from "../tollgate_wasm_extras.js";
import { started, once } from "./start.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated on first use. */
export const extras = once(() => started(glue, wasmModule));
