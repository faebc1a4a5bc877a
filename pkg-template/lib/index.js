// The package's public API. Each target directory of the built package holds a copy of these
// modules next to its own `wasm.js` (see scripts/build-pkg.sh).
export { RateLimiter } from "./rate-limiter.js";
export { AsyncRateLimiter } from "./async-rate-limiter.js";
export { Policy } from "./policy.js";
export { KeyHandle } from "./key-handle.js";
export { Pacer, PacerQueueFullError, PacerCostError } from "./pacer.js";
export { LeasedPacer, LeaseError } from "./lease.js";
export { RedisStore } from "./redis-store.js";
export { RedisStateError, RedisUnavailableError } from "./redis-errors.js";
export { WorkerStore } from "./worker-store.js";
export { WorkerUnavailableError, WorkerRequestError } from "./worker-errors.js";
export { rateLimit } from "./middleware.js";
export { rateLimitFetch } from "./fetch-middleware.js";
export { ipKey, ipKeyGenerator } from "./client-ip.js";
export { rateLimit as default } from "./middleware.js";
export { WaitTimeoutError } from "./wait.js";
