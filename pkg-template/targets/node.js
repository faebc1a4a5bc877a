// Node ESM (the "node" condition): the module's bytes read from the file beside the glue
// (node-file.js says how bundlers are kept from rewriting the reference).
import { wasmFile } from "./node-file.js";
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = started(glue, wasmFile("../tollgate_wasm_bg.wasm", import.meta.url));
