// @fastify/rate-limit v11's options, read with its defaults and validated as tollgate's own: a
// `max`, `timeWindow` or `ban` that is not one throws at registration with a `code` and a
// `field` (a `NaN` is taken as not given, as @fastify/rate-limit reads it; an `ipv6Subnet` out
// of range falls back to 64, as there), and translated into tollgate's limit options
// (docs/vocabulary.md). `continueExceeding` and `exponentialBackoff` are the core's penalty
// options of the same names. Only names and values are translated here; every decision is a
// tollgate limiter's (fastify-limits.js).
import { ipKey, isIPv6 } from "./client-ip.js";
import { MAX, SPEC_FIELDS as TOLLGATE_OPTIONS, fail, known, optionError, show, wholeIn } from "../contract/options.js";
import { QUEUE_FIELDS } from "../contract/contract.generated.js";

/** @fastify/rate-limit's defaults. */
export const DEFAULTS = Object.freeze({ max: 1000, timeWindow: 60_000, hook: "onRequest", ipv6Subnet: 64, cache: 5000 });

/** The options @fastify/rate-limit documents, under its names. */
export const FASTIFY_OPTIONS = [
  "global", "max", "ban", "timeWindow", "hook", "cache", "allowList", "redis", "nameSpace", "continueExceeding",
  "skipOnError", "keyGenerator", "ipv6Subnet", "groupId", "errorResponseBuilder", "enableDraftSpec",
  "addHeadersOnExceeding", "addHeaders", "onExceeding", "onExceeded", "onBanReach", "exponentialBackoff", "store",
];

/**
 * The options that make the limits tollgate's own: with any of them, `max` and `timeWindow`
 * stand for `limit` and `window` when those are not given (tollgate's limit and control options
 * are taken beside @fastify/rate-limit's, options.js `SPEC_FIELDS`; docs/vocabulary.md).
 */
export const TOLLGATE_LIMITS = ["algorithm", "quota", "limits", "limit", "window"];

/**
 * tollgate's HTTP options beside them: `cost`, a function of the request (units a request
 * takes, default 1); `estimatedCost` and `actualCost`, the cost known after the answer (cost-after.js).
 */
const HTTP_OPTIONS = ["cost", "estimatedCost", "actualCost", ...QUEUE_FIELDS];

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

/** Whether `v` is not given: absent, or `NaN` (@fastify/rate-limit's tests pass `NaN` for "the default"). */
const unset = (v) => v === undefined || v === null || Number.isNaN(v);

/** A `max` option: a whole number from 0, a function of the request, or not given (the default); else it throws. */
export function maxOf(v, fallback = DEFAULTS.max) {
  if (unset(v)) return fallback;
  if (typeof v === "function") return v;
  if (typeof v !== "number") throw fail("max", v, "a whole number from 0, or a function of the request");
  return wholeIn("max", v, 0, MAX);
}

/**
 * A `timeWindow` option: whole milliseconds from 1, a duration string as @fastify/rate-limit
 * reads one ("1 minute", "2h", "500"), a function of the request, or not given (the default);
 * anything else ("banana", "1 fortnight", -5, true) throws.
 */
export function windowOf(v, fallback = DEFAULTS.timeWindow) {
  if (unset(v)) return fallback;
  if (typeof v === "function") return v;
  if (typeof v === "string") {
    const ms = parseMs(v);
    if (ms === undefined) {
      throw optionError("invalid_value", "timeWindow", `timeWindow ${show(v)} is not a duration (write milliseconds, or a duration such as "1 minute", "30s", "2h")`);
    }
    if (!(ms >= 1)) throw optionError("out_of_range", "timeWindow", `timeWindow ${show(v)} must be longer than zero`);
    return wholeIn("timeWindow", Math.ceil(ms), 1, MAX, " of milliseconds");
  }
  if (typeof v !== "number") throw fail("timeWindow", v, 'a number of milliseconds, a duration such as "1 minute", or a function of the request');
  return wholeIn("timeWindow", v, 1, MAX, " of milliseconds");
}

/** A `ban` option: a whole number of denials from 0, or not given (no ban, -1); else it throws. */
export function banOf(v) {
  if (unset(v)) return -1;
  if (typeof v !== "number") throw fail("ban", v, "a whole number of denials from 0");
  return wholeIn("ban", v, 0, MAX);
}

/** A `max` a function answered for a request: as `maxOf`, its default for what is not one (a request is not refused for it). */
export function maxValue(v) {
  return Number.isInteger(v) && v >= 0 ? v : DEFAULTS.max;
}

/** A `timeWindow` a function answered for a request: as `windowOf`, its default for what is not one. */
export function windowValue(v) {
  if (typeof v === "string") v = parseMs(v);
  return Number.isFinite(v) && v >= 1 ? Math.ceil(v) : DEFAULTS.timeWindow;
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
