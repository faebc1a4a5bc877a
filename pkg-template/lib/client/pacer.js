// `Pacer`: the client side of rate limiting. A job calling a throttled
// service awaits `acquire(cost)` before each call instead of retrying rejections blindly.
// When each call may start is the Rust core's decision (`wasm/src/pacer.rs`); this module
// owns what is JavaScript's: the FIFO queue, sleeping, AbortSignals and reading responses.
import { extras } from "../extras.js";
import { known, optionError, show, whole } from "../contract/options.js";
import { sleep as realSleep } from "../limiter/wait.js";
import { RateLimiter } from "../limiter/rate-limiter.js";

/** The one key of a pacer's own in-flight limit (its limiter holds nothing else). */
const SLOTS_KEY = "in-flight";

/** A slot's renewal loop, started by `pace(fn)` (module-private: hand-paced slots renew by hand). */
const KEEP = Symbol("keep");

/** Why `acquire` rejected: the queue already holds `maxQueue` waiters. */
export class PacerQueueFullError extends Error {
  constructor(maxQueue) {
    super(`the pacer's queue is full: ${maxQueue} waiters already (maxQueue); retry later or raise maxQueue`);
    this.name = "PacerQueueFullError";
    this.code = "pacer_queue_full";
    this.maxQueue = maxQueue;
  }
}

/** Why `acquire` rejected: the cost is above what one grain releases, so waiting never helps. */
export class PacerCostError extends RangeError {
  constructor(message, cost, maxCost) {
    super(message);
    this.name = "PacerCostError";
    this.code = "pacer_cost_exceeds_capacity";
    this.cost = cost;
    this.maxCost = maxCost;
  }
}

export const DEFAULT_MAX_QUEUE = 1000;

/**
 * The `PacerCostError` of a cost above `max` units per grain; `where` qualifies the rate (a
 * `LeasedPacer`'s held one), `advice` says what would make it fit.
 */
export function costError(cost, max, where = "", advice = "raise the rate or the grain, or split the work") {
  const units = `${max} ${max === 1 ? "unit is" : "units are"}`;
  return new PacerCostError(`cost ${cost} can never be paced${where}: at most ${units} released per grain (${advice})`, cost, max);
}

/**
 * Queues a waiter of `cost` on `queue` and calls `pump`: a promise of its start, rejected at
 * once when `signal` has aborted or `maxQueue` waiters are queued. `onAbort(waiter)` runs when
 * `signal` aborts while it waits.
 */
export function enqueue(queue, maxQueue, cost, signal, onAbort, pump) {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (queue.length >= maxQueue) return Promise.reject(new PacerQueueFullError(maxQueue));
  return new Promise((resolve, reject) => {
    const waiter = { cost, resolve, reject, signal, onAbort: null, reserved: false };
    if (signal) {
      waiter.onAbort = () => onAbort(waiter);
      signal.addEventListener("abort", waiter.onAbort, { once: true });
    }
    queue.push(waiter);
    pump();
  });
}

/** Ends a released waiter's wait: with `error`, or with its `start` when there is none. */
export function release(waiter, error, start) {
  waiter.signal?.removeEventListener("abort", waiter.onAbort);
  if (error === undefined) waiter.resolve(start);
  else waiter.reject(error);
}

/** `pace(fn, { cost, signal })` of `pacer`: acquire, call `fn`, observe a `Response`'s headers. */
export function paced(pacer, fn, { cost = 1, signal } = {}) {
  if (typeof fn !== "function") throw bad("invalid_type", "fn", fn, "a function");
  if (typeof cost !== "function") costOf(cost);
  return async (...args) => {
    const units = typeof cost === "function" ? cost(...args) : cost;
    let result;
    if (pacer.maxInFlight) {
      // The slot is held while `fn` runs and given back when it settles, whatever the outcome;
      // meanwhile its lease is renewed, so a call longer than `leaseTtl` keeps its slot.
      const slot = await pacer.acquireSlot(units, { signal });
      slot[KEEP](signal);
      try {
        result = await fn(...args);
      } finally {
        slot.release();
      }
    } else {
      await pacer.acquire(units, { signal });
      result = await fn(...args);
    }
    if (result !== null && typeof result === "object" && result.headers && typeof result.headers === "object") {
      pacer.observe(result.headers);
    }
    return result;
  };
}

