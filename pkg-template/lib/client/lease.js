// `LeasedPacer`: a Pacer whose rate follows capacity leases from the tollgate Worker
// (`/v1/pools/{pool}/leases`), so uncoordinated holders share one capacity.
//
// Which partitions count, from when and until when, is the Rust core's decision
// (`tollgate::lease_holder`, through the wasm `LeaseHolder`): a lease is measured from when
// its request was sent, nothing starts from `sent + ttl - renewMargin` on unless renewed, and
// a newly granted partition counts one window after the answer (its previous holder's last
// starts are still in the service's window until then). When each piece of work starts is
// the core's `Pacer`. This module owns what is JavaScript's: when to ask the pool (the
// calls themselves are lib/client/pool-client.js), the renewal timer, the FIFO queue, AbortSignals.
import { extras } from "../extras.js";
import { DEFAULT_MAX_QUEUE, Pacer, bad, costError, costOf, durationString, enqueue, maxQueueOf, paced, release } from "./pacer.js";
import { sleep as realSleep } from "../limiter/wait.js";
import { LeaseError, PoolClient, baseUrl } from "./pool-client.js";
import { known, optionError } from "../contract/options.js";

export { LeaseError };

/** The longest a waiter idles before looking again when nothing is expected to change. */
const IDLE_MS = 60_000;
/** A marker reason for waking the queue's head to plan again. */
const REPLAN = Symbol("replan");

function wholeAtLeast(field, value, min) {
  if (typeof value !== "number") throw bad("invalid_type", field, value, "a number");
  if (!(Number.isInteger(value) && value >= min)) {
    throw optionError("out_of_range", field, `${field} must be a whole number of at least ${min}, got ${value}`);
  }
  return value;
}

function nonEmptyString(field, value) {
  if (typeof value !== "string") throw bad("invalid_type", field, value, "a string");
  // An empty string is a length out of range (1 to the most the Worker takes).
  if (value.length === 0) throw optionError("out_of_range", field, `${field} must not be empty`);
  return value;
}

function fn(field, value) {
  if (typeof value !== "function") throw bad("invalid_type", field, value, "a function");
  return value;
}

export class LeasedPacer {
  /** The pool's endpoints for this holder. */
  #client;
  #partitions;
  #ttlMs;
  #grain;
  #maxQueue;
  #now;
  #sleep;
  #loopSleep;
  #renewEvery;
  #backoffMin;
  /** The core's view of what is held (wasm LeaseHolder). */
  #holder;
  /** The inner Pacer, made at the first usable rate (the pool's window is known then). */
  #inner = null;
  #innerRate = 0;
  #costLimits = new Map();
  #pendingPause = 0;
  /** Waiters not yet released, first in first out: { cost, resolve, reject, signal, onAbort }. */
  #queue = [];
  #pumping = false;
  /** Aborted to wake the queue's head: the lease changed, the head left, or closing. */
  #wake = null;
  #stop = new AbortController();
  #state = "idle"; // idle | running | failed | closed
  #failure = null;
  #loop = null;
  #first;
  #settleFirst;
  /** Whether the pool may hold partitions for this holder (a grant's outcome not known counts). */
  #mayHold = false;
  #lastError = null;
  #closing = null;

