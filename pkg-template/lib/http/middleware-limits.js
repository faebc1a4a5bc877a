// Which limiter decides a request of `rateLimit`: the `limiter` given; or one made of the
// limit options (in memory, or over a tollgate store such as `RedisStore`); or an
// express-rate-limit `Store`. Options written as for express-rate-limit (no `algorithm`, no
// `quota`) get express-rate-limit's MemoryStore behaviour: a fixed window per client opened at
// its first hit (`fixed-window` aligned to the first hit), 5 per 60000 ms unless `limit` and
// `windowMs` say otherwise. `limit` may be a function of the request, as in express-rate-limit:
// each value it returns gets its own limiter, and in memory a key's state moves to the limiter
// of its current limit (`handOver`), so a client keeps one count whatever limit it is given, as
// in express-rate-limit's one store.
import { RateLimiter } from "../limiter/rate-limiter.js";
import { AsyncRateLimiter } from "../limiter/async-rate-limiter.js";
import { ErlStoreLimiter, denyAll, isErlStore, promisifyStore } from "../stores/erl-store.js";
import { fail, optionError } from "../contract/options.js";
import { applyControls } from "../limiter/controls.js";
import { givenLimiter } from "./http-options.js";
import { Controls } from "../wasm.js";

/** express-rate-limit's defaults, used when the options name no algorithm. */
export const ERL_DEFAULTS = Object.freeze({ windowMs: 60_000, limit: 5 });
/** How many distinct limits (values of a `limit` function, names of an `identifier` function) get a limiter each. */
const MAX_LIMITERS = 1000;
/** The limit options an express-rate-limit Store can take: it counts `limit` per `windowMs`. */
const ERL_STORE_FIELDS = ["limit", "window", "name", "onDecision"];

/** express-rate-limit's name of a limit: `100-in-15min`. */
export function erlIdentifier(limit, windowMs) {
  const s = windowMs / 1000;
  const m = s / 60;
  const h = m / 60;
  const d = h / 24;
  const duration = s < 60 ? `${s}sec` : m < 60 ? `${m}min` : h < 24 ? `${h}hr${h > 1 ? "s" : ""}` : `${d}day${d > 1 ? "s" : ""}`;
  return `${limit}-in-${duration}`;
}

/**
 * Whether the options are written as for express-rate-limit ("ERL mode"): no `limiter` and no
 * `algorithm`, `quota` or `limits`. Such options get express-rate-limit's defaults (its
 * MemoryStore's counting, its header modes).
 */
export function isErlMode(spec, limiter) {
  return limiter === undefined && spec.algorithm === undefined && spec.quota === undefined && spec.limits === undefined;
}

/**
 * The limiters of one middleware. `spec`: the limit options in tollgate's names (`limit` may
 * be a function, `name` a function of the request); `store`, `limiter`: as given.
 */
export class MiddlewareLimits {
  #spec;
  #store;
  #erlStore = null;
  #erlMode;
  #windowMs;
  #byLimit = new Map();
  /** The one limiter when the limit does not depend on the request, else null. */
  fixed = null;

  constructor({ spec, store, limiter }) {
    const perRequest = typeof spec.limit === "function" || typeof spec.name === "function";
    if (limiter !== undefined) {
      this.fixed = givenLimiter(limiter, [...Object.keys(spec), ...(store === undefined ? [] : ["store"])]);
      this.#erlMode = false;
      this.#windowMs = limiter.policy?.longestWindowMs;
      return;
    }
    this.#erlMode = isErlMode(spec, limiter);
    if (perRequest && spec.limits !== undefined) {
      throw optionError("conflicting_fields", "limits", "limits cannot be given with limit or identifier functions: they apply to one limit, not to limits (give each of limits its own limit and name)");
    }
    if (perRequest && spec.quota !== undefined) throw optionError("conflicting_fields", "quota", "a limit function needs limit and window, not quota");
    if (this.#erlMode) {
      spec = { ...spec, limit: spec.limit ?? ERL_DEFAULTS.limit, window: spec.window ?? ERL_DEFAULTS.windowMs };
    }
    this.#spec = spec;
    if (isErlStore(store)) {
      const beside = Object.keys(spec).find((f) => !ERL_STORE_FIELDS.includes(f));
      if (beside !== undefined) {
        throw optionError("unsupported_option", beside, `${beside} does not apply to an express-rate-limit Store (it counts hits in its own windows of windowMs); for tollgate's algorithms use a tollgate store, such as RedisStore`);
      }
      if (typeof spec.window !== "number") throw fail("windowMs", spec.window, "a number of milliseconds with an express-rate-limit Store");
      this.#erlStore = promisifyStore(store);
      this.#windowMs = spec.window;
    } else {
      this.#store = store;
      this.#windowMs = typeof spec.window === "number" ? spec.window : null;
    }
    if (!perRequest) this.fixed = this.forLimit(spec.limit, spec.name);
  }

  /** The express-rate-limit Store in use (promisified), or null. */
  get erlStore() {
    return this.#erlStore;
  }

