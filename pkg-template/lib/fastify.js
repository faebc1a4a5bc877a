// `tollgate/fastify`: a Fastify 5 plugin taking @fastify/rate-limit v11's options with their
// meaning and defaults (fastify-options.js), its per-route `config.rateLimit` (or `false`),
// `groupId`, `hook`, decorators (`fastify.rateLimit()`, `fastify.createRateLimit()`), its
// errors (thrown through `errorResponseBuilder`, so Fastify's error handler answers) and its
// header names; tollgate's algorithms, several limits, controls and stores beside them. It is
// a thin adapter: the decision is a tollgate limiter's (fastify-limits.js), the headers are the
// limiter's `headers(decision)` (the core's writer, draft-6 mode, under @fastify/rate-limit's
// names); Fastify itself is never imported.
import { Limits, childStore } from "./http/fastify-limits.js";
import { DEFAULTS, banOf, checkNames, formatMs, maxOf, normalizeIP, subnetOf, windowOf } from "./http/fastify-options.js";
import { optionError } from "./contract/options.js";
import { clientError } from "./http/http-options.js";
import { settleReservation } from "./http/cost-after.js";
import { extras } from "./extras.js";
import { releaseWhenDone, releaserOf, closeSignal } from "./http/lease-release.js";

const LEGACY_LABELS = Object.freeze({ rateLimit: "x-ratelimit-limit", rateRemaining: "x-ratelimit-remaining", rateReset: "x-ratelimit-reset", retryAfter: "retry-after" });
const DRAFT_LABELS = Object.freeze({ rateLimit: "ratelimit-limit", rateRemaining: "ratelimit-remaining", rateReset: "ratelimit-reset", retryAfter: "retry-after" });
/** The core's draft-6 header names, by the label @fastify/rate-limit gives each. */
const CORE_NAMES = Object.freeze({ rateLimit: "RateLimit-Limit", rateRemaining: "RateLimit-Remaining", rateReset: "RateLimit-Reset", retryAfter: "Retry-After" });

/** The default error of a denial: Fastify answers it `{ statusCode, error, message }` in JSON. */
function defaultErrorResponse(req, context) {
  const err = new Error(`Rate limit exceeded, retry in ${context.after}`);
  err.statusCode = context.statusCode;
  return err;
}

const nothing = () => {};

/** The plugin's options read as @fastify/rate-limit reads them, defaults filled. */
function globalParamsOf(settings) {
  checkNames(settings);
  const enableDraftSpec = settings.enableDraftSpec === true;
  const labels = enableDraftSpec ? DRAFT_LABELS : LEGACY_LABELS;
  return {
    ...settings,
    global: typeof settings.global === "boolean" ? settings.global : true,
    enableDraftSpec,
    labels,
    addHeaders: { [labels.rateLimit]: true, [labels.rateRemaining]: true, [labels.rateReset]: true, [labels.retryAfter]: true, ...settings.addHeaders },
    addHeadersOnExceeding: { [labels.rateLimit]: true, [labels.rateRemaining]: true, [labels.rateReset]: true, ...settings.addHeadersOnExceeding },
    max: maxOf(settings.max),
    timeWindow: windowOf(settings.timeWindow),
    hook: settings.hook || DEFAULTS.hook,
    allowList: settings.allowList || null,
    ban: banOf(settings.ban),
    onBanReach: typeof settings.onBanReach === "function" ? settings.onBanReach : nothing,
    onExceeding: typeof settings.onExceeding === "function" ? settings.onExceeding : nothing,
    onExceeded: typeof settings.onExceeded === "function" ? settings.onExceeded : nothing,
    ipv6Subnet: subnetOf(settings.ipv6Subnet),
    keyGenerator: typeof settings.keyGenerator === "function" ? settings.keyGenerator : undefined,
    errorResponseBuilder: typeof settings.errorResponseBuilder === "function" ? settings.errorResponseBuilder : defaultErrorResponse,
    skipOnError: settings.skipOnError === true,
  };
}

