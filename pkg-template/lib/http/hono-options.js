// The options of `tollgate/hono` (`rateLimiter` and `webSocketLimiter`), read once when the
// middleware is made: hono-rate-limiter 0.5's names and defaults (its names are
// express-rate-limit's, so erl-options.js renames them), tollgate's beside them. Which limiter
// decides is middleware-limits.js's (a limit function, an express-rate-limit style Store such
// as hono-rate-limiter's own, a tollgate store); the header and skip options are
// http-options.js's. Nothing here decides a request.
import { LIMIT_FIELDS, fail, fnOf, objectOf, optionError } from "../contract/options.js";
import { POLICY_OPTIONS } from "../contract/contract.generated.js";
import { AsyncRateLimiter } from "../limiter/async-rate-limiter.js";
import { httpOptions } from "./http-options.js";
import { translate } from "./erl-options.js";
import { MiddlewareLimits, ERL_DEFAULTS } from "./middleware-limits.js";

/** hono-rate-limiter's default body of a denial (its drop-in contract). */
export const HONO_MESSAGE = "Too many requests, please try again later.";

/** The options only `tollgate/hono` reads, beside http-options.js's shared ones. */
const OWN = ["requestPropertyName", "requestStorePropertyName"];

/**
 * Reads `passed` for `kind` ("http": `rateLimiter`; "ws": `webSocketLimiter`, whose
 * `statusCode` is a WebSocket close code, 1008 by default). Returns the checked options (`o`,
 * as http-options.js gives them), the limiters (`limits`), the options object
 * hono-rate-limiter hands to `handler` and a store's `init` (`config`), and the names under
 * which the context gets the decision and the store's methods.
 */
export function honoOptions(passed, kind) {
  objectOf(passed);
  if (passed.binding !== undefined) {
    throw optionError("unsupported_option", "binding", "binding is hono-rate-limiter's Cloudflare Rate Limiting binding, which decides outside tollgate and sends no headers: give store: new WorkerStore({ binding: env.TOLLGATE, policy }) (the tollgate Worker over a service binding) for one count across isolates");
  }
  const translated = translate(passed);
  const { options } = translated;
  const spec = byWorkerPolicy(options, translated.spec);
  if (options.key === undefined) {
    throw optionError("missing_field", "keyGenerator", "keyGenerator(c) is required, as in hono-rate-limiter: Hono has no portable client address (e.g. c.req.header(\"cf-connecting-ip\") on Workers, getConnInfo(c) on Node)");
  }
  fnOf("keyGenerator", options.key, "a function of the Hono context c returning its key");
  // hono-rate-limiter's headers, whatever decides: draft-6 by default, no X-RateLimit-* ones.
  options.standardHeaders ??= "draft-6";
  options.legacyHeaders ??= false;
  const property = options.requestPropertyName ?? "rateLimit";
  if (typeof property !== "string") throw fail("requestPropertyName", property, "a string");
  const storeProperty = options.requestStorePropertyName ?? "rateLimitStore";
  if (typeof storeProperty !== "string") throw fail("requestStorePropertyName", storeProperty, "a string");

  let limits;
  const o = httpOptions(options, OWN, () => {
    limits = new MiddlewareLimits({ spec, store: options.store, limiter: options.limiter });
    return limits.fixed;
  }, kind === "ws" ? "websocket" : "http"); // a WebSocket's statusCode is a close code (RFC 6455)
  if (o.after !== null && (kind === "ws" || limits.erlStore !== null)) {
    throw optionError(kind === "ws" ? "unsupported_option" : "conflicting_fields", "estimatedCost", kind === "ws" ? "estimatedCost and actualCost apply to HTTP answers, not WebSocket messages" : "estimatedCost and actualCost do not apply to an express-rate-limit style Store (it cannot reserve); use a tollgate store, such as RedisStore");
  }
  if (limits.erlStore !== null && o.costOf !== undefined) {
    throw optionError("conflicting_fields", "cost", "cost does not apply to an express-rate-limit style Store (it counts one per request); use a tollgate store, such as RedisStore");
  }
  const message = options.message ?? HONO_MESSAGE;
  // What hono-rate-limiter hands to `handler` and to a store's `init`: its options, defaults filled.
  const config = {
    limit: spec.limit ?? (limits.erlMode ? ERL_DEFAULTS.limit : undefined),
    message,
    statusCode: o.status,
    standardHeaders: options.standardHeaders,
    requestPropertyName: property,
    requestStorePropertyName: storeProperty,
    skipFailedRequests: o.skipFailed,
    skipSuccessfulRequests: o.skipSuccessful,
    keyGenerator: options.key,
    skip: o.skip,
    requestWasSuccessful: o.wasSuccessful,
    handler: o.handler,
    store: options.store,
  };
  // Read when asked: with several limits or a duration string, the core works it out.
  Object.defineProperty(config, "windowMs", { enumerable: true, get: () => limits.windowMs });
  const store = limits.erlStore;
  if (store !== null && typeof store.init === "function") store.init(config);
  return {
    o,
    limits,
    config,
    message,
    property,
    storeProperty,
    // As hono-rate-limiter (and express-rate-limit): with every header off, not even Retry-After.
    sendsHeaders: options.standardHeaders !== false || options.legacyHeaders !== false,
    /** `c.get("rateLimitStore")`: hono-rate-limiter's `getKey` and `resetKey`, over every limiter of the middleware. */
    storeMethods: {
      getKey: store !== null && typeof store.get !== "function" ? undefined : (key) => limits.get(key),
      resetKey: (key) => limits.reset(key),
    },
  };
}

/**
 * A `WorkerStore` (a store with a Worker `policy`) and no limit in the options: the limiter is
 * the Worker policy's own (hono-rate-limiter's defaults would be limits the Worker's policy does
 * not have, refused as `policy_mismatch`); the controls and `onDecision` go with it. Returns the
 * limit fields left for middleware-limits.js.
 */
function byWorkerPolicy(options, spec) {
  const store = options.store;
  if (store === null || typeof store !== "object" || typeof store.policy !== "string" || typeof store.limiter !== "function") return spec;
  if (options.limiter !== undefined || [...LIMIT_FIELDS, "limits", ...POLICY_OPTIONS].some((f) => spec[f] !== undefined)) return spec;
  options.limiter = new AsyncRateLimiter({ ...spec, store });
  for (const f of [...Object.keys(spec), "store"]) delete options[f];
  return {};
}