  /** `options`: `LeasedPacerOptions` (types/lease.d.ts). */
  constructor(options) {
    if (options === null || typeof options !== "object") {
      throw bad("invalid_type", "options", options, "an object with url, pool, holder, partitions and ttlMs");
    }
    known(options, ["url", "pool", "holder", "partitions", "ttlMs", "token", "grain", "renewMargin", "maxQueue", "fetch", "now", "sleep"]);
    const { url, pool, holder, partitions, ttlMs, token, grain, renewMargin, maxQueue = DEFAULT_MAX_QUEUE } = options;
    const base = baseUrl(url);
    nonEmptyString("pool", pool);
    nonEmptyString("holder", holder);
    const bytes = new TextEncoder().encode(holder).length;
    if (bytes > 128) throw optionError("out_of_range", "holder", `holder must be at most 128 bytes of UTF-8, got ${bytes} bytes`);
    this.#partitions = wholeAtLeast("partitions", partitions, 1);
    this.#ttlMs = wholeAtLeast("ttlMs", ttlMs, 3);
    const margin = renewMargin === undefined ? Math.min(1000, Math.floor(ttlMs / 5)) : wholeAtLeast("renewMargin", renewMargin, 0);
    if (margin > ttlMs / 2) throw optionError("out_of_range", "renewMargin", `renewMargin must be at most half of ttlMs (${ttlMs / 2}), got ${margin}`);
    if (token !== undefined) nonEmptyString("token", token);
    this.#grain = grain === undefined ? undefined : durationString("grain", grain);
    // The grain is checked against the pool's window at the first grant; its form now.
    if (this.#grain !== undefined) new Pacer({ rate: "1/d", grain: this.#grain });
    maxQueueOf(maxQueue);
    this.#maxQueue = maxQueue;
    const fetchFn = options.fetch === undefined ? globalThis.fetch : fn("fetch", options.fetch);
    if (typeof fetchFn !== "function") throw optionError("missing_field", "fetch", "fetch is not available here: pass options.fetch");
    this.#client = new PoolClient({ base, pool, holder, token, fetch: fetchFn });
    this.#now = options.now === undefined ? Date.now : fn("now", options.now);
    this.#sleep = options.sleep === undefined ? realSleep : fn("sleep", options.sleep);
    // The renewal timer alone does not keep Node running: a process that ends without close()
    // lets its leases lapse after the TTL, as a crashed one does.
    this.#loopSleep = options.sleep === undefined ? (ms, signal) => realSleep(ms, signal, true) : this.#sleep;
    this.#renewEvery = Math.max(1, Math.floor(ttlMs / 3));
    this.#backoffMin = Math.min(this.#renewEvery, Math.max(50, Math.min(1000, Math.floor(ttlMs / 10))));
    this.#holder = new (extras().LeaseHolder)(margin);
    this.#first = new Promise((resolve, reject) => (this.#settleFirst = { resolve, reject }));
    this.#first.catch(() => {}); // start() hands it out; an unobserved failure is not unhandled
  }

  /**
   * Starts following the pool (acquire does it on first use): resolves with `status` after
   * the first answer, or rejects with a `LeaseError` the Worker answered that asking again
   * cannot fix (e.g. `unknown_pool`, `unauthorized`). Unreachable: it keeps asking.
   */
  start() {
    if (this.#state === "idle") {
      this.#state = "running";
      this.#loop = this.#leaseLoop();
    }
    return this.#first;
  }

  /** What is held now: partitions, the usable and the held rate, until when, the last error. */
  get status() {
    const now = this.#now();
    return {
      state: this.#state,
      partitions: Array.from(this.#holder.partitions),
      rate: this.#holder.rateAt(now),
      heldRate: this.#holder.heldRate,
      window: this.#holder.windowMs,
      usableUntil: this.#holder.usableUntil,
      queued: this.#queue.length,
      lastError: this.#lastError,
    };
  }

  /** The rate work starts at now: the counted partitions' sum (0 while none is usable). */
  get rate() {
    return this.#holder.rateAt(this.#now());
  }

  /** Waiters not yet released. */
  get queued() {
    return this.#queue.length;
  }

  /**
   * Resolves with the reserved start (epoch ms) when work of `cost` may start under the held
   * leases; FIFO. Rejects with `PacerCostError` when the cost can never fit the held rate,
   * `PacerQueueFullError`, a `LeaseError` (the pool refused for good, or closed), or the
   * signal's reason when aborted (its reservation is given back).
   */
  acquire(cost = 1, { signal } = {}) {
    try {
      costOf(cost);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.#state === "failed") return Promise.reject(this.#failure);
    if (this.#state === "closed") return Promise.reject(this.#closedError());
    if (!signal?.aborted && this.#queue.length < this.#maxQueue) this.start();
    return enqueue(this.#queue, this.#maxQueue, cost, signal, (w) => this.#remove(w, signal.reason), () => this.#pump());
  }

  /** Wraps an async function as `Pacer.pace` does: acquire, call, observe a Response's headers. */
  pace(fnToPace, options) {
    return paced(this, fnToPace, options);
  }

  /** Reads a service's answer (Retry-After, RateLimit, X-RateLimit-*): see `Pacer.observe`. */
  observe(headers) {
    if (this.#inner) return this.#inner.observe(headers);
    // No rate yet: read the headers with a throwaway pacer and apply the pause later.
    const until = new Pacer({ rate: "1/s", now: this.#now }).observe(headers);
    if (until !== null) this.#pendingPause = Math.max(this.#pendingPause, until);
    return until;
  }

  /**
   * Stops: rejects waiters not yet released (LeaseError `closed`), waits for a lease request
   * in flight, then releases what the pool may hold for this holder. Resolves with
   * `{ released }` (partitions given back); rejects with a LeaseError when the release failed
   * (the leases then lapse after their TTL). After a refusal the pool answered for good (the
   * `failed` state) it does not call the pool again: leases lapse after their TTL. Calling it
   * again returns the same promise.
   */
  close() {
    if (this.#closing) return this.#closing;
    const release = this.#state === "running";
    this.#state = "closed";
    this.#stop.abort();
    this.#rejectAll(this.#closedError());
    this.#settleFirst.reject(this.#closedError());
    this.#closing = (async () => {
      await this.#loop;
      this.#holder.lost();
      if (!release || !this.#mayHold) return { released: 0 };
      return { released: await this.#client.release() };
    })();
    return this.#closing;
  }

  #closedError() {
    return new LeaseError("the LeasedPacer is closed", { code: "closed" });
  }

  /** Asks for the partitions (a grant keeps and renews what is held), records the answer. */
  async #ask() {
    const before = this.#mayHold;
    this.#mayHold = true; // until the answer says otherwise: the pool may apply a lost request
    const sent = this.#now();
    let a;
    try {
      a = await this.#client.grant(this.#partitions, this.#ttlMs);
    } catch (e) {
      if (e instanceof LeaseError && e.status >= 400 && e.status < 500) this.#mayHold = before; // refused: nothing changed
      throw e;
    }
    const received = this.#now();
    const ttl = a.partitions.length > 0 ? Math.min(this.#ttlMs, a.ttlMs) : this.#ttlMs;
    try {
      this.#holder.granted(sent, received, a.partitions, a.rate, a.window, ttl);
    } catch (e) {
      throw new LeaseError(`the pool's answer is not a lease: ${e.message}`, { code: "bad_answer", status: 200 });
    }
    this.#mayHold = a.partitions.length > 0;
    return { sent, held: a.partitions.length };
  }

  /**
   * Grants, then renews every third of the TTL; while nothing is held, asks again with backoff.
   * Every wait is timed from the previous ask's send, not its answer: the pool keeps a holder's
   * request on record for half its TTL (that is how it knows who else wants a share), so a
   * starved holder whose asks were a round trip plus a backoff apart could drop off the record
   * between asks, and a holder that had given partitions back for it would take them again.
   */
  async #leaseLoop() {
    let backoff = this.#backoffMin;
    while (this.#state === "running") {
      const asked = this.#now();
      let answer = null; // stays null when the ask failed for now
      try {
        answer = await this.#ask();
        this.#lastError = null;
        this.#settleFirst.resolve(this.status);
        this.#changed();
      } catch (e) {
        this.#lastError = e;
        if (!(e instanceof LeaseError) || !e.transient) {
          this.#fail(e);
          return;
        }
      }
      let wait;
      if (answer !== null && answer.held > 0) {
        backoff = this.#backoffMin;
        wait = answer.sent + this.#renewEvery - this.#now();
      } else {
        wait = asked + backoff - this.#now();
        backoff = Math.min(backoff * 2, this.#renewEvery);
      }
      try {
        await this.#loopSleep(Math.max(0, wait), this.#stop.signal);
      } catch {
        // closing
      }
    }
  }

  #fail(e) {
    if (this.#state !== "running") return;
    this.#state = "failed";
    this.#failure = e;
    this.#holder.lost();
    this.#settleFirst.reject(e);
    this.#rejectAll(e);
  }

  /** The lease changed: wake the head to plan again. */
  #changed() {
    this.#wake?.abort(REPLAN);
  }

  #rejectAll(error) {
    const waiters = this.#queue.splice(0);
    for (const w of waiters) release(w, error);
    this.#wake?.abort(REPLAN);
  }

  #remove(waiter, reason) {
    const i = this.#queue.indexOf(waiter);
    if (i < 0) return;
    this.#queue.splice(i, 1);
    waiter.reject(reason);
    if (i === 0) this.#wake?.abort(REPLAN); // the head: end its wait or its reservation
  }

  /** Points the inner pacer at `rate` per the pool's window (made at the first rate). */
  #follow(rate) {
    const limit = { limit: rate, window: this.#holder.windowMs };
    if (this.#inner === null) {
      this.#inner = new Pacer({ rate: limit, grain: this.#grain, maxQueue: 1, now: this.#now, sleep: this.#sleep });
      if (this.#pendingPause > 0) this.#inner.pauseUntil(this.#pendingPause);
    } else if (rate !== this.#innerRate) {
      this.#inner.setRate(limit);
    }
    this.#innerRate = rate;
  }

  /** The largest cost that fits one grain at `rate` (the core's rule, asked of a pacer). */
  #maxCostAt(rate) {
    const key = `${rate}/${this.#holder.windowMs}`;
    let max = this.#costLimits.get(key);
    if (max === undefined) {
      max = new Pacer({ rate: { limit: rate, window: this.#holder.windowMs }, grain: this.#grain }).maxCost;
      this.#costLimits.set(key, max);
    }
    return max;
  }

  /** Sleeps until `at` (epoch ms; 0: nothing expected) or until woken. */
  async #idle(wake, at) {
    const ms = at > 0 ? Math.max(0, Math.ceil(at - this.#now())) : IDLE_MS;
    try {
      await this.#sleep(ms, wake.signal);
    } catch {
      // woken
    }
  }

  /**
   * Releases waiters in order. The head waits while nothing usable is held, takes a
   * reservation from the inner pacer only if it starts before the lease's usable end, and
   * plans again whenever the lease changes (a renewal, a warm-up ending, a lapse).
   */
  async #pump() {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0 && (this.#state === "running" || this.#state === "idle")) {
        const head = this.#queue[0];
        const wake = new AbortController();
        this.#wake = wake;
        const now = this.#now();
        const rate = this.#holder.rateAt(now);
        const next = this.#holder.nextChange(now);
        const held = this.#holder.heldRate;
        if (held > 0 && head.cost > this.#maxCostAt(held)) {
          const where = ` at the held rate (${held} per ${this.#holder.windowMs} ms)`;
          release(this.#queue.shift(), costError(head.cost, this.#maxCostAt(held), where, "ask for more partitions, raise the grain, or split the work"));
          continue;
        }
        if (rate === 0) {
          await this.#idle(wake, next); // nothing usable: warming up, lapsed, or nothing held
          continue;
        }
        this.#follow(rate);
        const until = this.#holder.usableUntil;
        if (head.cost > this.#inner.maxCost || this.#inner.peek(head.cost) >= until) {
          await this.#idle(wake, next); // partitions still warming up, or wait for the renewal
          continue;
        }
        // Reserve and sleep in the inner pacer; a lease change or the next warm-up wakes it.
        if (next > 0) this.#sleep(Math.max(0, Math.ceil(next - now)), wake.signal).then(() => wake.abort(REPLAN), () => {});
        let start;
        try {
          start = await this.#inner.acquire(head.cost, { signal: wake.signal });
        } catch (e) {
          if (!wake.signal.aborted && this.#queue[0] === head) {
            release(this.#queue.shift(), e); // not woken: the inner pacer refused this waiter
          }
          continue; // woken: the inner pacer gave the reservation back; plan again
        } finally {
          wake.abort(REPLAN); // ends the warm-up timer
        }
        if (this.#queue[0] !== head || start >= until) continue; // (a ms late: stays unused)
        release(this.#queue.shift(), undefined, start);
      }
    } catch (e) {
      this.#fail(e); // e.g. a grain longer than the pool's window: a configuration error
    } finally {
      this.#pumping = false;
      this.#wake = null;
    }
  }
}
