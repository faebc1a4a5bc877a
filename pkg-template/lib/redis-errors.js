// The Redis store's own errors, each with a stable `code` to branch on, and its timeout.
import { withDeadline } from "./deadline.js";

/** A Redis value that is not this policy's state (written by something else, or corrupt). */
export class RedisStateError extends Error {
  /** @param key the Redis key @param cause the decoder's message */
  constructor(key, cause) {
    super(`Redis key ${JSON.stringify(key)} does not hold a tollgate state of this policy: ${cause}`);
    this.name = "RedisStateError";
    this.code = "redis_state_invalid";
    this.key = key;
  }
}

/** Redis failed or did not answer in time, and the store is configured to throw. */
export class RedisUnavailableError extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "RedisUnavailableError";
    this.code = "redis_unavailable";
  }
}

/**
 * Resolves like `promise`, or rejects with `RedisUnavailableError` once Redis has not answered
 * within `ms` of this process's own time, its replies already received read first (deadline.js).
 */
export function withTimeout(promise, ms) {
  return withDeadline(promise, ms, () => new RedisUnavailableError(`Redis did not answer within ${ms} ms`));
}
