// Node ESM (the "node" condition): the module's bytes read from the file beside the glue.
// webpackIgnore: webpack would hand readFileSync a URL-like object of its own; left alone,
// import.meta.url is this file's in node_modules, where the .wasm file is.
import { readFileSync } from "node:fs";
import * as glue from "../tollgate_wasm_extras.js";
import { started, once } from "./start.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated on first use. */
export const extras = once(() => started(glue, readFileSync(new URL(/* webpackIgnore: true */ "../tollgate_wasm_extras_bg.wasm", import.meta.url))));
