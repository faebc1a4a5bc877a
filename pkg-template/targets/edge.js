// Vercel and the Next.js Edge runtime (the "edge-light" condition): `?module` imports the .wasm
// file as a compiled WebAssembly.Module, as Next.js and Vercel's bundlers do (compiling bytes
// at run time is refused there: "Wasm code generation disallowed by embedder").
import wasmModule from "../tollgate_wasm_bg.wasm?module";
import * as glue from "../tollgate_wasm.js";
import { started } from "./start.js";

export const { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } = started(glue, wasmModule);
