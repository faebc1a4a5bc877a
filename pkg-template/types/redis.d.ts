// Types of `RedisStore` (see pkg-template/lib/stores/redis/redis-store.js and docs/redis.md).
import type { AsyncRateLimiter, Decision, Keys, LimiterOptions, Policy, StoreOptions, WorkerRateLimiter } from "./index.js";
import type { RedisStoreFields } from "./options.generated.js";
import type { ConcurrencyCalls } from "./concurrency.js";

/**
 * What to answer when Redis fails or does not answer within `timeoutMs` (an outage; contention
 * among writers is never one: it is denied with `degraded: "contention"`).
 */
export type RedisFailureMode = NonNullable<StoreOptions["failure"]>;

/** `RedisStore`'s options: the stores' own, and its own (generated from the core's spec). */
export interface RedisStoreOptions extends StoreOptions, RedisStoreFields {}

/** A Redis-backed limiter: the in-memory limiter's methods, asynchronous; `export` and `import` in exact mode only. */
export interface RedisRateLimiter extends AsyncRateLimiter, ConcurrencyCalls<Keys, true>, Partial<Pick<WorkerRateLimiter, "export" | "import">> {
  readonly policy: Policy;
  /** The namespace of this limiter's Redis keys (the store's `namespace`, or derived from the policy). */
  readonly namespace: string;
  /** Pushes diffs and reads back merged counts now (`syncRate` > 0; a no-op otherwise). */
  sync?(now?: number): Promise<void>;
  /** Stops the sync timer and pushes what is left. */
  close(): Promise<void>;
}

/**
 * One limit shared by every process, its state in Redis. `client`: a connected node-redis
 * (v4 or later) or ioredis client (neither is a dependency of this package); the store never
 * closes it.
 */
export class RedisStore {
  constructor(client: unknown, options?: RedisStoreOptions);
  readonly clock: "local" | "redis";
  limiter(options: LimiterOptions): RedisRateLimiter;
}

/**
 * A Redis value that is not a state of this limiter's policy (`code: "redis_state_invalid"`):
 * another limiter or program writes under its namespace. The message names the namespace,
 * never a Redis key.
 */
export class RedisStateError extends Error {
  readonly code: "redis_state_invalid";
  readonly field: "namespace";
  /** The limiter's namespace. */
  readonly namespace?: string;
}

/**
 * Redis failed or timed out and `failure` is `"throw"` (`code: "redis_unavailable"`); the
 * client's own error, if any, is the `cause`.
 */
export class RedisUnavailableError extends Error {
  readonly code: "redis_unavailable";
  readonly field: "store";
}

export type { Decision };
