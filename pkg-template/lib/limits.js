// `Limits`: validated limits (their names, what they advertise, the longest window), which
// the in-memory `RateLimiter` decides by. The public `Policy` (policy.js) extends it with the
// decisions over encoded states that stores need; those live in the extras module, so this
// file, and with it `RateLimiter`, never reaches that module (see docs/js-layer.md). The wasm
// `Policy` class is the caller's: the full module's, or the lite module's for `tollgate/lite`.
import { normalizeLimits } from "./options.js";

export class Limits {
  #wasm;
  #names;
  #limits;

  constructor(options, WasmPolicy) {
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

  get longestWindowMs() {
    return this.#wasm.longestWindowMs;
  }

  get mergeable() {
    return this.#wasm.mergeable;
  }

  /** The normalised limits, for the extras module's classes (another wasm module). @internal */
  get _limits() {
    return this.#limits;
  }

  /** The wasm object, for the in-memory limiter built on these limits. @internal */
  get _wasm() {
    return this.#wasm;
  }
}
