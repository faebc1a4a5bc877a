// Node ESM (the "node" condition): the module's bytes read from the file beside the glue
// (node-file.js says how bundlers are kept from rewriting the reference).
import { wasmFile } from "./node-file.js";
import * as glue from "../tollgate_wasm_extras.js";
import { started, once } from "./start.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated on first use. */
export const extras = once(() => started(glue, wasmFile("../tollgate_wasm_extras_bg.wasm", import.meta.url)));
