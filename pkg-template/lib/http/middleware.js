// `rateLimit(options)`: HTTP middleware for Express, Connect and plain `node:http`
// (`(req, res, next)`), a drop-in for express-rate-limit v8: its options (as aliases of
// tollgate's, erl-options.js), its defaults (middleware-limits.js), its checks and warnings
// (erl-validations.js), its `req.rateLimit` and handler. It is a thin adapter: the decision is
// a `RateLimiter`'s (in memory, or over a store such as `RedisStore`) or, with an
// express-rate-limit Store, that store's count (erl-store.js); the headers are
// `limiter.headers(decision)`; nothing here counts anything itself.
import { ipKeyGenerator, isIPv6 } from "./client-ip.js";
import { fail, objectOf, optionError } from "../contract/options.js";
import { denialBody, flag, httpOptions, rateLimitInfo, secretsOf, settleHit } from "./http-options.js";
import { MIDDLEWARE_ONLY, erlDraft8, erlHeaderOptions, translate } from "./erl-options.js";
import { MiddlewareLimits, ERL_DEFAULTS, isErlMode } from "./middleware-limits.js";
import { checkLogger, consoleLogger, validations } from "./erl-validations.js";
import { controlsOf, listedAnswer } from "../limiter/controls.js";
import { shadowReport } from "./shadow-report.js";
import { reportFailedOpen } from "../limiter/decision-hook.js";
import { reserve, settleReservation } from "./cost-after.js";
import { releaseWhenDone, releaserOf, closeSignal } from "./lease-release.js";
import { costOf, decideHit } from "./request-path.js";

/** express-rate-limit's default body of a denial. */
export const DEFAULT_MESSAGE = "Too many requests, please try again later.";

/** Errors of a store (or of a limiter over one) as opposed to bad input, which is never passed over. */
const isStoreError = (e) => !(e instanceof TypeError) && !(e instanceof RangeError);

/**
 * Middleware deciding each request and answering 429 (`statusCode`) with `message` when it is
 * denied. See the npm README ("HTTP middleware", "Moving from express-rate-limit") for the
 * options. `middleware.limiter` is the limiter (null when `limit` is a function: one per
 * value), `resetKey(key)` and `getKey(key)` are express-rate-limit's.
 */
