// `RateLimiter`: what users write. In memory (synchronous) unless a `store` is given, in which
// case the store's own limiter is returned (asynchronous, same methods).
import { Limiter as WasmLimiter } from "./wasm.js";
import { Limits } from "./limits.js";
import { maxKeysOf, keysOf, callOptions } from "./options.js";
import { readDecision } from "./decision.js";
import { headersFor } from "./headers.js";
import { KeyHandle, limitBatch } from "./batch.js";

/** Keys of a one-key decision (readDecision only looks at more than one). */
const ONE = [""];

export class RateLimiter {
  #wasm;
  #policy;
  #names;
  #advertised;

  constructor(options) {
    if (options !== null && typeof options === "object" && options.store !== undefined) {
      const { store, ...rest } = options;
      if (store === null || typeof store.limiter !== "function") {
        throw new TypeError("store must be an object with a limiter(options) method");
      }
      return store.limiter(rest);
    }
    this.#policy = new Limits(options);
    this.#wasm = new WasmLimiter(this.#policy._wasm, maxKeysOf(options));
    this.#names = this.#policy.names;
    this.#advertised = this.#policy.advertised();
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
    const { cost, now } = callOptions(options);
    if (typeof key === "string") {
      this.#wasm.limit(key, now, cost);
      return readDecision(this.#wasm.outPtr, this.#names, ONE);
    }
    if (key instanceof KeyHandle) {
      this.#wasm.limitHandle(this.#handle(key), now, cost);
      return readDecision(this.#wasm.outPtr, this.#names, ONE);
    }
    const keys = keysOf(key);
    this.#wasm.limitKeys(keys, now, cost);
    return readDecision(this.#wasm.outPtr, this.#names, keys);
  }

  /** The decision `limit` would make, counting nothing. */
  peek(key, options) {
    const { cost, now } = callOptions(options);
    if (key instanceof KeyHandle) {
      this.#wasm.peekHandle(this.#handle(key), now, cost);
      return readDecision(this.#wasm.outPtr, this.#names, ONE);
    }
    const keys = keysOf(key);
    if (keys.length === 1) this.#wasm.peek(keys[0], now, cost);
    else this.#wasm.peekKeys(keys, now, cost);
    return readDecision(this.#wasm.outPtr, this.#names, keys);
  }

  /**
   * Interns `key` once and returns a handle: `limit(handle)` and `limitBatch([handle, ...])`
   * then pass a number into wasm instead of the string. Keep handles for hot keys; `release`
   * forgets one (the key's state stays).
   */
  key(key) {
    if (typeof key !== "string") throw new TypeError(`key must be a string, got ${typeof key}`);
    return new KeyHandle(key, this.#wasm.intern(key), this);
  }

  /** Forgets a handle made by `key()`; using it afterwards throws. The key's state is kept. */
  release(handle) {
    this.#wasm.release(this.#handle(handle));
  }

  /**
   * `limit()` for every entry of `keys` (all key handles, or all strings), in order, in one
   * call into wasm; `now`/`cost` are one number for all or `costs`/`now` one per entry. Fills
   * `out` (or new typed arrays) with each entry's allowed/remaining/resetAt/retryAfter.
   * Everything is validated first: bad input throws and counts nothing.
   */
  limitBatch(keys, options, out) {
    return limitBatch(this.#wasm, this, keys, options, out);
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

  /** Forgets the key(s): the next hit finds them fresh. */
  reset(key) {
    this.#wasm.resetKeys(keysOf(key instanceof KeyHandle ? key.key : key));
  }

  /** The draft-10 `RateLimit`/`RateLimit-Policy` and legacy `X-RateLimit-*` headers. */
  headers(decision, now = Date.now()) {
    return headersFor(decision, this.#advertised, now);
  }

  /** The key's state as bytes (`null`: fresh); `import` takes it back, here or in another process. */
  export(key) {
    if (typeof key !== "string") throw new TypeError(`key must be a string, got ${typeof key}`);
    return this.#wasm.exportState(key) ?? null;
  }

  import(key, state) {
    if (typeof key !== "string") throw new TypeError(`key must be a string, got ${typeof key}`);
    if (state !== null && !(state instanceof Uint8Array)) {
      throw new TypeError(`state must be a Uint8Array or null, got ${typeof state}`);
    }
    this.#wasm.importState(key, state ?? undefined);
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
