// The limiter a `RedisStore` returns (exact mode, `syncRate` 0 or absent): every key's state
// is the core's encoded bytes in one Redis string. A hit is decided by the wasm core over the
// bytes this process last saw, then written with one compare-and-swap script call
// (redis-script.js); when another writer got there first, the script answers with the current
// bytes and the core decides again over them. So the common case is one round trip, a
// conflict one more, and no algorithm exists anywhere but in the core.
import { validateKeys } from "./wasm.js";
import { keysOf, callOptions } from "./options.js";
import { readDecision } from "./decision.js";
import { extras } from "./extras.js";
import { extrasOutView } from "./extras-view.js";
import { headersFor } from "./headers.js";
import { RedisStateError, RedisUnavailableError, withTimeout } from "./redis-errors.js";
import { fromValue } from "./redis-value.js";
import { keySlot } from "./redis-client.js";

/** Marks an error that must reach the caller whatever the failure mode (bad input, bad state). */
class Passthrough {
  constructor(error) {
    this.error = error;
  }
}

export class RedisLimiter {
  #store;
  #policy;
  #wasm;
  #names;
  #advertised;
  /**
   * Redis key -> the bytes last seen there (`null`: absent) and when Redis last confirmed them
   * (the store's local clock); bounded, oldest confirmation out first. The core's blocked-key
   * cache (`tollgate::blocked`, the Worker's too), in the extras module.
   */
  #cache;
  /** Redis key -> this process's hits on it waiting for the next batch (see #enqueue). */
  #queues = new Map();

  /** @internal Use `new RateLimiter({ ..., store })` or `store.limiter(options)`. */
  constructor(store, policy) {
    this.#store = store;
    this.#policy = policy;
    this.#wasm = policy._store;
    this.#names = policy.names;
    this.#advertised = policy.advertised();
    this.#cache = new (extras().BlockedCache)(Math.min(store._maxCachedKeys, 0xffff_ffff), store._blockedCacheMs);
  }

  /** The low-level policy this limiter decides by. */
  get policy() {
    return this.#policy;
  }

