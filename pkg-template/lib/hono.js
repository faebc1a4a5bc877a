// `tollgate/hono`: `rateLimiter(options)`, Hono middleware (`(c, next)`), a drop-in for
// hono-rate-limiter 0.5: its options (hono-options.js), `c.get("rateLimit")` and
// `c.get("rateLimitStore")`, its handler and its headers; and `webSocketLimiter`, its limiter
// of WebSocket messages (hono-websocket.js). A thin adapter: the decision is a tollgate
// limiter's (in memory, or over a store such as `RedisStore` or `WorkerStore`) or, with an
// express-rate-limit style Store (hono-rate-limiter's own), that store's count; the headers
// are `limiter.headers(decision)`. The package imports nothing of Hono: it calls the context's
// methods (`c.set`, `c.header`, `c.status`, `c.text`, `c.json`, `c.res`).
import { honoOptions } from "./http/hono-options.js";
import { shadowReport } from "./http/shadow-report.js";
import { clientError, publicError, rateLimitInfo, secretsOf, settleHit } from "./http/http-options.js";
import { dropCopy, reserve, settleReservation, splitResponse } from "./http/cost-after.js";
import { limitOrWait, releasingResponse, releaserOf } from "./http/lease-release.js";

export { webSocketLimiter } from "./http/hono-websocket.js";

/** hono-rate-limiter's default handler: the status, and `message` as text or JSON. */
async function defaultHandler(c, next, options) {
  c.status(options.statusCode);
  const body = typeof options.message === "function" ? await options.message(c) : options.message;
  return typeof body === "string" ? c.text(body) : c.json(body);
}

/**
 * Middleware deciding each request and answering 429 (`statusCode`) with `message` when it is
 * denied. See the npm README ("Hono") for the options. `middleware.limiter` is the limiter
 * (null when `limit` is a function: one per value).
 */
export function rateLimiter(options) {
  const h = honoOptions(options, "http");
  const { o, limits, config } = h;
  const handler = o.handler ?? defaultHandler;
  const store = limits.erlStore;
  if (o.after !== null && limits.fixed !== null) reserve(limits.fixed, null);

  const middleware = async (c, next) => {
    if (o.skip !== undefined && (await o.skip(c))) return next();
    const key = await o.key(c);
    const cost = o.after !== null ? await o.after.estimateOf(c) : o.costOf !== undefined ? await o.costOf(c) : 1;
    const limiter = await limits.forRequest(c);
    limits.handOver(limiter, key);
    let now = Date.now();
    let decision;
    try {
      decision = o.after !== null ? await reserve(limiter, key, cost, now) : await limitOrWait(limiter, key, cost, now, o.queue, c.req.raw.signal);
      // After waiting in line, the figures stand at the admission.
      if (o.queue !== null) now = Date.now();
    } catch (e) {
      // The client went away while waiting in line: its ticket left the line.
      if (c.req.raw.signal?.aborted) throw e;
      // A client's mistake (a cost that is not one) is a 400; anything else goes to onError
      // without the key or a stack.
      const mistake = clientError(e);
      if (mistake === null) throw publicError(e, secretsOf(key));
      c.status(mistake.status);
      return c.json(mistake.body);
    }
    const info = rateLimitInfo(decision, key, cost);
    c.set(h.property, info);
    c.set(h.storeProperty, h.storeMethods);
    // A hit a list answered was decided by no limit: no rate-limit header.
    const listed = decision.reason !== undefined;
    if (h.sendsHeaders && !listed && !c.finalized) {
      // Over an express-rate-limit style Store the figures stand at the store's answer, which came later.
      const at = store !== null ? Math.max(now, Date.now()) : now;
      for (const [name, value] of Object.entries(o.headers(limiter, decision, key, at))) c.header(name, value);
    }
    const shadow = shadowReport(decision);
    if (shadow !== null) c.header(...shadow);
    if (!decision.allowed) {
      // An express-rate-limit style Store counted the denied hit too; tollgate's limiters did not.
      if (store !== null && o.settles) await settleHit(o, () => judge(c), key, cost, limiter);
      return handler(c, next, listed ? { ...config, statusCode: 403 } : config);
    }
    if (o.after !== null) return settledAfter(c, next, limiter, decision, cost);
    // A concurrency limit's slot is held until the body is sent, fails or is cancelled.
    const release = releaserOf(limiter, decision);
    try {
      await next();
    } catch (e) {
      if (release !== null) keepAlive(c, release());
      if (o.settles) await settleHit(o, () => false, key, cost, limiter);
      throw e;
    }
    if (release !== null) c.res = releasingResponse(c.res, release, (p) => keepAlive(c, p), c.req.raw.signal);
    // Hono answers a route's error through onError before this resumes: c.res is that answer.
    if (o.settles) await settleHit(o, () => judge(c), key, cost, limiter);
  };
  /**
   * The route's answer to an admitted request that reserved `cost`: `c.res` goes to the client,
   * `actualCost(c, copy)` gets a copy of it (splitResponse), and the reservation is settled with
   * what it gives (handed to `c.executionCtx.waitUntil` on Workers). A route that threw settles
   * at the estimate.
   */
  const settledAfter = async (c, next, limiter, decision, cost) => {
    try {
      await next();
    } catch (e) {
      keepAlive(c, settleReservation(limiter, decision, cost, () => cost));
      throw e;
    }
    const { out, copy } = splitResponse(c.res);
    c.res = out;
    const settled = settleReservation(limiter, decision, cost, async () => {
      try {
        return await o.after.actualCost(c, copy);
      } finally {
        dropCopy(copy);
      }
    });
    keepAlive(c, settled);
  };
  const judge = (c) => (o.wasSuccessful !== undefined ? o.wasSuccessful(c) : c.res.status < 400);
  middleware.limiter = limits.fixed;
  return middleware;
}

/** Hands `promise` to the Worker's `waitUntil` when the context has an execution context. */
function keepAlive(c, promise) {
  try {
    c.executionCtx.waitUntil(promise);
  } catch {}
}
