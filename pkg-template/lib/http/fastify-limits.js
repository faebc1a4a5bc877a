// The limiters behind one set of `tollgate/fastify` options (the plugin's, a route's, a
// `rateLimit()`/`createRateLimit()` call's), and the check @fastify/rate-limit's
// `applyRateLimit` answers. Every decision is a tollgate limiter's:
// - written as for @fastify/rate-limit (no `algorithm`, `quota` or `limits`): `max` per
//   `timeWindow` in a window opened at each key's first hit (`fixed-window`, `align:
//   "first-hit"`), @fastify/rate-limit's LocalStore and RedisStore counting; `max: 0` denies all;
// - with tollgate's limit options, those limits (any algorithm, several limits);
// - `ban`: a second limiter of `ban` denials per `timeWindow` per key; a denial it denies is a
//   ban (403). `ban: 0`: every denial is one;
// - a @fastify/rate-limit custom `store` (a constructor with `incr(key, cb, timeWindow, max)`)
//   counts hits itself, its guarantees its own, and a hit is allowed while its count is at
//   most `max`, as @fastify/rate-limit decides over it (erl-store.js does the same for
//   express-rate-limit's stores).
// A `max` or `timeWindow` function gets a limiter per value it returns (at most MAX_LIMITERS).
import { RateLimiter } from "../limiter/rate-limiter.js";
import { AsyncRateLimiter } from "../limiter/async-rate-limiter.js";
import { RedisStore } from "../stores/redis/redis-store.js";
import { countedDecision, denyAll, headerWriter } from "../stores/erl-store.js";
import { optionError } from "../contract/options.js";
import { clientError, publicError } from "./http-options.js";
import { costAfterOptions, reserve } from "./cost-after.js";
import { queueOptions } from "../limiter/acquire-queue.js";
import { limitOrWait } from "./lease-release.js";
import { durationMs } from "../wasm.js";
import { DEFAULTS, TOLLGATE_LIMITS, maxValue, normalizeIP, tollgateFields, windowValue } from "./fastify-options.js";
import { PEER_NAMES } from "./peer-names.js";

const FASTIFY_NAMES = PEER_NAMES["@fastify/rate-limit"];

const MAX_LIMITERS = 1000;

/** The options @fastify/rate-limit gives a custom store's constructor and `child`: its names, its defaults. */
function storeParams(params) {
  return { ...params, max: params.max, timeWindow: params.timeWindow };
}

/** A @fastify/rate-limit store's method as a promise of `{ current, ttl }`. */
function call(store, method, key, timeWindow, max) {
  return new Promise((resolve, reject) => {
    store[method](key, (err, res) => (err ? reject(err) : resolve(res)), timeWindow, max);
  });
}

/**
 * The limiters of one options set (`params`: plugin options merged with a route's, read as
 * @fastify/rate-limit reads them). `parent`: the plugin's Limits, whose custom store or Redis
 * connection a route's limits share (as @fastify/rate-limit's `store.child(routeParams)`).
 */
export class Limits {
  #byValue = new Map();
  #bans = new Map();

  constructor(params, { customStore = null, redis = null, store = undefined, routeInfo = {} } = {}) {
    this.params = params;
    this.own = tollgateFields(params);
    delete this.own.allowList;
    this.tollgateLimits = TOLLGATE_LIMITS.some((f) => this.own[f] !== undefined);
    if (this.tollgateLimits && this.own.quota === undefined && this.own.limits === undefined) {
      // `max` and `timeWindow` (numbers) stand for `limit` and `window` when those are not given.
      // A concurrency limit has no window (docs/concurrency.md): its leases last leaseTtl.
      const peers = this.own.algorithm === "concurrency" ? ["max"] : ["max", "timeWindow"];
      for (const peer of peers) if (typeof params[peer] === "number") this.own[FASTIFY_NAMES[peer]] ??= params[peer];
    }
    this.customStore = customStore;
    // Over a store, each route's keys apart (as @fastify/rate-limit's RedisStore `child`):
    // `redis` gets a RedisStore per route under `<nameSpace><METHOD><url>-`; a tollgate store
    // given as `store` is shared, so the route's part goes in front of each key instead.
    const route = `${routeInfo.method ?? ""}${routeInfo.url ?? ""}${routeInfo.method ? "-" : ""}`;
    // The `redis` option's store throws when Redis fails, as @fastify/rate-limit's: `skipOnError`
    // decides (admitted, nothing counted) or the client's own error reaches Fastify (a 500).
    this.ownRedis = store === undefined && redis !== null;
    this.store = store ?? (redis !== null ? new RedisStore(redis, { prefix: `${params.nameSpace ?? "fastify-rate-limit-"}${route}`, failure: "throw" }) : undefined);
    this.keyPrefix = store !== undefined ? route : "";
    /** `{ estimateOf, actualCost }` when the cost is known after the answer (cost-after.js), else null. */
    this.after = costAfterOptions(params);
    /** `{ maxQueue, maxWait }` when a request waits in line for a concurrency slot, else null. */
    this.queue = queueOptions(params, durationMs);
    if (customStore !== null && this.after !== null) {
      throw optionError("conflicting_fields", "estimatedCost", "estimatedCost and actualCost do not apply to a @fastify/rate-limit store (it cannot reserve); use a tollgate store, such as RedisStore");
    }
    if (customStore !== null && params.cost !== undefined) {
      throw optionError("conflicting_fields", "cost", "cost does not apply to a @fastify/rate-limit store (it counts one per request); use a tollgate store, such as RedisStore");
    }
    if (customStore !== null && this.tollgateLimits) {
      throw optionError("conflicting_fields", "store", "a @fastify/rate-limit store (a constructor) counts max per timeWindow itself; tollgate's algorithm, quota and limits need a tollgate store (RedisStore, WorkerStore) or none");
    }
    const allow = params.allowList;
    this.allowFn = typeof allow === "function" ? allow : null;
    this.allowKeys = Array.isArray(allow) ? allow : null;
    // Made now, so that a mistake in the limit options is refused at start-up.
    if (customStore === null && typeof params.max === "number" && typeof params.timeWindow === "number") this.limiterOf(params.max, params.timeWindow);
  }

