// @fastify/rate-limit v11's options, read as it reads them (its defaults, its lenient
// fallbacks for a `max`, `timeWindow`, `ban` or `ipv6Subnet` that is not one), and translated
// into tollgate's limit options (docs/vocabulary.md). Only names and values are translated
// here; every decision is a tollgate limiter's (fastify-limits.js).
import { ipKey, isIPv6 } from "./client-ip.js";
import { LIMITER_FIELDS, LIMIT_FIELDS, fail, known, optionError } from "./options.js";

/** @fastify/rate-limit's defaults. */
export const DEFAULTS = Object.freeze({ max: 1000, timeWindow: 60_000, hook: "onRequest", ipv6Subnet: 64, cache: 5000 });

/** The options @fastify/rate-limit documents, under its names. */
export const FASTIFY_OPTIONS = [
  "global", "max", "ban", "timeWindow", "hook", "cache", "allowList", "redis", "nameSpace", "continueExceeding",
  "skipOnError", "keyGenerator", "ipv6Subnet", "groupId", "errorResponseBuilder", "enableDraftSpec",
  "addHeadersOnExceeding", "addHeaders", "onExceeding", "onExceeded", "onBanReach", "exponentialBackoff", "store",
];

/**
 * tollgate's limit and control options, taken beside them (docs/vocabulary.md): with any of
 * `algorithm`, `quota`, `limits`, `limit` or `window` the limits are tollgate's, and `max` and
 * `timeWindow` stand for `limit` and `window` when those are not given. `store` is read apart.
 */
const TOLLGATE_OPTIONS = [...LIMIT_FIELDS, ...LIMITER_FIELDS].filter((f) => f !== "store");
/** The options that make the limits tollgate's own. */
export const TOLLGATE_LIMITS = ["algorithm", "quota", "limits", "limit", "window"];

/**
 * tollgate's HTTP options beside them: `cost`, a function of the request (units a request
 * takes, default 1); `estimatedCost` and `actualCost`, the cost known after the answer (cost-after.js).
 */
const HTTP_OPTIONS = ["cost", "estimatedCost", "actualCost"];

/** @fastify/rate-limit's options this plugin cannot give the same meaning, with tollgate's way. */
const UNSUPPORTED = {
  continueExceeding: "continueExceeding (renew the window on every hit while limited) has no counterpart in tollgate's limiters, which never count a denied hit; for a block after a denial give blockDuration (e.g. blockDuration: \"1m\": once denied, a key is denied that long)",
  exponentialBackoff: "exponentialBackoff (a block doubling with every denied hit) has no counterpart in tollgate's limiters, which never count a denied hit; for a block after a denial give blockDuration (a fixed length), or a gcra or token-bucket algorithm for a smooth rate",
};

/** `@lukeed/ms`'s `parse` (what @fastify/rate-limit reads a string `timeWindow` with): "1 minute", "2h", "500". */
const MS = /^(-?(?:\d+)?\.?\d+) *(m(?:illiseconds?|s(?:ecs?)?))?(s(?:ec(?:onds?|s)?)?)?(m(?:in(?:utes?|s)?)?)?(h(?:ours?|rs?)?)?(d(?:ays?)?)?(w(?:eeks?|ks?)?)?(y(?:ears?|rs?)?)?$/;
export function parseMs(text) {
  const m = MS.exec(text.toLowerCase());
  const n = m === null ? NaN : parseFloat(m[1]);
  if (!n) return undefined;
  const unit = [1, 1, 1000, 60_000, 3_600_000, 86_400_000, 604_800_000, 31_557_600_000].findLast((_, i) => m[i + 1] !== undefined && i >= 1) ?? 1;
  return n * unit;
}

/** `@lukeed/ms`'s long `format`: the `after` of a denial ("1 second", "5 minutes"). */
export function formatMs(ms) {
  const abs = Math.abs(ms);
  const sign = ms < 0 ? "-" : "";
  if (abs < 1000) return `${ms} ms`;
  const [per, unit] = [[31_557_600_000, "year"], [86_400_000, "day"], [3_600_000, "hour"], [60_000, "minute"], [1000, "second"]].find(([p]) => abs >= p);
  const v = abs / per;
  const n = (v | 0) === v ? v : ~~(v + 0.5);
  return `${sign}${n} ${unit}${n !== 1 ? "s" : ""}`;
}

/** A `max` as @fastify/rate-limit reads it: a number from 0 (truncated), a function, else the default. */
export function maxOf(v, fallback = DEFAULTS.max) {
  if (Number.isFinite(v) && v >= 0) return Math.trunc(v);
  return typeof v === "function" ? v : fallback;
}

/** A `timeWindow` as @fastify/rate-limit reads it: ms from 0 (truncated), an ms string, a function, else the default. */
export function windowOf(v, fallback = DEFAULTS.timeWindow) {
  if (Number.isFinite(v) && v >= 0) return Math.trunc(v);
  if (typeof v === "string") return parseMs(v) ?? fallback;
  return typeof v === "function" ? v : fallback;
}

/** `ipv6Subnet` as @fastify/rate-limit reads it: 0 to 128 (truncated), else 64. */
export function subnetOf(v) {
  return Number.isFinite(v) && v >= 0 && v <= 128 ? Math.trunc(v) : DEFAULTS.ipv6Subnet;
}

/**
 * @fastify/rate-limit's `normalizeIP`: an IPv4 address (or an IPv4-mapped IPv6 one) as its
 * dotted quad, an IPv6 address as the first address of its `/ipv6Subnet` network in canonical
 * form (`2001:db8:abcd:12::`), anything else lowercased. The masking is the package's `ipKey`.
 */
export function normalizeIP(ip, ipv6Subnet = DEFAULTS.ipv6Subnet) {
  if (typeof ip !== "string") return String(ip).toLowerCase();
  if (!isIPv6(ip)) return ip.toLowerCase();
  const bits = Math.min(128, Math.max(1, subnetOf(ipv6Subnet)));
  return ipKey(ip, bits).replace(/\/\d+$/, "");
}

/**
 * Checks the names of a plugin or route options object: @fastify/rate-limit's and tollgate's
 * are taken; an unknown one is refused with the likely name (options.js `known`), and an
 * option that cannot mean here what it means there (`UNSUPPORTED`) with tollgate's way.
 */
export function checkNames(options, at = "") {
  known(options, [...new Set([...FASTIFY_OPTIONS, ...TOLLGATE_OPTIONS, ...HTTP_OPTIONS])], at, { windowMs: "timeWindow (@fastify/rate-limit's name; or window, tollgate's, with an algorithm)" });
  for (const [name, why] of Object.entries(UNSUPPORTED)) {
    if (options[name] === true) throw optionError("unsupported_option", name, why);
  }
  if (options.groupId !== undefined && typeof options.groupId !== "string") throw new Error("groupId must be a string");
  for (const name of ["cost", "keyGenerator", "errorResponseBuilder", "onExceeding", "onExceeded", "onBanReach"]) {
    if (options[name] !== undefined && typeof options[name] !== "function") throw fail(name, options[name], "a function");
  }
  if (options.hook !== undefined && typeof options.hook !== "string") throw fail("hook", options.hook, "the name of a Fastify hook (\"onRequest\", \"preHandler\", ...)");
}

/** tollgate's own limit and control options among `options` (algorithm, quota, burst, limits, allowList, ...). */
export function tollgateFields(options) {
  return Object.fromEntries(TOLLGATE_OPTIONS.filter((f) => options[f] !== undefined).map((f) => [f, options[f]]));
}
