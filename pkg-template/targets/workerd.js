// workerd / Cloudflare Workers: the runtime imports .wasm as a compiled WebAssembly.Module,
// so instantiation is synchronous (no fetch, no top-level await): the limiter's module at
// load. The extras module is extras.js's (imported with the modules that use it, instantiated
// on first use), so a Worker of RateLimiter alone does not bundle it.
import wasmModule from "../tollgate_wasm_bg.wasm";
import { initSync } from "../tollgate_wasm.js";
initSync({ module: wasmModule });
export { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } from "../tollgate_wasm.js";