/** A route's (or a decorator call's) options over the plugin's, read as @fastify/rate-limit's `mergeParams`. */
function mergeParams(global, options, routeInfo) {
  checkNames(options, "config.rateLimit");
  const r = { ...global, ...options, routeInfo };
  r.timeWindow = windowOf(r.timeWindow);
  r.max = maxOf(r.max);
  r.ban = options.ban === undefined ? global.ban : banOf(r.ban);
  r.ipv6Subnet = subnetOf(r.ipv6Subnet);
  for (const name of ["onBanReach", "onExceeding", "onExceeded"]) if (typeof r[name] !== "function") r[name] = nothing;
  if (typeof r.errorResponseBuilder !== "function") r.errorResponseBuilder = defaultErrorResponse;
  return r;
}

/** The limiter and decision behind each `check` answer (kept off the answer, which users serialise). */
const decided = new WeakMap();

/** Sets the headers `wanted` names of the decision's core headers, under @fastify/rate-limit's labels. */
function setHeaders(reply, params, wanted, figures) {
  const { limiter, decision, now } = figures;
  // A hit a list answered was decided by no limit: no rate-limit header (as the middleware).
  if (limiter === null || decision === null || decision.reason !== undefined) return;
  const core = limiter.headers(decision, { now, standardHeaders: "draft-6", legacyHeaders: false });
  for (const [label, coreName] of Object.entries(CORE_NAMES)) {
    const name = params.labels[label];
    if (wanted[name] && core[coreName] !== undefined) reply.header(name, core[coreName]);
  }
}

/** The hook deciding each request of a route by `limits` (@fastify/rate-limit's `rateLimitRequestHandler`). */
function hookOf(limits, ran) {
  const params = limits.params;
  return async function rateLimitHook(req, reply) {
    if (req[ran]) return;
    req[ran] = true;
    let answer;
    // With maxQueue or maxWait the request may wait in line: a client that goes away leaves it.
    const waiting = limits.queue !== null ? closeSignal(reply.raw) : null;
    try {
      answer = await check(limits, req, { reserves: true, signal: waiting?.signal });
    } catch (e) {
      if (waiting?.signal.aborted) return reply.hijack();
      // A cost that is not one: 400 and the Worker's JSON error, as every adapter answers it.
      const mistake = clientError(e);
      if (mistake === null) throw e;
      return reply.code(mistake.status).type("application/json").send(mistake.body);
    } finally {
      waiting?.done();
    }
    if (answer.isAllowed) return;
    const figures = decided.get(answer);
    if (!answer.isExceeded) {
      if (limits.after !== null) settleOnceSent(limits.after, req, reply, figures);
      // A concurrency limit's slot is held until the answer is sent or the connection closes.
      releaseWhenDone(reply.raw, releaserOf(figures.limiter, figures.decision));
      setHeaders(reply, params, params.addHeadersOnExceeding, figures);
      params.onExceeding(req, answer.key);
      return;
    }
    params.onExceeded(req, answer.key);
    setHeaders(reply, params, params.addHeaders, figures);
    const context = { statusCode: 429, ban: false, max: answer.max, ttl: answer.ttl, after: formatMs(answer.ttlInSeconds * 1000) };
    if (answer.isBanned) {
      context.statusCode = 403;
      context.ban = true;
      params.onBanReach(req, answer.key);
    }
    throw params.errorResponseBuilder(req, context);
  };
}

/**
 * Settles an admitted request's reservation (`estimate`) once its response was sent or its
 * connection closed, with `actualCost(request, reply)` (cost-after.js `settleReservation`).
 */
function settleOnceSent(after, req, reply, { limiter, decision, cost }) {
  if (limiter === null || decision === null || decision.reservation === undefined) return;
  const raw = reply.raw;
  const sent = new Promise((resolve) => {
    raw.once("finish", resolve);
    raw.once("close", resolve);
  });
  void settleReservation(limiter, decision, cost, async () => {
    await sent;
    return after.actualCost(req, reply);
  });
}

