// Node ESM (the "node" condition): the module's bytes read from the file beside the glue.
// webpackIgnore: webpack would hand readFileSync a URL-like object of its own; left alone,
// import.meta.url is this file's in node_modules, where the .wasm file is.
import { readFileSync } from "node:fs";
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = started(glue, readFileSync(new URL(/* webpackIgnore: true */ "../tollgate_wasm_bg.wasm", import.meta.url)));
