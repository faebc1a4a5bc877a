// `tollgate/limiter`: the in-memory `RateLimiter` and its `KeyHandle`, nothing else. In a
// browser without a bundler, importing `tollgate` fetches both wasm modules (index.js imports
// every module, and the extras' modules await their own); importing this entry fetches only
// the limiter's (`tollgate/lite`, lite.js, is smaller still: one limit; sizes in
// docs/benchmarks.md). Same classes as `tollgate`'s (same module files), so the two entries mix: a
// `RedisStore` from `tollgate` works as this `RateLimiter`'s store.
export { RateLimiter } from "./limiter/rate-limiter.js";
export { KeyHandle } from "./limiter/key-handle.js";