/** `limits.check` with its figures kept aside for the headers, and a fresh key's peek at ttl 0. */
async function check(limits, req, callOptions) {
  const r = await limits.check(req, callOptions);
  if (r.isAllowed) return r;
  const { limiter, decision, now, cost = 1, ...answer } = r;
  if (callOptions?.increment === false && decision !== null && decision.reason === undefined) {
    // A peek's decision is the one the hit would get; @fastify/rate-limit reports the key as
    // it stands before it (the core's `standing`): what is left now, ttl 0 when it holds nothing.
    [answer.remaining, answer.ttl, answer.ttlInSeconds] = extras().standingFigures(decision.allowed ? 1 : 0, answer.max, answer.remaining, decision.resetAt, now, cost);
  }
  decided.set(answer, { limiter, decision, now, cost });
  return answer;
}

/** Adds `hook` to a route's hooks of that name, after those it has. */
function addRouteHook(routeOptions, hookName, handler) {
  const existing = routeOptions[hookName];
  if (Array.isArray(existing)) existing.push(handler);
  else if (typeof existing === "function") routeOptions[hookName] = [existing, handler];
  else routeOptions[hookName] = [handler];
}

/**
 * The plugin: `fastify.register(rateLimit, options)`. See the npm README ("Fastify") for the
 * options, and docs/fastify.md for what @fastify/rate-limit's own tests say of it.
 */
export async function fastifyRateLimit(fastify, settings = {}) {
  if (settings === null || typeof settings !== "object") throw optionError("invalid_type", "options", "options must be an object");
  const globalParams = globalParamsOf(settings);
  const ran = Symbol("fastify.request.rateLimitRan");
  const CustomStore = typeof settings.store === "function" ? settings.store : null;
  const tollgateStore = settings.store !== undefined && CustomStore === null ? settings.store : undefined;
  if (tollgateStore !== undefined && settings.redis !== undefined) {
    throw optionError("conflicting_fields", "redis", "give store (a tollgate store such as RedisStore) or redis (an ioredis client), not both");
  }
  const customStore = CustomStore === null ? null : new CustomStore(globalParams);
  const shared = { redis: settings.redis ?? null, store: tollgateStore };
  const plugin = new Limits(globalParams, { ...shared, customStore });
  const limitsOf = (params, routeInfo) =>
    new Limits(params, { ...shared, customStore: customStore === null ? null : childStore(customStore, params), routeInfo });

  fastify.decorateRequest(ran, false);
  const decoratorLimits = (options) => (options !== null && typeof options === "object" ? limitsOf(mergeParams(globalParams, options, {}), {}) : plugin);
  if (!fastify.hasDecorator("createRateLimit")) {
    fastify.decorate("createRateLimit", (options) => {
      const limits = decoratorLimits(options);
      return (req, callOptions) => check(limits, req, callOptions);
    });
  }
  if (!fastify.hasDecorator("rateLimit")) {
    fastify.decorate("rateLimit", (options) => hookOf(decoratorLimits(options), ran));
  }

  fastify.addHook("onRoute", (routeOptions) => {
    const config = routeOptions.config?.rateLimit;
    if (config != null) {
      if (typeof config === "object") {
        const params = mergeParams(globalParams, config, routeOptions);
        // Each route counts apart, with or without a groupId (which only suffixes the key), as
        // @fastify/rate-limit's per-route store `child`.
        addRouteHook(routeOptions, params.hook, hookOf(limitsOf(params, routeOptions), ran));
      } else if (config !== false) {
        throw new Error("Unknown value for route rate-limit configuration");
      }
    } else if (globalParams.global) {
      addRouteHook(routeOptions, globalParams.hook, hookOf(plugin, ran));
    }
  });
}

// What fastify-plugin marks a plugin with: not encapsulated (its decorators and hooks reach the
// registering scope), its name and the Fastify versions it takes.
fastifyRateLimit[Symbol.for("skip-override")] = true;
fastifyRateLimit[Symbol.for("fastify.display-name")] = "tollgate/fastify";
fastifyRateLimit[Symbol.for("plugin-meta")] = { fastify: "5.x", name: "tollgate/fastify" };

export { normalizeIP };
export default fastifyRateLimit;
