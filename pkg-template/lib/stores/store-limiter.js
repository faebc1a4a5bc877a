// `StoreLimiter`: the base of the limiters a shared store returns (`RedisStore`'s, exact and
// synced; `WorkerStore`'s). Beside `LimiterBase`'s `waitFor`, `blockUntilReady` and `headers`,
// the failure mode is written here once (`failure`: "open", "closed", "throw", "insurance";
// docs/vocabulary.md): a subclass says what is an outage and gives it to `_outage`. An
// outage's answer is the core's (`tollgate::answer::Answer::degraded`, `_unavailable`): over a
// fresh key's figures, or before any limit is known (a Worker's policy not fetched yet) the
// core's figures of none.
import { durationMs } from "../wasm.js";
import { readDecision } from "../limiter/decision.js";
import { ANSWER_CLOSED, ANSWER_OPEN } from "../contract/contract.generated.js";
import { extras } from "../extras.js";
import { extrasOutView } from "../limiter/extras-view.js";
import { LimiterBase } from "../limiter/limiter-base.js";
import { headersOfNoLimit } from "../limiter/header-record.js";
import { Insurance } from "./insurance.js";

export class StoreLimiter extends LimiterBase {
  #store;
  /** The limiter's options, for the insurance limiter (`null`: none given). */
  #options;
  #insured = null;

  constructor(store, options) {
    super(durationMs);
    this.#store = store;
    this.#options = options;
  }

  /**
   * What the failure mode makes of an outage `e` (the subclass has told it from the caller's
   * mistakes, which are thrown): `thrown` rejects with `failure: "throw"`; `onError` hears `e`
   * otherwise; the insurance limiter decides in memory, or a fresh key's figures answer,
   * admitted ("open") or denied for `closedRetryMs` ("closed", or a cost the insurance's share
   * can never take). The answer is marked `degraded: "unavailable"`. @internal
   */
  _outage(e, thrown, keys, now, cost, peek) {
    const store = this.#store;
    const mode = store._failure;
    if (mode === "throw") throw thrown;
    store._onError?.(e);
    if (mode === "insurance") {
      this.#insured ??= new Insurance(this.#options, store._insuranceShare);
      const d = this.#insured.decide(keys, now, cost, peek);
      if (d !== null) return Object.assign(d, { degraded: "unavailable" });
    }
    const d = this._unavailable(keys, now, cost, mode === "open", store._closedRetryMs);
    d.degraded = "unavailable";
    return d;
  }

  /**
   * The core's answer (`tollgate::answer::Answer::degraded`) for `keys` when the store could
   * not decide, counting nothing: over the figures of fresh keys, admitted when `open`, else
   * denied for at least `closedRetryMs`; with no policy known, over the core's figures of no
   * limit (`tollgate::counted`: nothing left, no limit to name). @internal
   */
  _unavailable(keys, now, cost, open, closedRetryMs, policy = this._answeringPolicy()) {
    if (policy === null) {
      const [allowed, limit, remaining, resetAt, retryAfter] = extras().countedDecision(0, 0, now, now, open ? undefined : closedRetryMs);
      return { allowed: allowed === 1, limit, remaining, resetAt, retryAfter, blockedBy: null, limits: [] };
    }
    const w = policy._store;
    w.unavailable(keys.map(() => null), now, cost, open ? ANSWER_OPEN : ANSWER_CLOSED, closedRetryMs);
    return readDecision(w.outPtr, policy._names, keys, extrasOutView());
  }

  /**
   * The headers of `_unavailable`'s answer when no policy is known (a Worker's not fetched yet:
   * the store failed first): none for an admission, a denial's `Retry-After`, written by the
   * core (`tollgate::headers::write_unknown_policy`). @internal
   */
  _headersOfNoLimit(decision, options) {
    return headersOfNoLimit(decision, options, extras().unknownPolicyHeaders);
  }

  /** Nothing to stop unless the subclass says otherwise (the client is the caller's to close). */
  async close() {}
}