  /** The limiter of a `max` and `timeWindow` value (made once per pair). */
  limiterOf(max, windowMs) {
    const id = this.tollgateLimits ? "" : `${max}\u0000${windowMs}`;
    let l = this.#byValue.get(id);
    if (l !== undefined) return l;
    if (this.#byValue.size >= MAX_LIMITERS) {
      throw new RangeError(`max and timeWindow gave more than ${MAX_LIMITERS} distinct values: each gets a limiter of its own; key per-client quotas by a limiter per tier instead`);
    }
    const options = this.tollgateLimits
      ? { ...this.own }
      : max === 0 ? null : { ...this.own, algorithm: "fixed-window", align: "first-hit", limit: max, window: Math.max(1, windowMs) };
    if (options === null) l = denyAll("default", windowMs);
    else {
      if (this.store === undefined) options.maxKeys ??= Number.isInteger(this.params.cache) && this.params.cache > 0 ? this.params.cache : DEFAULTS.cache;
      else delete options.maxKeys;
      l = this.store === undefined ? new RateLimiter(options) : new AsyncRateLimiter({ ...options, store: this.store });
    }
    this.#byValue.set(id, l);
    return l;
  }

  /** The limiter counting a key's denials for `ban` (N denials per window; the next is a ban). */
  banOf(ban, windowMs) {
    const id = `${ban}\u0000${windowMs}`;
    let l = this.#bans.get(id);
    if (l === undefined) {
      const options = { algorithm: "fixed-window", align: "first-hit", limit: ban, window: Math.max(1, windowMs), name: "ban" };
      l = this.store === undefined ? new RateLimiter({ ...options, maxKeys: DEFAULTS.cache }) : new AsyncRateLimiter({ ...options, store: this.store });
      this.#bans.set(id, l);
    }
    return l;
  }

  /** The key of a request: `keyGenerator`'s, else the client address normalised; `groupId` appended. */
  async keyOf(req) {
    const p = this.params;
    let key = p.keyGenerator === undefined ? normalizeIP(req.ip, p.ipv6Subnet) : await p.keyGenerator(req);
    const groupId = req.routeOptions?.config?.rateLimit?.groupId;
    if (groupId) key += groupId;
    return key;
  }

