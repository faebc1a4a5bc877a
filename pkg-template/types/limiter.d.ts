// `tollgate/limiter`: the in-memory RateLimiter and its key handles, without the modules that
// load the extras wasm module (see the npm README, "Bundlers"). The types are `tollgate`'s.
export { RateLimiter, KeyHandle } from "./index.js";
export type {
  Algorithm, AsyncRateLimiter, BatchKeys, BatchOptions, BatchOutput, BatchResult, CallOptions, Decision, Duration, Keys,
  LimitOptions, LimitResult, LimiterOptions, Limits, RateLimiterConstructor, RateLimitHeaders, Store,
} from "./index.js";