export function rateLimit(passed = {}) {
  objectOf(passed);
  const logger = passed.logger ?? consoleLogger;
  checkLogger(logger);
  const validate = passed.validate ?? true;
  if (typeof validate !== "boolean" && (validate === null || typeof validate !== "object")) {
    throw fail("validate", validate, "true, false or an object of check names");
  }
  const v = validations(validate, logger);
  v.validationsConfig();
  v.draftPolliHeaders(passed.draft_polli_ratelimit_headers);
  v.onLimitReached(passed.onLimitReached);

  const translated = translate(passed);
  const { spec } = translated;
  const erlMode = isErlMode(spec, translated.options.limiter);
  const options = erlMode ? erlHeaderOptions(translated.options, v) : translated.options;
  // As express-rate-limit: with every header turned off, not even Retry-After is sent.
  const sendsHeaders = !erlMode || options.standardHeaders !== false || options.legacyHeaders !== false;
  // In drafts 8 and 10 these headers are lists, one member per limit: several limiters on one
  // route each add theirs (as express-rate-limit appends them) instead of replacing the others'.
  const listsHeaders = ["draft-8", "draft-10"].includes(options.standardHeaders ?? "draft-10");
  // express-rate-limit's draft-8 form in its mode: "; " between parameters, its `pk` on the policy.
  const erlDraft8Form = erlMode && options.standardHeaders === "draft-8";
  const subnet = options.ipv6Subnet ?? 56;
  // A subnet that cannot be one is reported here and fails the IPv6 requests (ipKey throws).
  if (typeof subnet !== "function") v.ipv6Subnet(subnet);
  v.keyGeneratorIpFallback(options.key);
  v.ipv6SubnetOrKeyGenerator({ ipv6Subnet: options.ipv6Subnet, keyGenerator: options.key });
  const property = options.requestPropertyName ?? "rateLimit";
  if (property !== false && typeof property !== "string") throw fail("requestPropertyName", property, "a string or false");
  const passOnStoreError = flag(options, "passOnStoreError");

  let limits;
  const o = httpOptions(options, MIDDLEWARE_ONLY, () => {
    limits = new MiddlewareLimits({ spec, store: options.store, limiter: options.limiter });
    return limits.fixed;
  });
  const message = options.message ?? DEFAULT_MESSAGE;
  const wasSuccessful = o.wasSuccessful ?? ((req, res) => res.statusCode < 400);
  const store = limits.erlStore;
  if (store !== null && o.after !== null) {
    throw optionError("conflicting_fields", "estimatedCost", "estimatedCost and actualCost do not apply to an express-rate-limit Store (it cannot reserve); use a tollgate store, such as RedisStore");
  }
  if (o.after !== null && limits.fixed !== null) reserve(limits.fixed, null);
  if (store !== null && o.costOf !== undefined) {
    throw optionError("conflicting_fields", "cost", "cost does not apply to an express-rate-limit Store (it counts one per request); use a tollgate store, such as RedisStore");
  }

  // What express-rate-limit hands to a store's init and to handler: its options, defaults filled.
  const config = {
    limit: spec.limit ?? (limits.erlMode ? ERL_DEFAULTS.limit : undefined),
    message,
    statusCode: o.status,
    requestPropertyName: property,
    skipFailedRequests: o.skipFailed,
    skipSuccessfulRequests: o.skipSuccessful,
    ipv6Subnet: subnet,
    passOnStoreError,
    ...Object.fromEntries(Object.entries(passed).filter(([, value]) => value !== undefined)),
    validate,
    logger,
  };
  delete config.max;
  if (erlMode) Object.assign(config, { standardHeaders: options.standardHeaders, legacyHeaders: options.legacyHeaders ?? true });
  if (spec.limit !== undefined) config.limit = spec.limit;
  // Read when asked: with several limits or a duration string, the core works it out.
  Object.defineProperty(config, "windowMs", { enumerable: true, get: () => limits.windowMs });

  const counter = store !== null && !store.localKeys ? store.constructor?.name : (store ?? limits);
  v.creationStack(store === null ? options.store === undefined : store.localKeys);
  if (store !== null) {
    v.unsharedStore(options.store);
    initStore(store, config, logger);
  }

  /** express-rate-limit's default key: the client IP, IPv6 addresses by their subnet. */
  const defaultKey = async (req, res) => {
    const ip = req.ip ?? req.socket?.remoteAddress;
    v.ip(ip);
    if (typeof req.app?.get === "function") {
      v.trustProxy(req);
      v.xForwardedForHeader(req);
    }
    v.forwardedHeader(req);
    // As express-rate-limit does: requests without an address (a socket already destroyed)
    // share one key, and the check above reported it.
    if (typeof ip !== "string") return String(ip);
    let bits = 56;
    if (isIPv6(ip)) {
      bits = typeof subnet === "function" ? await subnet(req, res) : subnet;
      if (typeof subnet === "function") v.ipv6Subnet(bits);
    }
    return ipKeyGenerator(ip, bits);
  };

  const defaultHandler = async (req, res, next, options, decision) => {
    const body = typeof message === "function" ? await message(req, res, decision) : message;
    if (typeof res.status === "function" && typeof res.send === "function") {
      // Express: its own status and body rules, as express-rate-limit answers.
      res.status(options.statusCode);
      if (!res.writableEnded) res.send(body);
      return;
    }
    const { text, type } = denialBody(body);
    res.statusCode = options.statusCode;
    res.setHeader("Content-Type", type);
    res.end(text);
  };
  const handler = o.handler ?? defaultHandler;

  // Decides `req`; true when the request goes on (`next()`), false when it was answered here
  // (or by `handler`). `next` is called outside, so an error thrown downstream is not caught
  // here and passed to `next` a second time.
  const decide = async (req, res, next) => {
    // Watched before anything is awaited, so that an answer sent meanwhile is not missed.
    const outcome = o.settles || o.after !== null ? outcomeOf(res) : null;
    if (o.skip !== undefined && (await o.skip(req, res))) return true;
    const key = o.key !== undefined ? await o.key(req, res) : await defaultKey(req, res);
    const cost = await costOf(o, req, res);
    const limiter = await limits.forRequest(req, res);
    const listed = controlsOf.get(limiter)?.listed(key, req.ip ?? req.socket?.remoteAddress) ?? null;
    if (listed !== null) return answerListed(req, res, next, listedAnswer(limiter, listed, Date.now()), key);
    limits.handOver(limiter, key);
    const waiting = o.queue !== null ? closeSignal(res) : null;
    const { decision, now, mistake, error, thrown } = await decideHit(o, limiter, key, cost, waiting?.signal, secretsOf(key, req.ip ?? req.socket?.remoteAddress));
    waiting?.done();
    // The client went away while waiting in line: its ticket left the line, nothing to answer.
    if (waiting?.signal.aborted && error !== undefined) return false;
    if (mistake !== undefined) return answerMistake(res, mistake);
    if (error !== undefined) {
      // Passed on without the key, the client's address or a stack (Express may answer with it).
      if (!passOnStoreError || (store === null && options.store === undefined) || !isStoreError(error)) throw thrown;
      logger.error(error, "express-rate-limit: error from store, allowing request without rate-limiting.");
      reportFailedOpen(options.onDecision, cost);
      return true;
    }
    if (store !== null) {
      v.positiveHits(decision.used);
      if (options.standardHeaders === "draft-7") v.headersResetTime(decision.resetTime);
    }
    v.limit(decision.limit);
    v.singleCount(req, counter, `${store?.prefix ?? ""}${Array.isArray(key) ? key.join("\u0000") : key}`);
    const info = rateLimitInfo(decision, key, cost, true);
    if (property !== false) req[property] = info;
    if (sendsHeaders && !res.headersSent) {
      const written = o.headers(limiter, decision, key, now);
      for (const [name, value] of Object.entries(erlDraft8Form ? erlDraft8(written, key, options.partitionKey !== false) : written)) {
        res.setHeader(name, listsHeaders && LIST_HEADERS.has(name.toLowerCase()) ? joined(res.getHeader?.(name), value) : value);
      }
    }
    const shadow = shadowReport(decision, logger);
    if (shadow !== null && !res.headersSent) res.setHeader(...shadow);
    // An express-rate-limit Store counted the denied hit too; tollgate's limiters did not.
    if (o.after !== null && decision.allowed) {
      // Settled once the answer is sent or the connection closed, with what actualCost says then.
      void settleReservation(limiter, decision, cost, async () => {
        await outcome;
        return o.after.actualCost(req, res);
      });
    }
    if (o.settles && (decision.allowed || store !== null)) {
      void settle(outcome, req, res, limiter, key, cost, decision);
    }
    if (decision.allowed) {
      // A concurrency limit's slot is held until the answer is sent or the connection closes.
      releaseWhenDone(res, releaserOf(limiter, decision));
      return true;
    }
    await handler(req, res, next, config, info);
    return false;
  };

  /**
   * A hit a list answered (controls.js): counted nowhere, no rate-limit header; the allow list
   * lets it through, the deny list answers 403 through the handler (`decision.reason` is
   * `"denyList"`). The client address the key was made of is matched as well as the key.
   */
  const answerListed = async (req, res, next, decision, key) => {
    const info = rateLimitInfo(decision, key, 0, true);
    if (property !== false) req[property] = info;
    if (decision.allowed) return true;
    await handler(req, res, next, { ...config, statusCode: 403 }, info);
    return false;
  };

  /** Gives a counted hit back once the answer shows it should not count (skip*Requests). */
  const settle = (outcome, req, res, limiter, key, cost, decision) =>
    // One turn after the answer ends or the connection closes, as express-rate-limit's
    // listeners: a test or a store watching for the decrement sees it when the close is over.
    outcome.then((finished) => {
      // After its window reset, the count holds other hits: nothing of this one is left to give back.
      const resetAt = decision.resetTime === undefined && store !== null ? Infinity : decision.resetAt;
      if (Date.now() < resetAt) return settleHit(o, () => finished && wasSuccessful(req, res), key, cost, limiter);
    });

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
  middleware.limiter = limits.fixed;
  middleware.resetKey = (key) => limits.reset(key);
  middleware.getKey = store !== null && typeof store.get !== "function"
    ? () => {
        throw new Error("The current store does not support the get/getKey method");
      }
    : (key) => limits.get(key);
  return middleware;
}

