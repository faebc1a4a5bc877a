// The Redis store's own errors, each with a stable `code` and `field` to branch on, and its
// timeout. Their messages name the limiter's namespace, never a Redis key (which holds the
// caller's key: often a client's address), a server's address or a client library's message:
// a middleware may send an error's message to the client. The client's own error, with its
// detail, is the `cause` (not enumerable: not in `JSON.stringify(error)`).
import { withDeadline, joinSharedDeadline } from "../deadline.js";

/**
 * A Redis value that is not this policy's state: another limiter's state under the same
 * namespace, a value another program wrote, corrupt bytes, or another type of value.
 */
export class RedisStateError extends Error {
  /** @param cause what is wrong with the value @param namespace the limiter's namespace, when known */
  constructor(cause, namespace) {
    super("");
    this.name = "RedisStateError";
    this.code = "redis_state_invalid";
    this.field = "namespace";
    this.reason = cause;
    this.within(namespace);
  }

  /** Names the limiter's namespace (the store's scripts do not know it). @internal */
  within(namespace) {
    if (namespace === undefined) {
      this.message = `a Redis value is not a tollgate state of this limiter's policy: ${this.reason}`;
      return this;
    }
    this.namespace = namespace;
    this.message =
      `a Redis value under namespace ${JSON.stringify(namespace)} is not a tollgate state of this limiter's policy ` +
      `(${this.reason}): another limiter or program writes under that namespace; give each limiter its own namespace, or reset the key`;
    return this;
  }
}

/** Redis failed or did not answer in time, and the store is configured to throw. */
export class RedisUnavailableError extends Error {
  /** @param message what happened, in tollgate's words @param cause the client's error, if any */
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "RedisUnavailableError";
    this.code = "redis_unavailable";
    this.field = "store";
  }
}

/**
 * Resolves like `promise`, or rejects with `RedisUnavailableError` once Redis has not answered
 * within `ms` of this process's own time, its replies already received read first (deadline.js).
 */
export function withTimeout(promise, ms) {
  return withDeadline(promise, ms, () => new RedisUnavailableError(`Redis did not answer within ${ms} ms`));
}

/**
 * `withTimeout` for a call that settles itself: `fail(RedisUnavailableError)` once Redis has not
 * answered within `ms`, under a deadline shared by the calls begun within the same millisecond
 * (deadline.js `joinSharedDeadline`). Answers `settled()`, for the call to run when it settles.
 */
export function sharedTimeout(ms, fail) {
  return joinSharedDeadline(ms, () => fail(new RedisUnavailableError(`Redis did not answer within ${ms} ms`)));
}
