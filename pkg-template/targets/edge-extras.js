// Vercel and the Next.js Edge runtime (the "edge-light" condition): `?module` imports the .wasm
// file as a compiled WebAssembly.Module, as Next.js and Vercel's bundlers do (compiling bytes
// at run time is refused there: "Wasm code generation disallowed by embedder").
import wasmModule from "../tollgate_wasm_extras_bg.wasm?module";
import * as glue from "../tollgate_wasm_extras.js";
import { started, once } from "./start.js";

/** The extras module's exports (`Pacer`, `LeaseHolder`, `StorePolicy`, `Synced`, `wasmMemory`), instantiated on first use. */
export const extras = once(() => started(glue, wasmModule));