/** Answers a request's mistake (`clientError`) itself: JSON, never Express's error page or a stack trace. */
function answerMistake(res, { status, body }) {
  if (!res.headersSent) {
    res.statusCode = status;
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(body));
  }
  return false;
}

/** The draft-8/draft-10 headers that are Structured Field Lists. */
const LIST_HEADERS = new Set(["ratelimit", "ratelimit-policy"]);

/** `value` added to a list header's members already set on the response (`existing`), if any. */
function joined(existing, value) {
  if (existing === undefined || existing === null || existing === "") return value;
  return `${Array.isArray(existing) ? existing.join(", ") : existing}, ${value}`;
}

/** Resolves once `res` is done: true when its answer was sent in full, false when the connection closed first. */
function outcomeOf(res) {
  return new Promise((resolve) => {
    res.once("finish", () => resolve(true));
    res.once("close", () => resolve(res.writableFinished === true));
    res.once("error", () => resolve(false));
  });
}

/** Calls an express-rate-limit Store's `init(options)`; its errors are logged, as express-rate-limit does. */
function initStore(store, config, logger) {
  if (typeof store.init !== "function") return;
  try {
    const done = store.init(config);
    if (done instanceof Promise) done.catch((e) => logger.error(e, "express-rate-limit: async error during store initialization."));
  } catch (e) {
    logger.error(e, "express-rate-limit: error during store initialization.");
  }
}
