// `Policy`: the low-level pure decision over encoded states, for stores that keep state
// elsewhere (Redis). See docs/js-layer.md. The limits are validated by the limiter's module
// (its `Policy`, which `RateLimiter` decides by); deciding over encoded states is the extras
// module's `StorePolicy`, made on first use (an in-memory limiter never needs it).
import { Policy as WasmPolicy, extras } from "./wasm.js";
import { normalizeLimits } from "./options.js";
import { readDecision, extrasOutView } from "./decision.js";

const SINGLE = [""];

export class Policy {
  #wasm;
  #store = null;
  #names;
  #limits;

  constructor(options) {
    const l = normalizeLimits(options);
    this.#wasm = new WasmPolicy(l.names, l.algorithms, l.quotas, l.bursts, l.precisions);
    this.#names = l.names;
    this.#limits = l;
  }

  /** The limits' names, in order. */
  get names() {
    return this.#names.slice();
  }

  /** Per limit name: [quota, windowMs] as advertised in RateLimit-Policy. */
  advertised() {
    const a = this.#wasm.advertised();
    return new Map(this.#names.map((n, i) => [n, [a[2 * i], a[2 * i + 1]]]));
  }

  check(states, now, cost = 1) {
    const store = this._store;
    const next = store.check(states, now, cost);
    const d = readDecision(store.outPtr, this.#names, states.length > 1 ? states.map((_, i) => i) : SINGLE, extrasOutView());
    d.states = next;
    d.expiresAt = Array.from(store.lastExpiresAt());
    return d;
  }

  peek(states, now, cost = 1) {
    const store = this._store;
    store.peek(states, now, cost);
    return readDecision(store.outPtr, this.#names, states.length > 1 ? states.map((_, i) => i) : SINGLE, extrasOutView());
  }

  refund(states, now, cost = 1) {
    return this._store.refund(states, now, cost);
  }

  validateState(state) {
    if (!(state instanceof Uint8Array)) throw new TypeError(`state must be a Uint8Array, got ${typeof state}`);
    this._store.validateState(state);
  }

  get longestWindowMs() {
    return this.#wasm.longestWindowMs;
  }

  get mergeable() {
    return this.#wasm.mergeable;
  }

  /** The normalised limits, for the Redis store's `Synced` (another wasm module). @internal */
  get _limits() {
    return this.#limits;
  }

  /** The wasm object, for the in-memory limiter built on this policy. @internal */
  get _wasm() {
    return this.#wasm;
  }

  /**
   * The extras module's `StorePolicy` for these limits (decisions over encoded states; they
   * are written to the extras module's buffer, `extrasOutView`). @internal
   */
  get _store() {
    if (this.#store === null) {
      const l = this.#limits;
      this.#store = new (extras().StorePolicy)(l.names, l.algorithms, l.quotas, l.bursts, l.precisions);
    }
    return this.#store;
  }
}