/** A duration as the core reads it: a string ("200ms", "1s") or whole milliseconds. */
export function durationString(field, value) {
  if (typeof value === "string") return value;
  if (typeof value === "number") {
    return `${whole(field, value, " of milliseconds")}ms`;
  }
  throw bad("invalid_type", field, value, 'a duration string such as "200ms" or milliseconds');
}

/**
 * An option error of the pacers (`<field> must be <expected>, got <value>`, the value as
 * `describe` shows it) with the core's `code` and the option's `field` (docs/vocabulary.md).
 */
export function bad(code, field, value, expected, Class = undefined) {
  return optionError(code, field, `${field} must be ${expected}, got ${describe(value)}`, Class);
}

/**
 * Runs `make` (a wasm call reading `rate` and `grain`), giving the core's configuration errors
 * past the spec parser (the extras module's `config_error`, which carries no code, keeping the
 * module small) the code and field the spec parser gives the same mistake: `invalid_value` for
 * a string that does not parse, `out_of_range` for a number out of range; the field is the one
 * the message starts with.
 */
function withCode(make) {
  try {
    return make();
  } catch (e) {
    if ((e instanceof TypeError || e instanceof RangeError) && e.code === undefined) {
      e.code = e instanceof RangeError ? "out_of_range" : "invalid_value";
      e.field = /^grain\b/.test(e.message) ? "grain" : "rate";
    }
    throw e;
  }
}

/** `maxQueue`: a whole number from 0 (a RangeError whatever the mistake, as before the codes). */
export function maxQueueOf(maxQueue) {
  if (Number.isInteger(maxQueue) && maxQueue >= 0) return maxQueue;
  throw bad(typeof maxQueue === "number" ? "out_of_range" : "invalid_type", "maxQueue", maxQueue, "a whole number of at least 0", RangeError);
}

/** `"100/s"` or `{ limit, window }` as the core's `"<limit>/<window>"`. */
export function rateString(rate) {
  if (typeof rate === "string") return rate;
  if (rate !== null && typeof rate === "object" && !Array.isArray(rate)) {
    const { limit, window } = rate;
    if (typeof limit !== "number") throw bad("invalid_type", "rate.limit", limit, "a number");
    return `${whole("rate.limit", limit, "")}/${durationString("rate.window", window)}`;
  }
  throw bad("invalid_type", "rate", rate, 'a string such as "100/s" or { limit, window }');
}

/** A value in a pacer's message: as `show` words it, a number or flag with its type (`number 5`). */
export function describe(v) {
  return v === undefined || typeof v === "string" || typeof v === "object" ? show(v) : `${typeof v} ${String(v)}`;
}

/** `Headers`, a record or `[name, value]` pairs, flattened as the wasm binding takes them. */
function flattenHeaders(headers) {
  const flat = [];
  if (headers === null || typeof headers !== "object") {
    throw bad("invalid_type", "headers", headers, "a Headers, a record or [name, value] pairs");
  }
  if (typeof headers.forEach === "function" && !Array.isArray(headers)) {
    // Headers (and Map): forEach(value, name).
    headers.forEach((value, name) => flat.push(String(name), String(value)));
  } else if (Array.isArray(headers) || typeof headers[Symbol.iterator] === "function") {
    for (const pair of headers) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw optionError("invalid_type", "headers", "headers given as pairs must hold [name, value] arrays");
      }
      flat.push(String(pair[0]), String(pair[1]));
    }
  } else {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && value !== null) flat.push(name, Array.isArray(value) ? value.join(", ") : String(value));
    }
  }
  return flat;
}

