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
import { rateLimitInfo, secretsOf, settleHit } from "./http/http-options.js";
import { reserve, reservedAnswer } from "./http/cost-after.js";
import { admitted, costOf, decideHit } from "./http/request-path.js";

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
    const cost = await costOf(o, c);
    const limiter = await limits.forRequest(c);
    limits.handOver(limiter, key);
    const { decision, now, mistake, thrown } = await decideHit(o, limiter, key, cost, c.req.raw.signal, secretsOf(key));
    if (thrown !== undefined) throw thrown;
    if (mistake !== undefined) {
      c.status(mistake.status);
      return c.json(mistake.body);
    }
    const info = rateLimitInfo(decision, key, cost);
    c.set(h.property, info);
    c.set(h.storeProperty, h.storeMethods);
    // A hit a list answered was decided by no limit: no rate-limit header.
    const listed = decision.reason !== undefined;
    if (h.sendsHeaders && !listed && !c.finalized) {
      for (const [name, value] of Object.entries(o.headers(limiter, decision, key, now))) c.header(name, value);
    }
    const shadow = shadowReport(decision);
    if (shadow !== null) c.header(...shadow);
    if (!decision.allowed) {
      // An express-rate-limit style Store counted the denied hit too; tollgate's limiters did not.
      if (store !== null && o.settles) await settleHit(o, () => judge(c), key, cost, limiter);
      return handler(c, next, listed ? { ...config, statusCode: 403 } : config);
    }
    const keepAlive = (p) => {
      try {
        c.executionCtx.waitUntil(p);
      } catch {}
    };
    const route = async () => {
      await next();
      // Hono answers a route's error through onError before this resumes: c.res is that answer.
      return c.res;
    };
    if (o.after !== null) {
      return reservedAnswer(limiter, decision, cost, route, (copy) => o.after.actualCost(c, copy), keepAlive, (out) => void (c.res = out));
    }
    const out = await admitted(o, limiter, decision, key, cost, route, () => judge(c), keepAlive, c.req.raw.signal);
    if (out !== c.res) c.res = out;
  };
  const judge = (c) => (o.wasSuccessful !== undefined ? o.wasSuccessful(c) : c.res.status < 400);
  middleware.limiter = limits.fixed;
  return middleware;
}
