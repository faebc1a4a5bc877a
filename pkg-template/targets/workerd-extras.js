// workerd / Cloudflare Workers (the "workerd" condition): the runtime imports .wasm as a
// compiled WebAssembly.Module (compiling bytes at run time is refused there).
import wasmModule from "../tollgate_wasm_extras_bg.wasm";
import * as glue from "../tollgate_wasm_extras.js";
import { started, once } from "./start.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated on first use. */
export const extras = once(() => started(glue, wasmModule));
