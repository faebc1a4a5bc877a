// Browsers and bundlers: fetch and instantiate once (top-level await), then everything is sync.
import init from "../tollgate_wasm.js";
await init({ module_or_path: new URL("../tollgate_wasm_bg.wasm", import.meta.url) });
export { Policy, Limiter, Pacer, LeaseHolder, Synced, validateKeys, wasmMemory } from "../tollgate_wasm.js";
