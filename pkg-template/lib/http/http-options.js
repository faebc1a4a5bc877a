// The options both HTTP adapters share (`rateLimit` for node:http and Express, `rateLimitFetch`
// for the fetch API), read and checked once, when the middleware is made.
import { RateLimiter } from "../limiter/rate-limiter.js";
import { LIMITER_FIELDS, LIMIT_FIELDS, fail, flagOf, known, objectOf, optionError, wholeIn } from "../contract/options.js";
import { headerOptions } from "../limiter/header-record.js";
import { HEADER_FIELDS, SERVING_DOMAINS } from "../contract/contract.generated.js";
import { bindingKey } from "../limiter/decision.js";
import { costAfterOptions } from "./cost-after.js";
import { PEER_NAMES } from "./peer-names.js";
import { QUEUE_FIELDS } from "../contract/contract.generated.js";
import { queueOptions } from "../limiter/acquire-queue.js";
import { durationMs } from "../wasm.js";

/** The option names `httpOptions` reads; an adapter adds its own. */
const SHARED = [
  "limiter", "key", "cost", "estimatedCost", "actualCost", "skip", "statusCode", "message", "handler",
  "skipFailedRequests", "skipSuccessfulRequests", "requestWasSuccessful", ...HEADER_FIELDS, ...QUEUE_FIELDS,
];

/** express-rate-limit's names of tollgate's options (peer-names.js), for a misspelt name's hint. */
const ERL_NAMES = Object.keys(PEER_NAMES["express-rate-limit"]);

/** What to write instead of a `headers` option (express-rate-limit's, before its v6). */
const OLD_HEADERS = "headers is now standardHeaders and legacyHeaders, as in express-rate-limit: \"both\" is the default, \"draft-10\" is { legacyHeaders: false }, \"legacy\" is { standardHeaders: false }, false is { standardHeaders: false, legacyHeaders: false }";

function optionalFunction(options, name) {
  const f = options[name];
  if (f !== undefined && typeof f !== "function") throw optionError("invalid_type", name, `${name} must be a function, got ${typeof f}`);
  return f;
}

/** Option `name` of `options`: `true` or `false` (default). */
export function flag(options, name) {
  return flagOf(name, options[name] ?? false);
}

function limiterOf(options, rest) {
  return options.limiter === undefined ? new RateLimiter(rest) : givenLimiter(options.limiter, Object.keys(rest));
}

/** The `limiter` option `l`, checked, when no limiter option (`beside`: their names) is given with it. */
export function givenLimiter(l, beside) {
  if (l === null || typeof l !== "object" || typeof l.limit !== "function" || typeof l.headers !== "function") {
    throw fail("limiter", l, "a RateLimiter (or a store's limiter)");
  }
  if (beside.length > 0) {
    throw optionError("conflicting_fields", beside[0], `${beside[0]} cannot be given with limiter: give either limiter or the limiter's options (${beside.join(", ")}), not both`);
  }
  return l;
}

function defaultMessage(decision) {
  if (decision.reason === "denyList") return { error: { code: "deny_listed", message: "this client is on the deny list" } };
  const secs = Math.max(1, Math.ceil(decision.retryAfter / 1000));
  return { error: { code: "rate_limited", message: `too many requests: retry after ${secs} s` } };
}

/**
 * Reads `options` of an HTTP adapter whose own extra option names are `own` (`edge`: "http", or
 * "websocket", whose `statusCode` is a close code). The names that are
 * neither shared nor `own` go to `makeLimiter(options, rest)` (default: `new RateLimiter(rest)`,
 * unless `limiter` is given). Returns the limiter and the checked options;
 * `headers(limiter, decision, keys, now)` is what the header options ask `limiter.headers` for
 * (`Retry-After` is always in it, on a denial).
 */
export function httpOptions(options, own, makeLimiter = limiterOf, edge = "http") {
  objectOf(options);
  if (options.windowMs !== undefined) {
    // express-rate-limit's name; refused with what to write instead.
    throw optionError("renamed", "windowMs", `windowMs is express-rate-limit's option: give window (e.g. "15m", or ${options.windowMs} for milliseconds) or quota ("100/15m")`);
  }
  if (options.headers !== undefined) throw optionError("renamed", "headers", OLD_HEADERS);
  const mine = [...SHARED, ...own];
  // express-rate-limit's names of options are suggested too (`windowMS`: `windowMs`).
  known(options, [...mine, ...LIMIT_FIELDS, ...LIMITER_FIELDS], "", {}, ERL_NAMES);
  const rest = Object.fromEntries(Object.entries(options).filter(([k]) => !mine.includes(k)));
  const { standardHeaders, legacyHeaders, jitter } = options;
  headerOptions(options); // checked now rather than at the first request
  const partitionKey = flag(options, "partitionKey");
  const [min, max, defaultStatus] = SERVING_DOMAINS[edge].status; // the core's domain
  const status = wholeIn("statusCode", options.statusCode ?? defaultStatus, min, max);
  const after = costAfterOptions(options);
  const queue = queueOptions(options, durationMs);
  if (queue !== null && after !== null) throw optionError("conflicting_fields", "maxQueue", "maxQueue and maxWait wait for a concurrency limit's slot; they cannot be given with estimatedCost or actualCost (a reservation)");
  const limiter = makeLimiter(options, rest);
  const skipFailed = flag(options, "skipFailedRequests");
  const skipSuccessful = flag(options, "skipSuccessfulRequests");
  return {
    key: optionalFunction(options, "key"),
    costOf: optionalFunction(options, "cost"),
    /** `{ estimateOf, actualCost }` (cost-after.js) when the cost is known after the answer, else null. */
    after,
    /** `{ maxQueue, maxWait }` (ms) when a request waits in line for a slot, else null. */
    queue,
    skip: optionalFunction(options, "skip"),
    handler: optionalFunction(options, "handler"),
    wasSuccessful: optionalFunction(options, "requestWasSuccessful"),
    /** The headers of `decision` for `keys`, as the deciding limiter's `headers` writes them. */
    headers: (decidedBy, decision, keys, now) => {
      const options = { now, standardHeaders, legacyHeaders, jitter };
      if (partitionKey) options.partitionKey = partitionKeyOf(decision, keys);
      return decidedBy.headers(decision, options);
    },
    status,
    message: options.message ?? defaultMessage,
    skipFailed,
    skipSuccessful,
    /** Whether a request's answer can give its hit back (`settleHit` is needed at all). */
    settles: skipFailed || skipSuccessful,
    limiter,
  };
}

