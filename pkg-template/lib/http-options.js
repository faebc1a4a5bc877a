// The options both HTTP adapters share (`rateLimit` for node:http and Express, `rateLimitFetch`
// for the fetch API), read and checked once, when the middleware is made.
import { RateLimiter } from "./rate-limiter.js";
import { LIMITER_FIELDS, LIMIT_FIELDS, known } from "./options.js";

/** Per value of the `headers` option: which of `limiter.headers(decision)` it sends. */
const HEADER_SETS = new Map([
  ["both", () => true],
  ["draft-10", (name) => name === "RateLimit" || name === "RateLimit-Policy"],
  ["legacy", (name) => name.startsWith("X-RateLimit-")],
  [false, () => false],
]);

/** The option names `httpOptions` reads; an adapter adds its own. */
const SHARED = [
  "limiter", "key", "cost", "skip", "headers", "statusCode", "message", "handler",
  "skipFailedRequests", "skipSuccessfulRequests", "requestWasSuccessful",
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

function defaultMessage(decision) {
  const secs = Math.max(1, Math.ceil(decision.retryAfter / 1000));
  return { error: { code: "rate_limited", message: `too many requests: retry after ${secs} s` } };
}

/**
 * Reads `options` of an HTTP adapter whose own extra option names are `own`. The names that are
 * neither shared nor `own` go to `makeLimiter(options, rest)` (default: `new RateLimiter(rest)`,
 * unless `limiter` is given). Returns the
 * limiter and the checked options; `sends(name)` says whether a header of
 * `limiter.headers(decision)` is sent (`Retry-After` always is, on a denial).
 */
export function httpOptions(options, own, makeLimiter = limiterOf) {
  if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
  if (options.windowMs !== undefined) {
    // express-rate-limit's name; refused with what to write instead.
    throw new TypeError(`windowMs is express-rate-limit's option: give window (e.g. "15m", or ${options.windowMs} for milliseconds) or quota ("100/15m")`);
  }
  const mine = [...SHARED, ...own];
  known(options, [...mine, ...LIMIT_FIELDS, ...LIMITER_FIELDS]);
  const rest = Object.fromEntries(Object.entries(options).filter(([k]) => !mine.includes(k)));
  const headers = options.headers ?? "both";
  const sends = HEADER_SETS.get(headers);
  if (sends === undefined) {
    throw new RangeError(`headers must be "both", "draft-10", "legacy" or false, got ${JSON.stringify(headers)}`);
  }
  const status = options.statusCode ?? 429;
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new RangeError(`statusCode must be a whole number from 400 to 599, got ${String(status)}`);
  }
  const skipFailed = flag(options, "skipFailedRequests");
  const skipSuccessful = flag(options, "skipSuccessfulRequests");
  return {
    key: optionalFunction(options, "key"),
    costOf: optionalFunction(options, "cost"),
    skip: optionalFunction(options, "skip"),
    handler: optionalFunction(options, "handler"),
    wasSuccessful: optionalFunction(options, "requestWasSuccessful"),
    sends: (name) => name === "Retry-After" || sends(name),
    status,
    message: options.message ?? defaultMessage,
    skipFailed,
    skipSuccessful,
    /** Whether a request's answer can give its hit back (`settleHit` is needed at all). */
    settles: skipFailed || skipSuccessful,
    limiter: makeLimiter(options, rest),
  };
}

/** A denial's body as it goes on the wire, with its content type. */
export function denialBody(body) {
  return typeof body === "string"
    ? { text: body, type: "text/plain; charset=utf-8" }
    : { text: JSON.stringify(body), type: "application/json" };
}

/**
 * Once a counted request is answered: gives its hit back when skipFailedRequests or
 * skipSuccessfulRequests says it should not have counted. `succeeded()` judges the answer (an
 * adapter's `requestWasSuccessful`); one that throws, or a refund that fails, leaves the hit
 * counted.
 */
export async function settleHit(o, succeeded, keys, cost) {
  let success;
  try {
    success = succeeded() === true;
  } catch {
    return;
  }
  if ((success && o.skipSuccessful) || (!success && o.skipFailed)) {
    try {
      await o.limiter.refund(keys, { cost, now: Date.now() });
    } catch {}
  }
}
