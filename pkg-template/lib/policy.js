// `Policy`: the low-level pure decision over encoded states, for stores that keep state
// elsewhere (Redis). See docs/js-layer.md.
import { Policy as WasmPolicy } from "./wasm.js";
import { normalizeLimits } from "./options.js";
import { readDecision } from "./decision.js";

const SINGLE = [""];

export class Policy {
  #wasm;
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
    const next = this.#wasm.check(states, now, cost);
    const d = readDecision(this.#wasm.outPtr, this.#names, states.length > 1 ? states.map((_, i) => i) : SINGLE);
    d.states = next;
    d.expiresAt = Array.from(this.#wasm.lastExpiresAt());
    return d;
  }

  peek(states, now, cost = 1) {
    this.#wasm.peek(states, now, cost);
    return readDecision(this.#wasm.outPtr, this.#names, states.length > 1 ? states.map((_, i) => i) : SINGLE);
  }

  refund(states, now, cost = 1) {
    return this.#wasm.refund(states, now, cost);
  }

  validateState(state) {
    if (!(state instanceof Uint8Array)) throw new TypeError(`state must be a Uint8Array, got ${typeof state}`);
    this.#wasm.validateState(state);
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
}