/** The key a decision is about, as a string (`pk` is its hash). */
function partitionKeyOf(decision, keys) {
  const one = (k) => (typeof k === "string" ? k : String(k?.key ?? k));
  if (!Array.isArray(keys)) return one(keys);
  return keys.length === 1 ? one(keys[0]) : bindingKey.get(decision) ?? one(keys[0]);
}

/**
 * The answer to a request a limiter refused as a client's mistake: a cost that is not one (0,
 * negative, a fraction, NaN, not a number) or that no limit can ever hold, the core's
 * `invalid_cost`. As the Worker answers the same mistake: 400 and `{"error":{"code","message",
 * "field"}}`. Null for any other error (a store's, a bug's), which goes on as it is.
 */
export function clientError(e) {
  if (e === null || typeof e !== "object" || e.code !== "invalid_cost") return null;
  return { status: 400, body: { error: { code: e.code, message: e.message, field: e.field ?? "cost" } } };
}

/**
 * `req.rateLimit` (`c.get("rateLimit")` at `tollgate/hono`): the decision with the peers' fields
 * (`used`, `resetTime`, `key`) added on the decision itself, so that `limiter.headers(info)` still
 * knows it (on a copy if it cannot be extended); with `current`, express-rate-limit's older name
 * of `used`, hidden from iteration and JSON as there.
 */
export function rateLimitInfo(decision, key, cost, current = false) {
  const info = Object.isExtensible(decision) ? decision : { ...decision };
  const used = decision.used ?? decision.limit - decision.remaining + (decision.allowed ? 0 : cost);
  info.used = used;
  if (!("resetTime" in decision)) info.resetTime = new Date(decision.resetAt);
  info.key = key;
  if (current) Object.defineProperty(info, "current", { value: used, enumerable: false, configurable: true });
  return info;
}

/** A denial's body as it goes on the wire, with its content type. */
export function denialBody(body) {
  return typeof body === "string"
    ? { text: body, type: "text/plain; charset=utf-8" }
    : { text: JSON.stringify(body), type: "application/json" };
}

/**
 * Once a counted request is answered: gives its hit back (to `limiter`, the deciding one) when
 * skipFailedRequests or skipSuccessfulRequests says it should not have counted. `succeeded()`
 * judges the answer (an adapter's `requestWasSuccessful`, awaited when it answers a promise);
 * one that throws, or a refund that fails, leaves the hit counted. A judgement that is not a
 * promise (a connection closed before its answer: failed) reaches the refund in the same
 * turn, as express-rate-limit's `decrement` on `close` does: a store sees it before anything
 * awaiting the request's end goes on.
 */
export async function settleHit(o, succeeded, keys, cost, limiter = o.limiter) {
  try {
    let success = succeeded();
    if (typeof success?.then === "function") success = await success;
    if (success === true ? o.skipSuccessful : o.skipFailed) await limiter.refund(keys, { cost, now: Date.now() });
  } catch {}
}

/** An IPv4 or IPv6 address anywhere in a text (an IPv6 one: four groups or more, or a "::"). */
const ADDRESS = /\b\d{1,3}(?:\.\d{1,3}){3}\b|(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}|[0-9a-f]{0,4}::[0-9a-f]{0,4}/i;

/**
 * The error a middleware passes on (to `next`, Fastify's or Hono's error handler, the runtime)
 * when a store or a limiter failed: never a store key, a client address or a stack in what a
 * framework may answer with. Its message is the original's when that names none of `secrets`
 * (the request's key and client address) and no IP address, else one that says only what
 * failed, by the original's code; its stack is that one line; `statusCode` is 500; the original
 * is its `cause`, for logs. A `TypeError` or `RangeError` (the caller's mistake: a key or an
 * answer that is not one, whose message shows no key) goes on as it is.
 */
export function publicError(e, secrets = []) {
  // A caller's mistake (a key or an answer that is not one) is the caller's to see, as it is.
  if (e instanceof TypeError || e instanceof RangeError) return e;
  const message = typeof e?.message === "string" ? e.message : "";
  const code = typeof e?.code === "string" && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(e.code) ? e.code : undefined;
  const named = secrets.some((s) => typeof s === "string" && s.length > 0 && message.includes(s));
  const shown = message !== "" && !named && !ADDRESS.test(message) ? message : `the rate limiter could not decide this request${code === undefined ? "" : ` (${code})`}`;
  const out = new Error(shown, { cause: e });
  if (code !== undefined) out.code = code;
  out.statusCode = 500;
  out.stack = `Error: ${shown}`;
  return out;
}

/** The strings a request's error answer must not show: its key(s) and its client address. */
export function secretsOf(keys, address) {
  const list = Array.isArray(keys) ? keys.map((k) => (typeof k === "string" ? k : String(k?.key ?? k))) : [typeof keys === "string" ? keys : String(keys ?? "")];
  return [...list, typeof address === "string" ? address : ""];
}
