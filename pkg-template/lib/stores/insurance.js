// The insurance limiter (rate-limiter-flexible's `insuranceLimiter`): while a shared store is
// unavailable, each process decides in memory with a share of every limit, instead of
// admitting everything (`failure: "open"`) or nothing (`"closed"`). With N processes and a
// share of 1/N the service as a whole keeps about its limit through an outage. Store-agnostic:
// a store gives it the limiter's options and asks it for decisions while its backend is down.
import { RateLimiter } from "../limiter/rate-limiter.js";
import { fail, optionError } from "../contract/options.js";

/** The `insurance` option: the share of each limit one process may admit, in (0, 1]. */
export function insuranceShare(value) {
  if (typeof value !== "number") {
    throw fail("insurance", value, "a number, the share of each limit one process admits during an outage (e.g. 1 / processes)");
  }
  if (!(value > 0 && value <= 1)) throw optionError("out_of_range", "insurance", `insurance must be more than 0 and at most 1, got ${value}`);
  return value;
}

/** `n` scaled by `share`, at least 1 (a limit of 0 would be "closed" by another name). */
function scaled(n, share) {
  return Math.max(1, Math.floor(n * share));
}

/**
 * One limit's options with its counts scaled: the limit, the burst and a token bucket's
 * refillAmount (which the core requires to fit the capacity, so it shrinks with it);
 * everything else as given.
 */
function scaleLimit(limit, share) {
  const out = { ...limit };
  if (typeof limit.limit === "number") out.limit = scaled(limit.limit, share);
  if (typeof limit.quota === "string") {
    const slash = limit.quota.indexOf("/");
    const count = Number(limit.quota.slice(0, slash));
    if (slash > 0 && Number.isSafeInteger(count)) out.quota = `${scaled(count, share)}${limit.quota.slice(slash)}`;
  }
  if (typeof limit.burst === "number") out.burst = scaled(limit.burst, share);
  if (typeof limit.refillAmount === "number") out.refillAmount = scaled(limit.refillAmount, share);
  return out;
}

export class Insurance {
  #limiter;

  /**
   * @param options the limiter's options (already validated by the store's policy)
   * @param share each limit's share for this process
   */
  constructor(options, share) {
    const { store: _store, ...rest } = options;
    const scaledOptions = Array.isArray(rest.limits) ? { ...rest, limits: rest.limits.map((l) => scaleLimit(l, share)) } : scaleLimit(rest, share);
    this.#limiter = new RateLimiter(scaledOptions);
  }

  /** The in-memory decision for a hit (counted unless `peek`) while the store is unavailable. */
  decide(keys, now, cost, peek = false) {
    try {
      const key = keys.length === 1 ? keys[0] : keys;
      return peek ? this.#limiter.peek(key, { now, cost }) : this.#limiter.limit(key, { now, cost });
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      return null; // a cost the scaled limits can never take: the caller denies it
    }
  }
}
