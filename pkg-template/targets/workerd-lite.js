// workerd / Cloudflare Workers, `tollgate/lite`: the runtime imports .wasm as a compiled
// WebAssembly.Module, so the lite module is instantiated synchronously at load.
import wasmModule from "../tollgate_wasm_lite_bg.wasm";
import { initSync } from "../tollgate_wasm_lite.js";
initSync({ module: wasmModule });
export { Controls, Policy, Limiter, durationMs, wasmMemory } from "../tollgate_wasm_lite.js";
