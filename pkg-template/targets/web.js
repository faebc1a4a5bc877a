// Browsers and bundlers: fetch and instantiate the limiter's module once (top-level await),
// then everything is sync. The extras module is extras.js's own top-level await, in the
// modules that use it (Pacer, LeasedPacer, Policy, the Redis store): a bundle of RateLimiter
// alone never imports it, so it never fetches it (`sideEffects: false` in package.json).
import init from "../tollgate_wasm.js";
await init({ module_or_path: new URL("../tollgate_wasm_bg.wasm", import.meta.url) });
export { Controls, Policy, Limiter, durationMs, ipKeyOf, validateKeys, wasmMemory } from "../tollgate_wasm.js";