  /** The window in milliseconds (the longest, with several limits), as express-rate-limit's `windowMs` reports it. */
  get windowMs() {
    if (this.#windowMs === null) {
      const probe = this.#probe();
      this.#windowMs = probe.policy.longestWindowMs;
      probe.free();
    }
    return this.#windowMs;
  }

  /** Whether the limits were written as for express-rate-limit (no algorithm). */
  get erlMode() {
    return this.#erlMode;
  }

  /** The limiter of a request: `limitOf` and `nameOf` are the `limit` and `identifier` values for it. */
  async forRequest(req, res) {
    if (this.fixed !== null) return this.fixed;
    const limit = typeof this.#spec.limit === "function" ? await this.#spec.limit(req, res) : this.#spec.limit;
    const name = typeof this.#spec.name === "function" ? await this.#spec.name(req, res) : this.#spec.name;
    return this.forLimit(limit, name);
  }

  /**
   * Before `limiter` decides `key`: with a limiter per limit value, in memory, moves the key's
   * state to `limiter` from another that holds it (the state bytes of one algorithm do not
   * depend on the limit), so that a client switching limits keeps its count rather than
   * starting a fresh one under each.
   */
  handOver(limiter, key) {
    if (this.fixed !== null || this.#store !== undefined || this.#erlStore !== null || this.#byLimit.size < 2) return;
    if (typeof limiter.import !== "function") return;
    for (const k of typeof key === "string" ? [key] : key) {
      for (const other of this.#byLimit.values()) {
        if (other === limiter || typeof other.export !== "function") continue;
        const state = other.export(k);
        if (state === null) continue;
        limiter.import(k, state);
        other.reset(k);
      }
    }
  }

  /** The limiter for a limit value and name (made once per pair, up to MAX_LIMITERS). */
  forLimit(limit, name) {
    if (name !== undefined && typeof name !== "string") throw fail("identifier", name, "a string");
    const id = `${limit}\u0000${name}`;
    let l = this.#byLimit.get(id);
    if (l !== undefined) return l;
    if (this.#byLimit.size >= MAX_LIMITERS) {
      throw new RangeError(`limit and identifier gave more than ${MAX_LIMITERS} distinct values: each gets a limiter of its own; key per-client quotas by a limiter per tier instead`);
    }
    l = this.#make(limit, name);
    this.#byLimit.set(id, l);
    return l;
  }

  #make(limit, name) {
    const named = name ?? (this.#erlMode && typeof limit === "number" ? erlIdentifier(limit, this.windowMs) : undefined);
    if (this.#erlStore !== null) {
      if (typeof limit !== "number" || !(limit >= 0)) throw fail("limit", limit, "a number", typeof limit === "number" ? "out_of_range" : "invalid_type", TypeError);
      const counter = new ErlStoreLimiter(this.#erlStore, { limit, name: named ?? "default", windowMs: this.#windowMs });
      return applyControls(counter, { onDecision: this.#spec.onDecision }, true, Controls);
    }
    if (limit === 0) return applyControls(denyAll(named ?? "default", this.windowMs), this.#spec, false, Controls);
    // A limit given beside quota or limits goes to the core, which refuses the pair.
    const options = { ...this.#spec };
    if (limit !== undefined) options.limit = limit;
    else delete options.limit;
    if (named !== undefined) options.name = named;
    else delete options.name;
    if (this.#erlMode) Object.assign(options, { algorithm: "fixed-window", align: "first-hit" });
    if (this.#store === undefined) return new RateLimiter(options);
    return new AsyncRateLimiter({ ...options, store: this.#store });
  }

  /** A limiter of the same limits with limit 1, to learn the window's length in milliseconds. */
  #probe() {
    const options = { ...this.#spec };
    if (options.limits === undefined && options.quota === undefined) options.limit = 1;
    delete options.name;
    if (this.#erlMode) options.algorithm = "fixed-window";
    return new RateLimiter(options);
  }

  /** Every limiter made so far (one, unless `limit` or `identifier` is a function). */
  get all() {
    return [...this.#byLimit.values(), ...(this.fixed !== null && !this.#byLimit.size ? [this.fixed] : [])];
  }

  /** express-rate-limit's `resetKey`: forgets `key` in every limiter. */
  async reset(key) {
    if (this.#erlStore !== null) return this.#erlStore.resetKey(key);
    await Promise.all(this.all.map((l) => l.reset(key)));
  }

  /** express-rate-limit's `getKey`: `{ totalHits, resetTime }` of `key`, or undefined when it holds nothing. */
  async get(key) {
    if (this.#erlStore !== null) {
      if (typeof this.#erlStore.get !== "function") throw new Error("The current store does not support the get/getKey method");
      return this.#erlStore.get(key);
    }
    for (const l of this.all) {
      if (typeof l.export === "function" && l.export(key) === null) continue;
      const d = await l.peek(key);
      if (typeof l.export !== "function" && d.remaining === d.limit) continue;
      return { totalHits: d.limit - d.remaining, resetTime: new Date(d.resetAt) };
    }
    return undefined;
  }
}
