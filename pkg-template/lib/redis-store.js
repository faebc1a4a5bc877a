// `RedisStore`: one limit shared by every process of a Node service, its state in Redis.
//
//   const limiter = new RateLimiter({ algorithm: "sliding-window", limit: 100, window: "1m",
//                                     store: new RedisStore(client, { prefix: "rl:" }) });
//   const d = await limiter.limit("user:42");
//
// Redis holds each key's state as the core's opaque bytes; the only script is a
// compare-and-swap (redis-script.js), and every decision is the wasm core's (redis-limiter.js).
// With `syncRate` > 0 or < 0, mergeable window counters are kept locally and synced
// gateway-style instead (redis-synced.js). See docs/redis.md.
import { Policy } from "./policy.js";
import { adaptClient } from "./redis-client.js";
import { CasScript } from "./redis-script.js";
import { SwapBatcher } from "./redis-batch.js";
import { RedisClock } from "./redis-clock.js";
import { known } from "./options.js";
import { RedisLimiter } from "./redis-limiter.js";
import { SyncedRedisLimiter } from "./redis-synced.js";
import { Insurance, insuranceShare } from "./insurance.js";

const FAILURES = ["open", "closed", "throw", "insurance"];
const CLOCKS = ["local", "redis"];
/**
 * `blockedCache: true`: a denial over cached bytes stands without a round trip for up to this
 * long after Redis last confirmed them, so a `reset` or `refund` by another process is seen
 * within a second rather than when the cached state itself allows again (up to a window).
 */
const BLOCKED_CACHE_MS = 1000;

const show = (v) => (typeof v === "string" ? JSON.stringify(v) : String(v));

function wholeNumber(field, v, min) {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    const err = typeof v === "number" ? RangeError : TypeError;
    throw new err(`${field} must be a whole number of at least ${min}, got ${show(v)}`);
  }
  return v;
}

export class RedisStore {
  /**
   * @param client a connected node-redis (v4+) or ioredis client; the store never closes it
   * @param options see types/redis.d.ts
   */
  constructor(client, options = {}) {
    if (options === null || typeof options !== "object") {
      throw new TypeError(`options must be an object, got ${show(options)}`);
    }
    known(options, [
      "prefix", "namespace", "timeoutMs", "failure", "clock", "syncRate", "maxAttempts", "blockedCache",
      "batchKeys", "maxCachedKeys", "closedRetryMs", "clockRefreshMs", "now", "onError", "insurance",
    ]);
    const {
      prefix = "tollgate:",
      namespace = "",
      timeoutMs = 500,
      failure = "open",
      clock = "local",
      syncRate = 0,
      maxAttempts = 64,
      blockedCache = true,
      batchKeys,
      maxCachedKeys = 10_000,
      closedRetryMs = 1000,
      clockRefreshMs = 1000,
      now = Date.now,
      onError,
      insurance,
    } = options;
    if (typeof prefix !== "string") throw new TypeError(`prefix must be a string, got ${show(prefix)}`);
    if (typeof namespace !== "string" || namespace.includes("\n")) {
      throw new TypeError(`namespace must be a string, got ${show(namespace)}`);
    }
    if (!FAILURES.includes(failure)) throw new TypeError(`failure must be "open", "closed", "throw" or "insurance", got ${show(failure)}`);
    if (failure === "insurance" && insurance === undefined) {
      throw new TypeError('failure "insurance" needs insurance: the share of each limit one process admits during an outage (e.g. 1 / processes)');
    }
    if (failure !== "insurance" && insurance !== undefined) {
      throw new TypeError(`insurance applies with failure "insurance" only, not ${show(failure)}`);
    }
    /** The share of each limit a process admits in memory while Redis is unavailable. */
    this._insuranceShare = insurance === undefined ? 0 : insuranceShare(insurance);
    if (!CLOCKS.includes(clock)) throw new TypeError(`clock must be "local" or "redis", got ${show(clock)}`);
    if (typeof syncRate !== "number" || !Number.isInteger(syncRate)) {
      throw new TypeError(`syncRate must be a whole number of milliseconds (0: every hit, < 0: local only), got ${show(syncRate)}`);
    }
    if (batchKeys !== undefined && typeof batchKeys !== "boolean") throw new TypeError(`batchKeys must be a boolean, got ${show(batchKeys)}`);
    if (typeof now !== "function") throw new TypeError(`now must be a function returning epoch ms, got ${show(now)}`);
    if (onError !== undefined && typeof onError !== "function") throw new TypeError(`onError must be a function, got ${show(onError)}`);
    this._client = adaptClient(client);
    /** A Redis Cluster client: each command's keys must share a slot (redis-client.js). */
    this._cluster = this._client.cluster;
    if (this._cluster && batchKeys === true) {
      throw new TypeError("batchKeys cannot be true with a Redis Cluster client: one script call cannot span hash slots");
    }
    this._prefix = prefix + (namespace === "" ? "" : `${namespace}:`);
    this._namespace = namespace;
    this._timeoutMs = wholeNumber("timeoutMs", timeoutMs, 1);
    this._failure = failure;
    this._syncRate = syncRate;
    this._maxAttempts = wholeNumber("maxAttempts", maxAttempts, 1);
    // How long a denial over cached bytes stands without asking Redis (ms since Redis last
    // confirmed them): true is the default bound, false confirms every such denial.
    this._blockedCacheMs =
      blockedCache === true ? BLOCKED_CACHE_MS : blockedCache === false ? 0 : wholeNumber("blockedCache", blockedCache, 0);
    this._maxCachedKeys = wholeNumber("maxCachedKeys", maxCachedKeys, 0);
    this._closedRetryMs = wholeNumber("closedRetryMs", closedRetryMs, 1);
    this._local = now;
    this._onError = onError;
    this._script = new CasScript(this._client);
    // One-key swaps of one tick share a script call (redis-batch.js); without, each is its own.
    // Off on a cluster: the keys in flight almost never share a slot, and the client pipelines
    // per node itself.
    const batcher = (batchKeys ?? !this._cluster) ? new SwapBatcher(this._client) : null;
    this._swapOne = batcher
      ? (key, expected, next, ttl, guard) => batcher.swap(key, expected, next, ttl, guard)
      : (key, expected, next, ttl, guard) => this._script.swap([key], [expected], [next], [ttl], guard);
    /**
     * Writes Redis made under a guard (a race lost without a round trip), and those whose
     * bytes the core, deciding again over what Redis held, did not produce (a broken guard:
     * always 0, which the tests assert). For tests and benchmarks. @internal
     */
    this._guarded = { writes: 0, mismatches: 0 };
    const redisClock = clock === "redis" ? new RedisClock(this._client, now, wholeNumber("clockRefreshMs", clockRefreshMs, 1)) : null;
    this._now = redisClock ? () => redisClock.now() : () => now();
    this.clock = clock;
  }

  /** The Redis key of a limiter key. @internal */
  _key(key) {
    return this._prefix + key;
  }

  /**
   * A limiter over this store (what `new RateLimiter({ ..., store })` returns): exact over
   * Redis, or synced (`syncRate` != 0, window counters only).
   */
  limiter(options) {
    const policy = new Policy(options);
    if (this._syncRate !== 0) return new SyncedRedisLimiter(this, policy);
    return new RedisLimiter(this, policy, options);
  }

  /** The in-memory limiter of `failure: "insurance"` for a limiter's options. @internal */
  _insurance(options) {
    return new Insurance(options, this._insuranceShare);
  }
}