export function costOf(cost) {
  if (typeof cost !== "number") throw bad("invalid_cost", "cost", cost, "a number");
  if (!(Number.isInteger(cost) && cost >= 1)) throw optionError("invalid_cost", "cost", `cost must be a whole number of at least 1, got ${cost}`, RangeError);
  return cost;
}

export class Pacer {
  #wasm;
  #now;
  #sleep;
  #maxQueue;
  /** Waiters not yet released, first in first out: { cost, resolve, reject, signal, onAbort }. */
  #queue = [];
  #pumping = false;
  /** The head's sleep, aborted when the head's own signal fires. */
  #headSleep = null;
  #pausedUntil = 0;
  /** The in-flight limit (`maxInFlight`): an in-memory limiter of one concurrency limit, or null. */
  #slots = null;
  #maxInFlight = null;

  /**
   * `options`: `PacerOptions` (types/pacer.d.ts): `rate`, `grain`, `maxQueue`, `now`, `sleep`,
   * `maxInFlight` and `leaseTtl` (a concurrency limit on calls in flight, docs/concurrency.md).
   */
  constructor(options) {
    if (options === null || typeof options !== "object") {
      throw bad("invalid_type", "options", options, "an object with a rate");
    }
    known(options, ["rate", "grain", "maxQueue", "now", "sleep", "maxInFlight", "leaseTtl"]);
    const { rate, grain, maxQueue = DEFAULT_MAX_QUEUE, now = Date.now, sleep = realSleep, maxInFlight, leaseTtl } = options;
    if (rate === undefined) throw optionError("missing_field", "rate", 'rate is required, e.g. { rate: "100/s" }');
    maxQueueOf(maxQueue);
    if (typeof now !== "function") throw bad("invalid_type", "now", now, "a function returning epoch ms");
    if (typeof sleep !== "function") throw bad("invalid_type", "sleep", sleep, "a function (ms, signal) => Promise");
    const rateText = rateString(rate);
    const grainText = grain === undefined ? "" : durationString("grain", grain);
    this.#wasm = withCode(() => new (extras().Pacer)(rateText, grainText));
    this.#maxQueue = maxQueue;
    this.#now = now;
    this.#sleep = sleep;
    if (maxInFlight !== undefined) {
      // The core decides each slot (the concurrency limit's acquire and release); the pacer
      // only waits for one. Its own checks give `maxInFlight`'s mistakes their field.
      if (typeof maxInFlight !== "number") throw bad("invalid_type", "maxInFlight", maxInFlight, "a whole number of at least 1");
      if (!(Number.isInteger(maxInFlight) && maxInFlight >= 1)) throw bad("out_of_range", "maxInFlight", maxInFlight, "a whole number of at least 1", RangeError);
      const limit = { algorithm: "concurrency", limit: maxInFlight };
      if (leaseTtl !== undefined) limit.leaseTtl = leaseTtl;
      this.#slots = new RateLimiter(limit);
      this.#maxInFlight = maxInFlight;
    } else if (leaseTtl !== undefined) {
      throw optionError("missing_field", "maxInFlight", "leaseTtl bounds how long a call holds one of maxInFlight slots: give maxInFlight too");
    }
  }

  /** The most calls in flight at once (`maxInFlight`), or null when unbounded. */
  get maxInFlight() {
    return this.#maxInFlight;
  }

