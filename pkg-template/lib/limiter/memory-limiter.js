// `MemoryLimiter`: the in-memory limiter's methods, over the wasm module its subclass binds.
// `RateLimiter` (rate-limiter.js) binds the full module; `tollgate/lite`'s `RateLimiter`
// (lite.js) the lite one, which decides one key under one limit per call and has neither key
// handles nor `limitBatch` (see docs/js-layer.md, "The lite module"). Imports no wasm itself,
// so that each entry loads only its own module.
import { Limits } from "./limits.js";
import { maxKeysOf, keysOf, callOptions, costOf, nowOf, fail, stringKey, stateBytes } from "../contract/options.js";
import { readDecision, readKey } from "./decision.js";
import { KeyHandle } from "./key-handle.js";
import { applyControls, controlsOf, withoutControls } from "./controls.js";
import { LimiterBase } from "./limiter-base.js";
import { reserveInMemory, settleInMemory } from "./reserve.js";
import { acquireInMemory, noAnonymousSlots, releaseInMemory, renewInMemory } from "./concurrency.js";
import { AcquireQueue, queued } from "./acquire-queue.js";

/** Keys of a one-key decision (readDecision only looks at more than one). */
const ONE = [""];
/**
 * What the wasm limiter's hot calls (`limitKey`, `limitAgain`, `limitHandle`) answer besides
 * 0 and 1 (denied, allowed): `limitAgain` decided nothing; the call failed, its error is
 * `takeError()`'s (wasm/src/limiter.rs).
 */
const NOT_REMEMBERED = 2;
const FAILED = 3;

/**
 * The limiter a `store` option asks for (`store.limiter(options)` without the store), or null
 * for an in-memory limiter; `WasmControls`: the loaded wasm module's `Controls` (controls.js).
 */
export function storeLimiter(options, WasmControls) {
  if (options === null || typeof options !== "object" || options.store === undefined) return null;
  const { store, ...rest } = options;
  if (store === null || typeof store.limiter !== "function") {
    throw fail("store", store, "an object with a limiter(options) method");
  }
  return applyControls(store.limiter(withoutControls(rest)), rest, true, WasmControls, store);
}

/**
 * Bytes given to `import` that are not a state of this limiter's policy: the core's message,
 * with the code and field every store gives the same mistake (`invalid_state`, `state`).
 */
export function invalidState(e) {
  if (e instanceof TypeError && typeof e.message === "string" && e.message.startsWith("state:")) {
    return Object.assign(e, { code: "invalid_state", field: "state" });
  }
  return e;
}

export class MemoryLimiter extends LimiterBase {
  #wasm;
  #module;
  #policy;
  #names;
  /** Where the wasm limiter writes its decisions (a buffer that never moves). */
  #out;
  /** The same place in numbers, as a `Float64Array` view indexes it. */
  #at;
  /**
   * The key of the last successful `limit(key)` with a string: the wasm limiter remembers its
   * record, so the same key again (a hot key) is decided without the string crossing into
   * wasm (`limitAgain`); the decision is the same as by the key.
   */
  #lastKey = undefined;
  /** Whether the policy has a concurrency limit: then `limit` acquires (docs/concurrency.md). */
  #concurrent = false;
  /** `acquire`'s waiters in line (`maxQueue`, `maxWait`), made on the first that waits. */
  #line = null;

  /**
   * `module`: the wasm classes and helpers of one module, `{ Limiter, Policy, Controls,
   * durationMs, view, limitBatch, limitEach, lite }` (`durationMs`: the core's reading of a duration
   * string; `lite`: the lite module, without several keys per call, key handles or batch
   * calls; `limitBatch` and `limitEach` are then null).
   */
  constructor(options, module) {
    // With a store, `new RateLimiter(...)` is the store's limiter (a base constructor that
    // returns an object makes it the subclass's `this`, and so the result of `new`).
    const stored = storeLimiter(options, module.Controls);
    if (stored !== null) return stored;
    super(module.durationMs);
    this.#module = module;
    this.#policy = new Limits(options, module.Policy);
    this.#wasm = new module.Limiter(this.#policy._wasm, maxKeysOf(options));
    this.#names = this.#policy.names;
    this.#out = this.#wasm.outPtr;
    this.#at = this.#out / 8;
    this.#concurrent = !module.lite && this.#wasm.hasConcurrency();
    applyControls(this, options, false, module.Controls);
  }

