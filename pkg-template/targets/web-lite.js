// Browsers and bundlers, `tollgate/lite`: fetch and instantiate the lite module once
// (top-level await), then everything is sync. Only this module is fetched by the entry.
import init from "../tollgate_wasm_lite.js";
await init({ module_or_path: new URL("../tollgate_wasm_lite_bg.wasm", import.meta.url) });
export { Controls, Policy, Limiter, durationMs, wasmMemory } from "../tollgate_wasm_lite.js";