  /** Slots held now (calls in flight, or released to start and not yet settled); 0 when unbounded. */
  get inFlight() {
    if (!this.#slots) return 0;
    // A peek's `remaining` is what one more call would leave; a denial, every slot held.
    const d = this.#slots.peek(SLOTS_KEY, { now: this.#now() });
    return d.allowed ? d.limit - d.remaining - 1 : d.limit;
  }

  /** The rate paced to, as "<limit>/<window in ns>ns". */
  get rate() {
    return this.#wasm.rate;
  }

  /** The largest cost one piece of work may have: the units released per grain. */
  get maxCost() {
    return this.#wasm.maxCost;
  }

  /** Waiters not yet released. */
  get queued() {
    return this.#queue.length;
  }

  /**
   * Resolves when work of `cost` may start, with the start the pacer reserved for it (epoch
   * ms, a whole millisecond at or just before the resolution; a `LeasedPacer` checks it
   * against its lease). Waiters are released first in, first out. Rejects
   * with `PacerQueueFullError` when `maxQueue` waiters are queued, `PacerCostError` when the
   * cost can never fit, or the signal's reason when aborted (its reservation is given back).
   */
  acquire(cost = 1, { signal } = {}) {
    if (this.#slots) {
      return Promise.reject(new TypeError("a pacer with maxInFlight gives each call a slot to release: use pace(fn) or acquireSlot(cost)"));
    }
    return this.#enqueue(cost, signal);
  }

  /**
   * As `acquire`, on a pacer with `maxInFlight`: resolves with `{ start, lease, release }` once
   * a slot is free and the rate lets the work start. Call `release()` when the work settles
   * (once; more calls do nothing): the next waiter is admitted then. A slot not released frees
   * itself after `leaseTtl`.
   */
  acquireSlot(cost = 1, { signal } = {}) {
    if (!this.#slots) return Promise.reject(new TypeError("acquireSlot needs a pacer with maxInFlight: use acquire(cost)"));
    return this.#enqueue(cost, signal);
  }

  #enqueue(cost, signal) {
    try {
      costOf(cost);
      if (cost > this.#wasm.maxCost) throw costError(cost, this.#wasm.maxCost);
    } catch (e) {
      return Promise.reject(e);
    }
    return enqueue(this.#queue, this.#maxQueue, cost, signal, (w) => this.#abort(w), () => this.#pump());
  }

  /**
   * Wraps an async function: each call acquires `cost` (a number, or a function of the call's
   * arguments), then calls `fn`; when the result has headers (a `Response`), they are observed
   * so the service's Retry-After / RateLimit / X-RateLimit-* push the schedule back.
   */
  pace(fn, options) {
    return paced(this, fn, options);
  }

  /**
   * Reads a service's response headers; returns the epoch ms before which nothing starts when
   * they asked for a pause (Retry-After, RateLimit r=0, X-RateLimit-Remaining: 0), else null.
   */
  observe(headers) {
    const until = this.#wasm.observeHeaders(this.#now(), flattenHeaders(headers));
    if (until === 0) return null;
    this.#pausedUntil = Math.max(this.#pausedUntil, until);
    return until;
  }

  /** Nothing starts before `until` (epoch ms). */
  pauseUntil(until) {
    if (typeof until !== "number") throw bad("invalid_now", "until", until, "epoch milliseconds");
    this.#wasm.pauseUntil(until);
    this.#pausedUntil = Math.max(this.#pausedUntil, until);
  }

  /** Follows a new rate (e.g. the sum of leased partitions); work already started still counts. */
  setRate(rate) {
    const text = rateString(rate);
    withCode(() => this.#wasm.setRate(text));
  }

  /** When work of `cost` could start if asked now (epoch ms), reserving nothing. */
  peek(cost = 1) {
    costOf(cost);
    if (cost > this.#wasm.maxCost) throw costError(cost, this.#wasm.maxCost);
    return this.#wasm.peek(this.#now(), cost);
  }

  #abort(waiter) {
    const i = this.#queue.indexOf(waiter);
    if (i < 0) return; // already released
    this.#queue.splice(i, 1);
    if (waiter.reserved) {
      // The head, sleeping until its start: give the reservation back.
      this.#wasm.cancel(this.#now(), waiter.cost);
    }
    if (waiter.lease) this.#releaseSlot(waiter.lease);
    // The head sleeps (for its start, or for a slot): end the sleep.
    if (i === 0) this.#headSleep?.abort();
    waiter.reject(waiter.signal.reason);
  }

  /**
   * Releases waiters in order. Only the head holds a reservation, so an abort or a pause
   * asked for by the service never lets a later waiter overtake an earlier one.
   */
  async #pump() {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0) {
        const head = this.#queue[0];
        // A slot first (the core's decision), then the rate: a call never starts later than
        // its reservation, and a slot is held only from just before the start.
        if (this.#slots && !(await this.#takeSlot(head))) continue;
        let start = this.#wasm.reserve(this.#now(), head.cost);
        head.reserved = true;
        // Sleep until the start; if the service asked for a pause meanwhile, re-reserve.
        while (this.#queue[0] === head) {
          const now = this.#now();
          if (start <= now) {
            if (this.#pausedUntil > start) {
              this.#wasm.cancel(now, head.cost);
              start = this.#wasm.reserve(now, head.cost);
              continue;
            }
            break;
          }
          const ctl = new AbortController();
          this.#headSleep = ctl;
          try {
            await this.#sleep(start - now, ctl.signal);
          } catch {
            // Aborted: the head left the queue (see #abort); the loop looks again.
          } finally {
            this.#headSleep = null;
          }
        }
        if (this.#queue[0] === head) {
          this.#queue.shift();
          release(head, undefined, this.#slots ? this.#slot(start, head.lease, head.expiresAt) : start);
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * Waits until the core admits `head` to a slot (true), sleeping until a release or the
   * nearest lease's expiry between asks; false when `head` left the queue meanwhile.
   */
  async #takeSlot(head) {
    while (this.#queue[0] === head) {
      const d = this.#slots.acquire(SLOTS_KEY, { now: this.#now() });
      if (d.allowed) {
        head.lease = d.lease;
        head.expiresAt = d.expiresAt;
        return true;
      }
      const ctl = new AbortController();
      this.#headSleep = ctl;
      try {
        await this.#sleep(Math.max(1, Math.ceil(d.retryAfter)), ctl.signal);
      } catch {
        // A release, or the head aborted: ask again (or leave).
      } finally {
        this.#headSleep = null;
      }
    }
    return false;
  }

  /**
   * What `acquireSlot` resolves with: the start, the lease, its one release, and `renew()`
   * (the new expiry, epoch ms; throws `unknown_lease` once the lease lapsed or was released).
   */
  #slot(start, lease, expiresAt) {
    let held = true;
    /** Ends the renewal loop's sleep: the release, or the call's own abort. */
    const keeping = new AbortController();
    return {
      start,
      lease,
      release: () => {
        if (!held) return;
        held = false;
        keeping.abort();
        this.#releaseSlot(lease);
      },
      renew: () => this.#slots.renew(lease, { now: this.#now() }).expiresAt,
      [KEEP]: (signal) => {
        if (signal?.aborted) return;
        signal?.addEventListener("abort", () => keeping.abort(), { once: true, signal: keeping.signal });
        this.#keep(lease, expiresAt, keeping.signal);
      },
    };
  }

  /**
   * Renews `lease` a third of its time to live before each expiry until `stop` fires (the
   * release, or the call's own signal: an aborted call that does not settle loses its slot at
   * the lease's expiry instead of holding it for good), so the core keeps counting a long call.
   */
  async #keep(lease, expiresAt, stop) {
    try {
      while (!stop.aborted) {
        // A third of what is left: two more chances before expiry if a wake-up comes late.
        await this.#sleep(Math.max(1, Math.floor((expiresAt - this.#now()) / 3)), stop);
        if (stop.aborted) return;
        expiresAt = this.#slots.renew(lease, { now: this.#now() }).expiresAt;
      }
    } catch {
      // Stopped while asleep, or the lease lapsed (a wake-up later than its expiry): the core
      // freed the slot, and the call runs on uncounted until it settles.
    }
  }

  /** Gives a slot back to the core and wakes the head if it waits for one. */
  #releaseSlot(lease) {
    this.#slots.release(lease, { now: this.#now() });
    this.#headSleep?.abort();
  }
}