  /**
   * @fastify/rate-limit's `applyRateLimit`: `{ isAllowed: true, key }` for an allow-listed
   * request, else `{ isAllowed: false, key, max, timeWindow, remaining, ttl, ttlInSeconds,
   * isExceeded, isBanned }`, with the deciding limiter, its decision and the `now` it decided
   * at beside (for the headers).
   * `increment: false` peeks (counts nothing); `reserves: true` (the hook's, with `estimatedCost`)
   * reserves the estimate, whose reservation the decision carries (elsewhere the estimate is
   * the cost). A store error is thrown, or with `skipOnError` answered as an allowed request
   * with nothing counted.
   */
  async check(req, { increment = true, reserves = false, signal } = {}) {
    const p = this.params;
    const key = await this.keyOf(req);
    if (this.allowFn !== null ? await this.allowFn(req, key) : this.allowKeys?.includes(key)) return { isAllowed: true, key };
    const max = typeof p.max === "function" ? maxValue(await p.max(req, key)) : p.max;
    const timeWindow = typeof p.timeWindow === "function" ? windowValue(await p.timeWindow(req, key)) : p.timeWindow;
    const now = Date.now();
    if (this.customStore !== null) return this.#checkStore(key, max, timeWindow, increment, now);
    const limiter = this.limiterOf(max, timeWindow);
    const cost = this.after !== null ? await this.after.estimateOf(req) : p.cost !== undefined ? await p.cost(req) : 1;
    // A keyGenerator may answer a number, as @fastify/rate-limit's stores take it; limiters key by strings.
    const id = `${this.keyPrefix}${key}`;
    let decision;
    try {
      if (!increment) decision = await limiter.peek(id, { now, cost });
      else if (reserves && this.after !== null) decision = await reserve(limiter, id, cost, now);
      // Waiting in line (maxQueue, maxWait) only in the hook, which watches the client.
      else decision = await limitOrWait(limiter, id, cost, now, signal === undefined ? null : this.queue, signal);
    } catch (e) {
      if (signal?.aborted) throw e;
      // Bad input (a cost that is not one: `invalid_cost`) is never passed over.
      if (!p.skipOnError || e instanceof TypeError || e instanceof RangeError || (typeof e?.code === "string" && e.code.startsWith("invalid_"))) {
        // Fastify answers it (500, its message): never the key, the client's address or a stack.
        const thrown = this.ownRedis && e?.code === "redis_unavailable" && e.cause !== undefined ? e.cause : e;
        throw clientError(thrown) !== null ? thrown : publicError(thrown, [id, String(key), req.ip]);
      }
      // Admitted, nothing counted: @fastify/rate-limit's headers of a fresh key (all of `max` left, reset 0).
      const writer = headerWriter(max, Math.max(1, timeWindow), "default");
      return { isAllowed: false, key, max, timeWindow, remaining: max, ttl: 0, ttlInSeconds: 0, isExceeded: false, isBanned: false, limiter: writer, decision: countedDecision("default", max, 0, now, now), now };
    }
    if (decision.reason === "allowList") return { isAllowed: true, key };
    const limit = this.tollgateLimits ? decision.limit : max;
    // A peek's `allowed` is whether one more hit fits; @fastify/rate-limit's peek reports
    // exceeded only once a hit was denied, which tollgate never counts: nothing left is "at the
    // limit", and a key a penalty blocks (a hit was denied) is exceeded.
    const isExceeded = increment ? !decision.allowed : decision.reason === "denyList" || decision.penalty === true;
    let isBanned = false;
    if (isExceeded && p.ban >= 0 && decision.reason !== "denyList") {
      // Its own keys beside the limit's (over a store they share a key space).
      isBanned = p.ban === 0 || !(await this.banOf(p.ban, timeWindow).limit(`ban:${id}`, { now })).allowed;
    }
    if (decision.reason === "denyList") isBanned = true;
    const ttl = Math.max(0, decision.resetAt - now);
    return {
      isAllowed: false,
      key,
      max: limit,
      timeWindow,
      remaining: decision.remaining,
      ttl,
      ttlInSeconds: Math.ceil(ttl / 1000),
      isExceeded,
      isBanned,
      limiter,
      decision,
      now,
      cost,
    };
  }

  async #checkStore(key, max, timeWindow, increment, now) {
    const store = this.customStore;
    if (!increment && typeof store.read !== "function") {
      throw new Error("The configured rate-limit store does not implement a `read` method, which is required to use `{ increment: false }`");
    }
    let current = 0;
    let ttl = 0;
    try {
      ({ current, ttl } = await call(store, increment ? "incr" : "read", key, timeWindow, max));
    } catch (e) {
      if (!this.params.skipOnError) throw publicError(e, [String(key)]);
    }
    // The core decides over the store's count (`tollgate::counted`, as over an express-rate-limit store's).
    const decision = countedDecision("default", max, current, now + ttl, now);
    const isExceeded = !decision.allowed;
    const ttlInSeconds = Math.ceil(ttl / 1000);
    const remaining = decision.remaining;
    return {
      isAllowed: false,
      key,
      max,
      timeWindow,
      remaining,
      ttl,
      ttlInSeconds,
      isExceeded,
      isBanned: this.params.ban !== -1 && current - max > this.params.ban,
      limiter: headerWriter(max, Math.max(1, timeWindow), "default"),
      decision,
      now,
    };
  }
}

/** A custom store's instance for a route (its `child`), as @fastify/rate-limit makes it. */
export function childStore(store, params) {
  return typeof store?.child === "function" ? store.child(storeParams(params)) : store;
}
