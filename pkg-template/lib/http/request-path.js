// The request path the HTTP adapters share (`rateLimit`, `rateLimitFetch`, `tollgate/hono`):
// a request's cost, its decision (reserved, limited, or admitted after waiting in line), a
// failure told apart as the client's mistake or an error to pass on, and an admitted fetch-API
// request's slot and skip options. An adapter keeps only its framework's mapping: reading the
// request and writing the response.
import { clientError, publicError, settleHit } from "./http-options.js";
import { reserve } from "./cost-after.js";
import { limitOrWait, releasingResponse, releaserOf } from "./lease-release.js";

/** A request's cost (`args`: what the adapter's functions get): `estimatedCost`'s, `cost`'s, or 1. */
export function costOf(o, ...args) {
  return o.after !== null ? o.after.estimateOf(...args) : o.costOf !== undefined ? o.costOf(...args) : 1;
}

/**
 * Decides a request's hit of `cost` for `key` on `limiter`: reserved (`estimatedCost`), or
 * limited, waiting in line with `o.queue` unless `signal` (the request's) aborts. Returns
 * `{ decision, now }` (`now`: the instant its figures stand at, after a wait its admission's),
 * `{ mistake }` (`clientError`'s answer to the client's mistake), or `{ error, thrown }`: what
 * failed, and the error to pass on, without `secrets` (publicError), or as it is when the
 * client went away while waiting in line (its ticket left the line).
 */
export async function decideHit(o, limiter, key, cost, signal, secrets) {
  const now = Date.now();
  try {
    const decision = o.after !== null ? await reserve(limiter, key, cost, now) : await limitOrWait(limiter, key, cost, now, o.queue, signal);
    return { decision, now: o.queue !== null ? Date.now() : now };
  } catch (e) {
    if (signal?.aborted) return { error: e, thrown: e };
    const mistake = clientError(e);
    return mistake !== null ? { mistake } : { error: e, thrown: publicError(e, secrets) };
  }
}

/**
 * An admitted request's answer: `route()`'s (a fetch `Response`), whose concurrency slot is held
 * until its body is sent, fails or is cancelled (released at once when `route` throws; the
 * release handed to `keepAlive`, the runtime's `waitUntil`), and whose hit is given back when
 * the skip options say so, `succeeded(response)` judging it (a route that threw failed).
 */
export async function admitted(o, limiter, decision, key, cost, route, succeeded, keepAlive, signal) {
  const release = releaserOf(limiter, decision);
  let response;
  try {
    response = await route();
  } catch (e) {
    if (release !== null) keepAlive(release());
    throw e;
  } finally {
    if (o.settles) await settleHit(o, () => response !== undefined && succeeded(response), key, cost, limiter);
  }
  return releasingResponse(response, release, keepAlive, signal);
}
