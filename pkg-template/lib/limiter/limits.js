// `Limits`: limits validated by the core's spec parser in the wasm module (their names, what they advertise, the longest window), which
// the in-memory `RateLimiter` decides by. The public `Policy` (policy.js) extends it with the
// decisions over encoded states that stores need; those live in the extras module, so this
// file, and with it `RateLimiter`, never reaches that module (see docs/js-layer.md). The wasm
// `Policy` class is the caller's: the full module's, or the lite module's for `tollgate/lite`.
import { POLICY_FIELDS } from "../contract/options.js";

/**
 * The limits' part of `options`, copied: the extras module parses the same options again on
 * first use, and must see what the limiter was made of, not a later change of the caller's
 * object. The store is not part of it (a store's limiter is made without it).
 */
function limitsOf(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) return options;
  const { store, ...rest } = options;
  if (Array.isArray(rest.limits)) rest.limits = rest.limits.map((l) => (l !== null && typeof l === "object" ? { ...l } : l));
  return rest;
}

export class Limits {
  #wasm;
  #names;
  #options;

  constructor(options, WasmPolicy) {
    this.#wasm = new WasmPolicy(options, POLICY_FIELDS);
    this.#names = this.#wasm.limitNames();
    this.#options = limitsOf(options);
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

  get longestWindowMs() {
    return this.#wasm.longestWindowMs;
  }

  get mergeable() {
    return this.#wasm.mergeable;
  }

  /** The options the limits were made of, for the extras module's classes (another wasm module). @internal */
  get _options() {
    return this.#options;
  }

  /** The limits' names, not copied. @internal */
  get _names() {
    return this.#names;
  }

  /** The wasm object, for the in-memory limiter built on these limits. @internal */
  get _wasm() {
    return this.#wasm;
  }
}