  /** Decides a hit and counts it if allowed; resolves to the decision. */
  limit(key, options) {
    return this.#run(key, options, (keys, rkeys, now, cost, hit) =>
      rkeys.length === 1 ? this.#enqueue(keys[0], rkeys[0], now, cost, hit) : this.#limit(keys, rkeys, now, cost),
    );
  }

  /** The decision `limit` would make, counting nothing (reads the keys: one round trip). */
  peek(key, options) {
    return this.#run(key, options, async (keys, rkeys, now, cost) => {
      const states = await this.#read(rkeys);
      this.#decodeOr(() => this.#wasm.peek(states, now, cost), rkeys, states);
      return readDecision(this.#wasm.outPtr, this.#names, keys, extrasOutView());
    });
  }

  /** Gives back `cost` units, never beyond fresh. */
  async refund(key, options) {
    const keys = keysOf(key);
    const { cost } = callOptions(options);
    validateKeys(keys);
    const rkeys = keys.map((k) => this.#store._key(k));
    checkSlots(this.#store, keys, rkeys);
    await this.#guard(rkeys, async () => {
      const now = options?.now ?? (await this.#store._now());
      let states = rkeys.map((k) => this.#cached(k));
      for (let attempt = 0; attempt < this.#store._maxAttempts; attempt++) {
        const next = this.#decodeOr(() => this.#wasm.refund(states, now, cost), rkeys, states);
        const ttls = next.map((s) => (s === null ? 0 : Math.max(1, Math.ceil(this.#policy.longestWindowMs))));
        const current = await this.#store._script.swap(rkeys, states, next, ttls);
        if (current === null) return this.#remember(rkeys, next);
        states = current;
      }
      throw this.#contention();
    });
  }

  /** Forgets the key(s) in Redis. */
  async reset(key) {
    const keys = keysOf(key);
    validateKeys(keys);
    const rkeys = keys.map((k) => this.#store._key(k));
    await this.#guard(rkeys, async () => {
      for (const k of rkeys) this.#cache.delete(k);
      const client = this.#store._client;
      // On a cluster, one DEL per key: the keys of a reset need not share a slot.
      if (this.#store._cluster) await Promise.all(rkeys.map((k) => client.send(["DEL", k])));
      else await client.send(["DEL", ...rkeys]);
    });
  }

  /** The draft-10 `RateLimit`/`RateLimit-Policy` and legacy `X-RateLimit-*` headers. */
  headers(decision, now = Date.now()) {
    return headersFor(decision, this.#advertised, now);
  }

  /** Nothing to stop in this mode (the client is the caller's to close). */
  async close() {}

  // --- the decision --------------------------------------------------------------------------

  /** Shared by limit and peek: checks input, takes the time, applies the failure mode. */
  async #run(key, options, decide) {
    const keys = keysOf(key);
    const { cost } = callOptions(options);
    checkKeys(keys);
    const rkeys = keys.map((k) => this.#store._key(k));
    checkSlots(this.#store, keys, rkeys);
    const timeout = this.#store._timeoutMs;
    let now;
    try {
      // The local clock answers at once; Redis's (clock: "redis") may ask TIME first.
      const t = options?.now ?? this.#store._now();
      now = typeof t === "number" ? t : await withTimeout(t, timeout);
    } catch (e) {
      return this.#degrade(keys, rkeys, this.#store._local(), cost, e);
    }
    // `hit.abandoned`: the caller has given up (timeout); a queued hit is then not sent late.
    const hit = { abandoned: false };
    try {
      return await withTimeout(decide(keys, rkeys, now, cost, hit), timeout);
    } catch (e) {
      hit.abandoned = true;
      return this.#degrade(keys, rkeys, now, cost, e);
    }
  }

  /**
   * One key's hits from this process are decided in arrival order, in batches: while one
   * compare-and-swap is in flight, the hits that arrive queue up; then the core decides all of
   * them one after another over the running state (exactly as in memory), and one
   * compare-and-swap writes the result. On a conflict the whole batch is decided again over the
   * bytes Redis answered with. So a hot key costs one round trip per batch, not per hit, and
   * this process's hits never conflict with each other.
   */
  #enqueue(key, rkey, now, cost, hit) {
    let queue = this.#queues.get(rkey);
    if (queue === undefined) {
      queue = [];
      this.#queues.set(rkey, queue);
      queueMicrotask(() => this.#drain(rkey, queue));
    }
    return new Promise((resolve, reject) => {
      hit.key = key;
      hit.now = now;
      hit.cost = cost;
      hit.resolve = resolve;
      hit.reject = reject;
      queue.push(hit);
    });
  }

  async #drain(rkey, queue) {
    while (queue.length > 0) {
      const batch = queue.splice(0).filter((h) => !h.abandoned);
      if (batch.length === 0) continue;
      try {
        await this.#decideBatch(rkey, batch);
      } catch (e) {
        for (const h of batch) h.reject(e);
      }
    }
    this.#queues.delete(rkey);
  }

  async #decideBatch(rkey, batch) {
    const w = this.#wasm;
    const rkeys = [rkey];
    let start = [this.#cached(rkey)];
    let fromCache = true;
    for (let attempt = 0; attempt < this.#store._maxAttempts; attempt++) {
      let states = start;
      let changed = false;
      let ttl = 0;
      const results = new Array(batch.length);
      for (let i = 0; i < batch.length; i++) {
        const h = batch[i];
        let next;
        try {
          next = w.check(states, h.now, h.cost);
        } catch (e) {
          // This hit's own error (a cost that never fits, a bad `now`) is this hit's alone;
          // bytes that are not state fail the whole batch.
          const err = this.#stateError(e, rkeys, states);
          if (err !== null) throw new Passthrough(err);
          results[i] = new Passthrough(e);
          continue;
        }
        const d = readDecision(w.outPtr, this.#names, [h.key], extrasOutView());
        results[i] = d;
        if (d.allowed) {
          states = next;
          changed = true;
          ttl = states[0] === null ? 0 : Math.max(1, Math.ceil(w.lastExpiresAt()[0] - h.now));
        }
      }
      let current = null;
      const confirm = !changed && fromCache && !this.#trusted(rkeys);
      if (changed) current = await this.#store._swapOne(rkey, start[0], states[0], ttl);
      else if (confirm) current = await this.#store._swapOne(rkey, start[0], start[0], 1);
      // Denied over bytes read from Redis just now, or over cached bytes that Redis confirmed
      // recently (the blocked-key cache: others only add hits, so the key is at least as
      // blocked as last seen, unless another process reset it; hence the bound): final.
      if (current === null) {
        if (changed) this.#remember(rkeys, states);
        else if (confirm) this.#remember(rkeys, start); // confirmed just now
        for (let i = 0; i < batch.length; i++) {
          const r = results[i];
          if (r instanceof Passthrough) batch[i].reject(r);
          else batch[i].resolve(r);
        }
        return;
      }
      this.#remember(rkeys, current);
      start = current;
      fromCache = false;
    }
    throw this.#contention();
  }

  async #limit(keys, rkeys, now, cost) {
    const w = this.#wasm;
    let states = rkeys.map((k) => this.#cached(k));
    let fromCache = true;
    for (let attempt = 0; attempt < this.#store._maxAttempts; attempt++) {
      const next = this.#decodeOr(() => w.check(states, now, cost), rkeys, states);
      const d = readDecision(w.outPtr, this.#names, keys, extrasOutView());
      if (!d.allowed) {
        // Denied: nothing to write. Over bytes read from Redis just now, that is final. Over
        // cached bytes that Redis confirmed recently it is too (the blocked-key cache): others
        // only add hits, so the keys are at least as blocked as this process last saw them,
        // unless another process reset or refunded them, which the bound puts a limit on.
        if (!fromCache || this.#trusted(rkeys)) return d;
        const current = await this.#store._script.swap(rkeys, states, states, ttlsOf(states));
        if (current === null) {
          this.#remember(rkeys, states); // confirmed just now
          return d;
        }
        states = current;
        fromCache = false;
        continue;
      }
      const expires = w.lastExpiresAt();
      const ttls = next.map((s, i) => (s === null ? 0 : Math.max(1, Math.ceil(expires[i] - now))));
      const current = await this.#store._script.swap(rkeys, states, next, ttls);
      if (current === null) {
        this.#remember(rkeys, next);
        return d;
      }
      states = current;
      fromCache = false;
      this.#remember(rkeys, current);
    }
    throw this.#contention();
  }

  /** Runs a wasm call over `states`; bytes that are not state become a `RedisStateError`. */
  #decodeOr(call, rkeys, states) {
    try {
      return call();
    } catch (e) {
      throw new Passthrough(this.#stateError(e, rkeys, states) ?? e);
    }
  }

  /** The `RedisStateError` a wasm error means, if it is about the state bytes; else `null`. */
  #stateError(e, rkeys, states) {
    if (!(e instanceof TypeError && e.message.startsWith("state:"))) return null;
    for (let i = 0; i < states.length; i++) {
      if (states[i] === null) continue;
      try {
        this.#policy.validateState(states[i]);
      } catch (bad) {
        this.#cache.delete(rkeys[i]);
        return new RedisStateError(rkeys[i], bad.message.replace(/^state: /, ""));
      }
    }
    return null;
  }

  /** What the failure mode makes of an error; input and state errors always reach the caller. */
  #degrade(keys, rkeys, now, cost, e) {
    if (e instanceof Passthrough) throw e.error;
    if (e instanceof RedisStateError) {
      for (const k of rkeys) this.#cache.delete(k);
      throw e;
    }
    // The write may or may not have happened: forget what this process thought was there.
    for (const k of rkeys) this.#cache.delete(k);
    const mode = this.#store._failure;
    if (mode === "throw") {
      throw e instanceof RedisUnavailableError ? e : new RedisUnavailableError(`Redis failed: ${e?.message ?? e}`, e);
    }
    this.#store._onError?.(e);
    // A fresh key's figures, allowed (open) or denied for a second (closed).
    this.#wasm.peek(keys.map(() => null), now, cost);
    const d = readDecision(this.#wasm.outPtr, this.#names, keys, extrasOutView());
    if (mode === "closed") {
      const retry = this.#store._closedRetryMs;
      d.allowed = false;
      d.remaining = 0;
      d.retryAfter = retry;
      d.blockedBy = this.#names[0];
      for (const l of d.limits) Object.assign(l, { allowed: false, remaining: 0, retryAfter: retry });
    }
    d.degraded = mode;
    return d;
  }

  #guard(rkeys, op) {
    return withTimeout(op(), this.#store._timeoutMs).catch((e) => {
      if (e instanceof Passthrough) throw e.error;
      if (e instanceof RedisStateError) throw e;
      for (const k of rkeys) this.#cache.delete(k);
      throw e instanceof RedisUnavailableError ? e : new RedisUnavailableError(`Redis failed: ${e?.message ?? e}`, e);
    });
  }

  #contention() {
    return new RedisUnavailableError(`gave up after ${this.#store._maxAttempts} attempts: other writers kept changing the key`);
  }

  // --- what this process knows ---------------------------------------------------------------

  async #read(rkeys) {
    const reply = await this.#store._client.send(["MGET", ...rkeys]);
    const states = rkeys.map((k, i) => fromValue(k, reply[i]));
    this.#remember(rkeys, states);
    return states;
  }

  #cached(rkey) {
    return this.#cache.state(rkey) ?? null;
  }

  /** Bytes Redis holds for the keys now (read, or written by this process). */
  #remember(rkeys, states) {
    const at = this.#store._local();
    for (let i = 0; i < rkeys.length; i++) this.#cache.remember(rkeys[i], states[i], at);
  }

  /** Whether a denial over the keys' cached bytes may stand without asking Redis. */
  #trusted(rkeys) {
    if (this.#store._blockedCacheMs === 0) return false;
    const now = this.#store._local();
    return rkeys.every((k) => this.#cache.trusted(k, now));
  }

}

/**
 * The keys as the in-memory limiter takes them. The common case (one short non-empty key) is
 * plainly fine and skips a call into wasm; anything else gets wasm's exact error.
 */
function checkKeys(keys) {
  if (keys.length === 1 && keys[0].length > 0 && keys[0].length <= 85) return; // <= 255 UTF-8 bytes
  validateKeys(keys);
}

/**
 * On Redis Cluster the keys of one hit go to one script call, all or nothing, so they must share
 * a hash slot: a clear error before any I/O, rather than Redis's CROSSSLOT (which the failure
 * mode would take for an outage). Hash tags group keys: `{user:42}:ip` and `{user:42}:acct`.
 */
function checkSlots(store, keys, rkeys) {
  if (!store._cluster || rkeys.length < 2) return;
  const slot = keySlot(rkeys[0]);
  const i = rkeys.findIndex((k) => keySlot(k) !== slot);
  if (i > 0) {
    throw new RangeError(
      `keys[${i}] ${JSON.stringify(keys[i])} is in another Redis Cluster hash slot than keys[0] ${JSON.stringify(keys[0])}: ` +
        "the keys of one hit must share a slot (give them a common hash tag, e.g. \"{user:42}:ip\" and \"{user:42}:acct\")",
    );
  }
}

/** A verify-only swap (new = expected) writes nothing, so its TTLs are never used. */
function ttlsOf(states) {
  return states.map(() => 1);
}
