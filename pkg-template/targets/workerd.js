// workerd / Cloudflare Workers: the runtime imports .wasm as a compiled WebAssembly.Module,
// so instantiation is synchronous (no fetch, no top-level await).
import wasmModule from "../tollgate_wasm_bg.wasm";
import { initSync } from "../tollgate_wasm.js";
initSync({ module: wasmModule });
export { Policy, Limiter, Pacer, LeaseHolder, Synced, validateKeys, wasmMemory } from "../tollgate_wasm.js";
