// An express-rate-limit `Store` (rate-limit-redis, rate-limit-memcached, ... : `increment`,
// `decrement`, `resetKey`, optional `init`, `get`, `resetAll`; or a legacy one with
// `incr(key, callback)`) behind the limiter methods the middleware calls. Such a store counts
// hits itself and answers a total; its guarantees are its own (tollgate's algorithms and its
// atomic compare-and-swap do not apply). The decision over its answer is the core's
// (`tollgate::counted`, express-rate-limit's rule): a hit is allowed while the store's total
// is at most the limit.
import { RateLimiter } from "../limiter/rate-limiter.js";
import { optionError } from "../contract/options.js";
import { extras } from "../extras.js";

/** Whether `store` speaks express-rate-limit's Store interface (rather than tollgate's `limiter(options)`). */
export function isErlStore(store) {
  return store !== null && typeof store === "object" && typeof store.limiter !== "function" &&
    (typeof store.increment === "function" || typeof store.incr === "function");
}

/** The store with promise-returning methods (a legacy `incr(key, callback)` store wrapped). */
export function promisifyStore(store) {
  const legacy = typeof store.incr === "function" && typeof store.increment !== "function";
  const s = legacy
    ? {
        increment: (key) => new Promise((resolve, reject) => {
          store.incr(key, (error, totalHits, resetTime) => (error ? reject(error) : resolve({ totalHits, resetTime })));
        }),
        decrement: async (key) => store.decrement(key),
        resetKey: async (key) => store.resetKey(key),
        init: undefined,
        get: undefined,
      }
    : store;
  const fn = (name) => typeof s[name] === "function";
  const optional = (name) => s[name] === undefined || fn(name);
  if (!fn("increment") || !fn("decrement") || !fn("resetKey") || !optional("init") || !optional("resetAll")) {
    throw optionError("invalid_type", "store", "store: an express-rate-limit Store needs increment, decrement and resetKey methods (and init, resetAll, if present, must be methods); a tollgate store has limiter(options)");
  }
  return s;
}

/**
 * The limiter methods over one store for one limit: `limit` increments and decides, `refund`
 * decrements, `reset` forgets, `headers` writes the decision's headers as tollgate's limiters
 * do (by an in-memory limiter of the same limit and window, which only formats).
 */
export class ErlStoreLimiter {
  #store;
  #limit;
  #name;
  #windowMs;
  #formatter;

  constructor(store, { limit, name, windowMs }) {
    this.#store = store;
    this.#limit = limit;
    this.#name = name;
    this.#windowMs = windowMs;
    this.#formatter = headerWriter(limit, windowMs, name);
  }

  /**
   * Counts a hit on the store and decides it; the decision also carries the store's `used` and
   * `resetTime`. It is decided, and its headers written, at the instant the store answered (never
   * before `now`), as express-rate-limit measures the store's `resetTime` from when it writes the headers.
   */
  async limit(key, { now } = {}) {
    if (typeof key !== "string") throw new TypeError("key: an express-rate-limit Store takes one string key per request");
    const { totalHits, resetTime } = await this.#store.increment(key);
    return this.decision(totalHits, resetTime, atAnswer(now));
  }

  /** A decision over the store's answer (`totalHits` so far in the window, when it resets). */
  decision(totalHits, resetTime, now) {
    const resetAt = resetTime instanceof Date ? resetTime.getTime() : now + this.#windowMs;
    const d = countedDecision(this.#name, this.#limit, totalHits, resetAt, now);
    return Object.assign(d, { used: totalHits, resetTime });
  }

  async refund(key) {
    await this.#store.decrement(key);
  }

  async reset(key) {
    await this.#store.resetKey(key);
  }

  /** The headers of a decision of this limiter (`RateLimiter.headers`'s arguments), at the store's answer (`limit`). */
  headers(decision, options) {
    const given = typeof options === "number" ? { now: options } : options;
    return this.#formatter.headers(decision, { ...given, now: atAnswer(given?.now) });
  }
}

/** The instant an express-rate-limit Store's answer stands at: now, never before `now`. */
const atAnswer = (now = Date.now()) => Math.max(now, Date.now());

/**
 * The core's decision (`countedDecision`, `tollgate::counted`) for a hit that brought a
 * store's count to `used` under `limit` (named `name`), in a window resetting at `resetAt`.
 */
export function countedDecision(name, limit, used, resetAt, now) {
  const [allowed, , remaining, at, retryAfter] = extras().countedDecision(limit, used, resetAt, now);
  const entry = { name, allowed: allowed === 1, limit, remaining, resetAt: at, retryAfter };
  return { allowed: entry.allowed, limit, remaining, resetAt: at, retryAfter, blockedBy: entry.allowed ? null : name, limits: [entry] };
}

/**
 * An in-memory limiter whose `headers` writes those of a limit of `limit` per `windowMs` named
 * `name` (a limit of 0 is advertised as 1, the least a limiter takes); it decides nothing.
 */
export function headerWriter(limit, windowMs, name) {
  return new RateLimiter({ algorithm: "fixed-window", align: "first-hit", limit: Math.max(1, limit), window: windowMs, name, maxKeys: 1 });
}

/**
 * A limit of 0 (express-rate-limit v7+, @fastify/rate-limit's `max: 0`): nothing to count, and
 * the core denies every hit (`tollgate::counted`: one hit over a limit of 0, in a window that
 * resets `windowMs` later).
 */
export function denyAll(name, windowMs) {
  const formatter = headerWriter(0, Math.max(1, windowMs), name);
  const decide = (key, { now = Date.now() } = {}) => countedDecision(name, 0, 1, now + windowMs, now);
  return { limit: decide, peek: decide, refund() {}, reset() {}, headers: (d, o) => formatter.headers(d, o) };
}
