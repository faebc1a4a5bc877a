// `limiter.waitFor(key, { maxWait, signal, cost })` and upstash/ratelimit's
// `blockUntilReady(key, timeoutMs)`: a hit that waits its turn instead of being refused. Each
// attempt is an ordinary `limit` (counted only when admitted); after a denial it sleeps the
// decision's `retryAfter`, the exact wait the core computed, never a polling interval. Works
// over any limiter whose `limit` returns a decision or a promise of one.
import { MAX, durationMs, fail, objectOf, optionError } from "../contract/options.js";

/** The rejection when `maxWait` runs out first: `code` "wait_timeout", `decision` the last denial. */
export class WaitTimeoutError extends Error {
  constructor(decision, maxWait) {
    super(`not admitted within maxWait (${maxWait} ms): the limiter's wait was ${decision.retryAfter} ms${decision.reason === "denyList" ? " (on the deny list)" : ""}`);
    this.name = "WaitTimeoutError";
    this.code = "wait_timeout";
    this.decision = decision;
  }
}

/**
 * `maxWait`: milliseconds, a number from 0 (fractions too), or a duration such as "5s" (as
 * every duration option, docs/vocabulary.md).
 */
export function millis(v, ofText) {
  if (typeof v === "string") return durationMs("maxWait", v, 0, MAX, ofText);
  if (typeof v !== "number") throw fail("maxWait", v, 'a number of milliseconds or a duration such as "5s"');
  if (!(v >= 0) || !Number.isFinite(v)) throw optionError("out_of_range", "maxWait", `maxWait must be a number of milliseconds from 0, got ${v}`);
  return v;
}

/**
 * Sleeps `ms` on the real clock; an aborted signal ends the sleep at once (rejecting with its
 * reason). With `unref`, the timer alone does not keep Node running (a lease's renewals,
 * lib/client/lease.js). The pacers sleep with it too.
 */
export function sleep(ms, signal, unref = false) {
  return new Promise((resolve, reject) => {
    // Aborted while the limiter was deciding: no listener would hear it now.
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (unref) timer.unref?.();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Resolves with the decision that admitted `key`'s hit; rejects with `WaitTimeoutError` as soon
 * as the wait is known to end after `maxWait` (waiting longer would change nothing: the
 * decision's `retryAfter` is exact), or immediately for a key on the deny list; rejects with
 * the signal's reason when `signal` aborts (nothing is counted then). `ofText` reads a
 * `maxWait` string: the `durationMs` of the wasm module the limiter has loaded.
 */
export async function waitFor(limiter, key, options = {}, ofText) {
  objectOf(options);
  const { maxWait: given, signal, cost = 1, ...rest } = options;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) {
    throw optionError("unknown_field", unknown, `${unknown} is not an option of waitFor (the options are maxWait, signal, cost)`);
  }
  if (given === undefined) throw optionError("missing_field", "maxWait", "maxWait is required: how long to wait at most, in ms");
  const maxWait = millis(given, ofText);
  if (signal !== undefined && !(typeof signal === "object" && signal !== null && typeof signal.aborted === "boolean")) {
    throw fail("signal", signal, "an AbortSignal");
  }
  const deadline = Date.now() + maxWait;
  for (;;) {
    signal?.throwIfAborted();
    const d = await limiter.limit(key, { cost });
    if (d.allowed) return d;
    const now = Date.now();
    if (d.reason === "denyList" || now + d.retryAfter > deadline) throw new WaitTimeoutError(d, maxWait);
    await sleep(d.retryAfter, signal);
  }
}

/**
 * upstash/ratelimit's `blockUntilReady(identifier, timeout)`: `waitFor` with `maxWait:
 * timeoutMs`, resolving as upstash's does: with the admitting decision, or with the last denial
 * (`allowed: false`) when the time runs out, rather than rejecting.
 */
export async function blockUntilReady(limiter, key, timeoutMs) {
  try {
    return await waitFor(limiter, key, { maxWait: timeoutMs });
  } catch (e) {
    if (e instanceof WaitTimeoutError) return e.decision;
    throw e;
  }
}
