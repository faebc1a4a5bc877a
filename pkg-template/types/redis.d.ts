// Types of `RedisStore` (see pkg-template/lib/redis-store.js and docs/redis.md).
import type { AsyncRateLimiter, Decision, Keys, LimiterOptions, Policy, StoreOptions, WorkerRateLimiter } from "./index.js";
import type { ConcurrencyCalls } from "./concurrency.js";

/**
 * What to answer when Redis fails or does not answer within `timeoutMs` (an outage; contention
 * among writers is never one: it is denied with `degraded: "contention"`).
 */
export type RedisFailureMode = NonNullable<StoreOptions["failure"]>;

export interface RedisStoreOptions extends StoreOptions {
  /** Put before every key (default `"tollgate:"`). */
  prefix?: string;
  /**
   * The namespace of every limiter of this store: keys become `<prefix><namespace>:<key>`
   * (`""`: `<prefix><key>`). Default: each limiter's own, 12 hex digits derived from its
   * policy, so limiters of different options never share a key (docs/redis.md, "Namespaces").
   */
  namespace?: string;
  /** Time authority: the caller's clock (`"local"`, default) or the Redis server's `TIME`. */
  clock?: "local" | "redis";
  /** With `clock: "redis"`: measure the offset to Redis's clock again after this many ms (default 1000). */
  clockRefreshMs?: number;
  /**
   * `0` (default): every hit decided in Redis, exact, any algorithm. `N > 0`: window counters
   * only, decided locally and synced every N ms (may over-admit between syncs), or every
   * duration such as `"100ms"`. `< 0`: local only. At most an hour either way (3,600,000 ms), as
   * in the Worker's wrangler.toml.
   */
  syncRate?: number | string;
  /** Compare-and-swap attempts per decision before it is denied as contention (default 64). */
  maxAttempts?: number;
  /**
   * Send the one-key compare-and-swaps of different keys that are ready in the same tick as
   * one script call (default true: fewer commands with many keys). Each key is still swapped
   * on its own. Default `false` on a Redis Cluster client, where `true` is refused: the keys
   * of one call must share a slot.
   */
  batchKeys?: boolean;
}

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
