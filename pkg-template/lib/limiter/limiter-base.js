// `LimiterBase`: what every limiter does the same way whatever decides its hits (the wasm
// module in memory, Redis, the Worker): `waitFor`, `blockUntilReady` and `headers`, written
// once over the subclass's `limit` and `policy`. A subclass's `limit` and `peek` return what
// its store answered, which is the core's decision; nothing here decides. Imports no wasm, so
// that each entry (`tollgate/lite` too) loads only its own module.
import { headersFor } from "./header-record.js";
import { waitFor, blockUntilReady } from "./wait.js";

export class LimiterBase {
  /** The `durationMs` of the wasm module the limiter has loaded (reads a `maxWait` string). */
  #ofText;

  constructor(ofText) {
    this.#ofText = ofText;
  }

  /**
   * Resolves with the decision admitting `key`'s hit once the limits admit it, sleeping each
   * denial's `retryAfter` in between; rejects with `WaitTimeoutError` (`wait_timeout`) when
   * that is after `maxWait` ms, or with the reason of `signal` when it aborts. Options:
   * `maxWait`, `signal`, `cost` (wait.js).
   */
  waitFor(key, options) {
    return waitFor(this, key, options, this.#ofText);
  }

  /** upstash/ratelimit's name: `waitFor` that resolves with the last denial at `timeoutMs`. */
  blockUntilReady(key, timeoutMs) {
    return blockUntilReady(this, key, timeoutMs);
  }

  /**
   * The rate-limit headers of `decision`, written by the core: draft-10 `RateLimit` and
   * `RateLimit-Policy` and legacy `X-RateLimit-*` by default, `Retry-After` on a denial.
   * `options`: `now`, `standardHeaders`, `legacyHeaders`, `partitionKey`, `jitter`
   * (docs/headers.md); a number is `now`.
   */
  headers(decision, options) {
    const policy = this._answeringPolicy();
    if (policy === null) return this._headersOfNoLimit(decision, options);
    return headersFor(this._forHeaders(decision, policy), policy._wasm, policy._names, options);
  }

  /** The policy a decision is answered and written by: the limiter's own (`null`: none yet). @internal */
  _answeringPolicy() {
    return this.policy;
  }

  /** The headers of a decision made before any policy was known: none is, here. @internal */
  _headersOfNoLimit() {
    throw new TypeError("headers: give a decision of this limiter (none was made yet)");
  }

  /** `decision` as the headers read it (a store whose answers leave a figure out fills it in). @internal */
  _forHeaders(decision) {
    return decision;
  }
}
