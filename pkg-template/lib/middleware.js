// `rateLimit(options)`: HTTP middleware for Express, Connect and plain `node:http`
// (`(req, res, next)`), in the vocabulary of express-rate-limit. It is a thin adapter: the
// decision is a `RateLimiter`'s (in memory, or over a store such as `RedisStore`), the headers
// are `limiter.headers(decision)`, and nothing here counts anything itself.
import { RateLimiter } from "./rate-limiter.js";
import { checkSubnet, ipKey } from "./client-ip.js";
import { LIMITER_FIELDS, LIMIT_FIELDS, known } from "./options.js";

/** Per value of the `headers` option: which of `limiter.headers(decision)` it sends. */
const HEADER_SETS = new Map([
  ["both", () => true],
  ["draft-10", (name) => name === "RateLimit" || name === "RateLimit-Policy"],
  ["legacy", (name) => name.startsWith("X-RateLimit-")],
  [false, () => false],
]);

/** The options this module reads; the rest go to `new RateLimiter(...)`. */
const OWN = [
  "limiter", "key", "ipv6Subnet", "cost", "skip", "headers", "statusCode", "message", "handler",
  "skipFailedRequests", "skipSuccessfulRequests", "requestWasSuccessful", "requestPropertyName",
];

function optionalFunction(options, name) {
  const f = options[name];
  if (f !== undefined && typeof f !== "function") throw new TypeError(`${name} must be a function, got ${typeof f}`);
  return f;
}

function flag(options, name) {
  const v = options[name] ?? false;
  if (typeof v !== "boolean") throw new TypeError(`${name} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function limiterOf(options, rest) {
  if (options.limiter === undefined) return new RateLimiter(rest);
  const l = options.limiter;
  if (l === null || typeof l !== "object" || typeof l.limit !== "function" || typeof l.headers !== "function") {
    throw new TypeError("limiter must be a RateLimiter (or a store's limiter)");
  }
  if (Object.keys(rest).length > 0) {
    throw new TypeError(`give either limiter or the limiter's options (${Object.keys(rest).join(", ")}), not both`);
  }
  return l;
}

/** The client address the default key uses: Express's `req.ip` (which honours `trust proxy`), else the socket's. */
function clientAddress(req) {
  const ip = req.ip ?? req.socket?.remoteAddress;
  if (typeof ip !== "string" || ip === "") {
    throw new TypeError("the request has no client IP address (req.ip, req.socket.remoteAddress): give key(req)");
  }
  return ip;
}

function defaultMessage(decision) {
  const secs = Math.max(1, Math.ceil(decision.retryAfter / 1000));
  return { error: { code: "rate_limited", message: `too many requests: retry after ${secs} s` } };
}

/**
 * Middleware deciding each request by a `RateLimiter` and answering 429 when it is denied.
 * See the npm README ("HTTP middleware") for the options; `middleware.limiter` is the limiter
 * (to `reset` a key after a successful login, say).
 */
export function rateLimit(options) {
  if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
  if (options.windowMs !== undefined) {
    // express-rate-limit's name; refused with what to write instead.
    throw new TypeError(`windowMs is express-rate-limit's option: give window (e.g. "15m", or ${options.windowMs} for milliseconds) or quota ("100/15m")`);
  }
  known(options, [...OWN, ...LIMIT_FIELDS, ...LIMITER_FIELDS]);
  const rest = Object.fromEntries(Object.entries(options).filter(([k]) => !OWN.includes(k)));
  const key = optionalFunction(options, "key");
  const costOf = optionalFunction(options, "cost");
  const skip = optionalFunction(options, "skip");
  const handler = optionalFunction(options, "handler");
  const wasSuccessful = optionalFunction(options, "requestWasSuccessful") ?? ((req, res) => res.statusCode < 400);
  const subnet = options.ipv6Subnet ?? 56;
  checkSubnet(subnet); // now rather than at the first request
  const headers = options.headers ?? "both";
  const sends = HEADER_SETS.get(headers);
  if (sends === undefined) {
    throw new RangeError(`headers must be "both", "draft-10", "legacy" or false, got ${JSON.stringify(headers)}`);
  }
  const status = options.statusCode ?? 429;
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new RangeError(`statusCode must be a whole number from 400 to 599, got ${String(status)}`);
  }
  const message = options.message ?? defaultMessage;
  const property = options.requestPropertyName ?? "rateLimit";
  if (property !== false && typeof property !== "string") throw new TypeError("requestPropertyName must be a string or false");
  const skipFailed = flag(options, "skipFailedRequests");
  const skipSuccessful = flag(options, "skipSuccessfulRequests");
  const limiter = limiterOf(options, rest);

  // Gives a counted hit back once the response shows it should not have counted (a response
  // that never finished counts as failed). A refund that fails leaves the hit counted.
  const refundOnFinish = (req, res, keys, cost) => {
    let done = false;
    const settle = (finished) => {
      if (done) return;
      done = true;
      let success;
      try {
        success = finished && wasSuccessful(req, res) === true;
      } catch {
        return; // a requestWasSuccessful that throws leaves the hit counted
      }
      if ((success && skipSuccessful) || (!success && skipFailed)) {
        Promise.resolve()
          .then(() => limiter.refund(keys, { cost, now: Date.now() }))
          .catch(() => {});
      }
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
    for (const [name, value] of Object.entries(limiter.headers(decision, now))) {
      if (name === "Retry-After" || sends(name)) res.setHeader(name, value);
    }
    if (decision.allowed) {
      if (skipFailed || skipSuccessful) refundOnFinish(req, res, keys, cost);
      return true;
    }
    if (handler !== undefined) {
      await handler(req, res, next, decision);
      return false;
    }
    const body = typeof message === "function" ? await message(decision, req, res) : message;
    res.statusCode = status;
    if (typeof body === "string") {
      res.setHeader("Content-Type", "text/plain; charset=utf-8");
      res.end(body);
    } else {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify(body));
    }
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
