// `rateLimit(options)`: HTTP middleware for Express, Connect and plain `node:http`
// (`(req, res, next)`), in the vocabulary of express-rate-limit. It is a thin adapter: the
// decision is a `RateLimiter`'s (in memory, or over a store such as `RedisStore`), the headers
// are `limiter.headers(decision)`, and nothing here counts anything itself.
import { checkSubnet, ipKey } from "./client-ip.js";
import { denialBody, httpOptions, settleHit } from "./http-options.js";

/** The client address the default key uses: Express's `req.ip` (which honours `trust proxy`), else the socket's. */
function clientAddress(req) {
  const ip = req.ip ?? req.socket?.remoteAddress;
  if (typeof ip !== "string" || ip === "") {
    throw new TypeError("the request has no client IP address (req.ip, req.socket.remoteAddress): give key(req)");
  }
  return ip;
}

/**
 * Middleware deciding each request by a `RateLimiter` and answering 429 when it is denied.
 * See the npm README ("HTTP middleware") for the options; `middleware.limiter` is the limiter
 * (to `reset` a key after a successful login, say).
 */
export function rateLimit(options) {
  if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
  const subnet = options.ipv6Subnet ?? 56;
  checkSubnet(subnet); // now rather than at the first request
  const property = options.requestPropertyName ?? "rateLimit";
  if (property !== false && typeof property !== "string") throw new TypeError("requestPropertyName must be a string or false");
  const o = httpOptions(options, ["ipv6Subnet", "requestPropertyName"]);
  const { key, costOf, skip, handler, limiter } = o;
  const wasSuccessful = o.wasSuccessful ?? ((req, res) => res.statusCode < 400);

  // Settles a counted hit once the response finishes (a response that never finished counts
  // as failed).
  const refundOnFinish = (req, res, keys, cost) => {
    let done = false;
    const settle = (finished) => {
      if (done) return;
      done = true;
      void settleHit(o, () => finished && wasSuccessful(req, res), keys, cost);
    };
    res.once("finish", () => settle(true));
    res.once("close", () => settle(res.writableFinished === true));
  };

  // Decides `req`; true when the request goes on (`next()`), false when it was answered here
  // (or by `handler`). `next` is called outside, so an error thrown downstream is not caught
  // here and passed to `next` a second time.
  const decide = async (req, res, next) => {
    if (skip !== undefined && (await skip(req, res))) return true;
    const keys = key !== undefined ? await key(req, res) : ipKey(clientAddress(req), subnet);
    const cost = costOf !== undefined ? await costOf(req, res) : 1;
    const now = Date.now();
    const decision = await limiter.limit(keys, { cost, now });
    if (property !== false) req[property] = decision;
    for (const [name, value] of Object.entries(o.headers(decision, keys, now))) res.setHeader(name, value);
    if (decision.allowed) {
      if (o.settles) refundOnFinish(req, res, keys, cost);
      return true;
    }
    if (handler !== undefined) {
      await handler(req, res, next, decision);
      return false;
    }
    const { text, type } = denialBody(typeof o.message === "function" ? await o.message(decision, req, res) : o.message);
    res.statusCode = o.status;
    res.setHeader("Content-Type", type);
    res.end(text);
    return false;
  };

  const middleware = async (req, res, next) => {
    let goesOn;
    try {
      goesOn = await decide(req, res, next);
    } catch (e) {
      next(e);
      return;
    }
    if (goesOn) next();
  };
  middleware.limiter = limiter;
  return middleware;
}
