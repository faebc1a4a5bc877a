// The middlewares' cost known after the response (`estimatedCost` and `actualCost`): the request
// reserves its estimate on the way in (`limiter.reserve`), and once its answer is done the
// reservation is settled with the actual cost (`limiter.settle`), which gives the difference
// back or charges the excess. The limiter does the counting; this file only reads the two
// options and calls the two methods at the right moments.
import { fail, optionError } from "../contract/options.js";

/**
 * Reads `estimatedCost` (a whole number, or a function of the request as `key` gets it) and
 * `actualCost` (a function of the request and its answer) from middleware options. Both or
 * neither; not beside `cost` (the cost known before the answer) nor the skip options (a
 * request that should not count settles at 0). Returns null without them, else
 * `{ estimateOf(...args), actualCost }`.
 */
export function costAfterOptions(options) {
  const { estimatedCost: estimate, actualCost } = options;
  if (estimate === undefined && actualCost === undefined) return null;
  if (actualCost === undefined) throw optionError("missing_field", "actualCost", "estimatedCost reserves a cost that actualCost(request, response) settles once the answer is done: give both");
  if (estimate === undefined) throw optionError("missing_field", "estimatedCost", "actualCost settles a reservation of estimatedCost (a number, or a function of the request): give both");
  if (typeof actualCost !== "function") throw fail("actualCost", actualCost, "a function of the request and its answer returning the actual cost");
  if (typeof estimate !== "function" && typeof estimate !== "number") throw fail("estimatedCost", estimate, "a whole number, or a function of the request returning one");
  for (const other of ["cost", "skipFailedRequests", "skipSuccessfulRequests"]) {
    if (options[other] !== undefined) {
      throw optionError("conflicting_fields", other, `${other} cannot be given with estimatedCost and actualCost: the cost is the estimate on the way in and actualCost's once the answer is done (0 for a request that should not count)`);
    }
  }
  return {
    estimateOf: typeof estimate === "function" ? estimate : () => estimate,
    actualCost,
  };
}

/**
 * The limiter's reservation of `cost` for `keys`; a limiter that cannot reserve is a
 * configuration mistake. With `keys` null, only checks that (when the middleware is made).
 */
export function reserve(limiter, keys, cost, now) {
  if (typeof limiter.reserve !== "function" || typeof limiter.settle !== "function") {
    throw optionError("unsupported_option", "estimatedCost", "estimatedCost and actualCost need a limiter that reserves and settles (RateLimiter, or a store's limiter over RedisStore or WorkerStore)");
  }
  if (keys === null) return undefined;
  return limiter.reserve(keys, { cost, now });
}

/**
 * Settles `decision`'s reservation once `actual()` gives the actual cost. What is not a cost
 * the limiter takes (`actual()` threw, rejected or gave something settle refuses) settles at
 * the estimate, as does a settlement that fails: the reservation then stays charged at the
 * estimate, which the limiter already counts. Never rejects.
 */
export async function settleReservation(limiter, decision, estimate, actual) {
  if (decision.reservation === undefined || decision.reservation === null) return;
  let cost;
  try {
    cost = await actual();
  } catch {
    cost = estimate;
  }
  try {
    await limiter.settle(decision.reservation, cost ?? estimate, { now: Date.now() });
  } catch {
    if (cost === estimate) return;
    try {
      await limiter.settle(decision.reservation, estimate, { now: Date.now() });
    } catch {}
  }
}

/**
 * An admitted fetch-API request that reserved `cost`: `route()`'s answer (a `Response`) goes to
 * the client, `actualCost(copy)` reads a copy of it (the same bytes as they come, a tee, so a
 * client that disconnects does not stop it; a copy left unread is cancelled once it is done),
 * and the reservation is settled with what it gives, handed to `keepAlive` (the runtime's
 * `waitUntil`). `deliver(out)` hands the client's answer over first; what it returns is
 * returned. A route that threw settles at the estimate, and its error goes on.
 */
export async function reservedAnswer(limiter, decision, cost, route, actualCost, keepAlive, deliver) {
  let response;
  try {
    response = await route();
  } catch (e) {
    keepAlive(settleReservation(limiter, decision, cost, () => cost));
    throw e;
  }
  let out = response;
  let copy = response;
  if (response.body !== null && response.status !== 101) {
    const [a, b] = response.body.tee();
    const init = { status: response.status, statusText: response.statusText, headers: response.headers };
    [out, copy] = [new Response(a, init), new Response(b, init)];
  }
  const delivered = deliver(out);
  const settled = settleReservation(limiter, decision, cost, async () => {
    try {
      return await actualCost(copy);
    } finally {
      if (copy.body !== null && !copy.bodyUsed && !copy.body.locked) copy.body.cancel().catch(() => {});
    }
  });
  keepAlive(settled);
  return delivered;
}

/** The `waitUntil` of a fetch handler's arguments (a Worker's `ctx`), so a settlement outlives the response there. */
export function waitUntilOf(rest) {
  const ctx = rest.find((a) => a !== null && typeof a === "object" && typeof a.waitUntil === "function");
  return ctx === undefined ? () => {} : (p) => ctx.waitUntil(p);
}