  /**
   * The limits this limiter decides by (names, what they advertise, the longest window). For
   * decisions over encoded states, make a `Policy` from the same options.
   */
  get policy() {
    return this.#policy;
  }

  /** Decides a hit for `key` (or every key of an array, all or nothing) and counts it if allowed. */
  limit(key, options) {
    // Each kind of key in a method of its own: small enough for the JIT to inline the one a
    // call site uses, with the options reading and the decision's reading.
    if (this.#concurrent) return this.acquire(key, options);
    const cost = costOf(options);
    const now = nowOf(options);
    if (typeof key === "string") return this.#limitString(key, now, cost);
    if (key instanceof KeyHandle) return this.#limitHandle(key, now, cost);
    return this.#limitKeys(key, now, cost);
  }

  #limitString(key, now, cost) {
    let r = key === this.#lastKey ? this.#wasm.limitAgain(now, cost) : NOT_REMEMBERED;
    if (r === NOT_REMEMBERED) {
      this.#lastKey = undefined; // until limitKey succeeds: it forgets the record first
      r = this.#wasm.limitKey(key, now, cost);
      if (r !== FAILED) this.#lastKey = key;
    }
    if (r === FAILED) throw this.#wasm.takeError();
    return this.#readKey();
  }

  #limitHandle(handle, now, cost) {
    const id = handle.owner === this ? handle.id : this.#handle(handle);
    if (this.#wasm.limitHandle(id, now, cost) === FAILED) throw this.#wasm.takeError();
    return this.#readKey();
  }

