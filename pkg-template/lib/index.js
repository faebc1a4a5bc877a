// The package's public API. Each target directory of the built package holds a copy of these
// modules next to its own `wasm.js` (see scripts/build-pkg.sh).
export { RateLimiter } from "./limiter/rate-limiter.js";
export { AsyncRateLimiter } from "./limiter/async-rate-limiter.js";
export { Policy } from "./limiter/policy.js";
export { KeyHandle } from "./limiter/key-handle.js";
export { Pacer, PacerQueueFullError, PacerCostError } from "./client/pacer.js";
export { LeasedPacer, LeaseError } from "./client/lease.js";
export { RedisStore } from "./stores/redis/redis-store.js";
export { RedisStateError, RedisUnavailableError } from "./stores/redis/redis-errors.js";
export { WorkerStore } from "./stores/worker/worker-store.js";
export { WorkerUnavailableError, WorkerRequestError } from "./stores/worker/worker-errors.js";
export { rateLimit } from "./http/middleware.js";
export { rateLimitFetch } from "./http/fetch-middleware.js";
export { ipKey, ipKeyGenerator } from "./http/client-ip.js";
export { rateLimit as default } from "./http/middleware.js";
export { WaitTimeoutError } from "./limiter/wait.js";
