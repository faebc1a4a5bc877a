// The Redis store's own errors, each with a stable `code` to branch on.

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

/** Resolves like `promise`, or rejects with `RedisUnavailableError` after `ms` (one timer, no race). */
export function withTimeout(promise, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new RedisUnavailableError(`Redis did not answer within ${ms} ms`)), ms);
    Promise.resolve(promise).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