  #limitKeys(key, now, cost) {
    const keys = keysOf(key);
    if (keys.length === 1) this.#wasm.limit(keys[0], now, cost);
    else this.#several("limit").limitKeys(keys, now, cost);
    return this.#read(keys);
  }

  /** The decision `limit` would make, counting nothing. */
  peek(key, options) {
    const { cost, now } = callOptions(options);
    if (key instanceof KeyHandle) {
      this.#wasm.peekHandle(this.#handle(key), now, cost);
      return this.#read(ONE);
    }
    const keys = keysOf(key);
    if (keys.length === 1) this.#wasm.peek(keys[0], now, cost);
    else this.#several("peek").peekKeys(keys, now, cost);
    return this.#read(keys);
  }

  #read(keys) {
    return readDecision(this.#out, this.#names, keys, this.#module.view());
  }

  /** `#read(ONE)` for the per-request calls (`readKey`: small enough to inline). */
  #readKey() {
    return readKey(this.#at, this.#names, this.#module.view());
  }

  /** The wasm limiter, when its module decides several keys at once. */
  #several(what) {
    if (this.#module.lite) {
      throw new TypeError(`tollgate/lite ${what}s one key per call; for several keys at once (all or nothing), use RateLimiter from "tollgate" or "tollgate/limiter"`);
    }
    return this.#wasm;
  }

  /**
   * Interns `key` once and returns a handle: `limit(handle)` and `limitBatch([handle, ...])`
   * then pass a number into wasm instead of the string. Keep handles for hot keys; `release`
   * forgets one (the key's state stays).
   */
  key(key) {
    this.#fast("key handles");
    return new KeyHandle(stringKey(key), this.#wasm.intern(key), this);
  }

  /**
   * With a lease (a string, an acquisition's `lease`): frees its slots on every key and
   * returns the keys' figures with `released` (false: released already or expired, nothing
   * changed). With a key handle: forgets the handle made by `key()` (using it afterwards
   * throws; the key's state is kept).
   */
  release(handleOrLease, options) {
    if (typeof handleOrLease === "string") {
      this.#fast("concurrency leases");
      const released = releaseInMemory(this.#wasm, handleOrLease, options, (keys) => this.#read(keys));
      if (released.released) this.#line?.wake();
      return released;
    }
    this.#wasm.release(this.#handle(handleOrLease));
  }

  /**
   * Decides a hit like `limit` and, when admitted, takes a slot of every concurrency limit
   * under one lease: the decision's `lease` (a string; `null` when denied or when the policy
   * has no concurrency limit) for `release` and `renew`, and `expiresAt` (docs/concurrency.md).
   */
  acquire(key, options) {
    if (queued(options)) {
      // With maxQueue or maxWait: a promise, waiting in line (acquire-queue.js); the core decides.
      this.#line ??= new AcquireQueue((k, o) => this.acquire(k, o), this.#module.durationMs);
      return this.#line.acquire(key, options);
    }
    this.#fast("concurrency leases");
    return acquireInMemory(this.#wasm, keysOf(key instanceof KeyHandle ? key.key : key), options, (keys) => this.#read(keys));
  }

  /**
   * Extends a live lease to `now + leaseTtl` on every key: the keys' figures with the new
   * `expiresAt`; throws `unknown_lease` (released, expired, reset) or `invalid_lease`.
   */
  renew(lease, options) {
    this.#fast("concurrency leases");
    return renewInMemory(this.#wasm, lease, options, (keys) => this.#read(keys));
  }

  /**
   * `limit()` for every entry of `keys` (all key handles, or all strings), in order, in one
   * call into wasm; `now`/`cost` are one number for all or `costs`/`now` one per entry. Fills
   * `out` (or new typed arrays) with each entry's allowed/remaining/resetAt/retryAfter.
   * Everything is validated first: bad input throws and counts nothing.
   */
  limitBatch(keys, options, out) {
    this.#fast("batch calls (limitBatch)");
    if (this.#concurrent) noAnonymousSlots("limitBatch");
    // With controls, each entry through `limit()`, which they wrap (batch.js, `limitEach`).
    if (controlsOf.has(this)) return this.#module.limitEach(this, keys, options, out);
    return this.#module.limitBatch(this.#wasm, this, keys, options, out);
  }

  /** Throws where the module has no key handles or batch calls. */
  #fast(what) {
    if (this.#module.lite) {
      throw new TypeError(`${what} are not in tollgate/lite; use RateLimiter from "tollgate" or "tollgate/limiter"`);
    }
  }

  #handle(h) {
    if (!(h instanceof KeyHandle) || h.owner !== this) {
      throw new TypeError(`key handle must come from this limiter's key(), got ${h instanceof KeyHandle ? "another limiter's" : typeof h}`);
    }
    return h.id;
  }

  /** Gives back `cost` units (a request that turned out not to count), never beyond fresh. */
  refund(key, options) {
    const { cost, now } = callOptions(options);
    this.#wasm.refundKeys(keysOf(key instanceof KeyHandle ? key.key : key), now, cost);
  }

  /**
   * Decides a hit of the estimate `cost` like `limit` and, when admitted, opens a reservation:
   * the decision's `reservation` (a string; `null` when denied) for `settle` (docs/reserve.md).
   */
  reserve(key, options) {
    this.#fast("reserve and settle");
    if (this.#concurrent) noAnonymousSlots("reserve");
    return reserveInMemory(this.#wasm, keysOf(key instanceof KeyHandle ? key.key : key), options, (keys) => this.#read(keys));
  }

  /**
   * Settles a reservation with the `actual` cost: gives back what the limits still hold of the
   * estimate's surplus, or charges the excess as far as they have room. Returns the key's
   * figures after it, with `refunded`, `charged` and `forgiven`; throws `unknown_reservation`
   * (settled already, reset, expired) or `invalid_reservation`, changing nothing.
   */
  settle(reservation, actual, options) {
    this.#fast("reserve and settle");
    return settleInMemory(this.#wasm, reservation, actual, options, (keys) => this.#read(keys));
  }

  /** Forgets the key(s): the next hit finds them fresh. */
  reset(key) {
    this.#wasm.resetKeys(keysOf(key instanceof KeyHandle ? key.key : key));
  }

  /** The key's state as bytes (`null`: fresh); `import` takes it back, here or in another process. */
  export(key) {
    return this.#wasm.exportState(stringKey(key)) ?? null;
  }

  /** Sets the key's state from `export`'s bytes (`null`: fresh). Not in tollgate/lite. */
  import(key, state) {
    this.#fast("state imports (import)");
    stringKey(key);
    stateBytes(state);
    try {
      this.#wasm.importState(key, state ?? undefined);
    } catch (e) {
      throw invalidState(e);
    }
  }

  /** Every key that holds state. */
  keys() {
    return this.#wasm.keys();
  }

  /** How many keys hold state. */
  get size() {
    return this.#wasm.size;
  }

  /** How many keys the `maxKeys` cap evicted. */
  get evictions() {
    return this.#wasm.evictions;
  }

  /** Drops the keys that are fresh at `now` (default: the current time); returns how many. */
  prune(now = Date.now()) {
    return this.#wasm.prune(now);
  }

  /** Frees the wasm memory now rather than when collected. */
  free() {
    this.#wasm.free();
  }
}
