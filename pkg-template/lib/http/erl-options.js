// express-rate-limit's option names, read as aliases of tollgate's: `rateLimit` takes either
// (one vocabulary, docs/vocabulary.md). Only names are translated here; what the options mean is
// decided where tollgate's own names are read (options.js, http-options.js, middleware-limits.js).
import { SPEC_FIELDS as SPEC, optionError } from "../contract/options.js";
import { isStandardHeaders } from "../limiter/header-record.js";
import { PEER_NAMES } from "./peer-names.js";

/** express-rate-limit name -> tollgate name (peer-names.js). */
export const ALIASES = PEER_NAMES["express-rate-limit"];

/** Options only `rateLimit` reads (not `rateLimitFetch`): express-rate-limit's, kept under their names. */
export const MIDDLEWARE_ONLY = [
  "ipv6Subnet", "requestPropertyName", "passOnStoreError", "validate", "logger",
  // Removed from express-rate-limit in v7: accepted with its deprecation warning, and ignored.
  "draft_polli_ratelimit_headers", "onLimitReached",
];

/**
 * `options` in tollgate's names: undefined values dropped (as express-rate-limit does, so that
 * `{ limit: undefined }` means the default), aliases renamed. Returns the renamed options and
 * their limit fields (`spec`).
 */
export function translate(options) {
  const out = {};
  for (const [name, value] of Object.entries(options)) if (value !== undefined) out[name] = value;
  for (const [erl, own] of Object.entries(ALIASES)) {
    if (!(erl in out)) continue;
    // express-rate-limit itself lets `limit` win over the older `max`.
    if (erl === "max" && "limit" in out) {
      delete out.max;
      continue;
    }
    if (own in out) throw optionError("conflicting_fields", erl, `give ${own} or ${erl} (express-rate-limit's name for it), not both`);
    out[own] = out[erl];
    delete out[erl];
  }
  const spec = Object.fromEntries(SPEC.filter((f) => f in out).map((f) => [f, out[f]]));
  return { options: out, spec };
}

/**
 * The header options of options written as for express-rate-limit (ERL mode), read as it reads
 * them: `standardHeaders` defaults to false (`legacyHeaders` to true, as everywhere); an
 * unsupported `standardHeaders` value is reported (`headersDraftVersion`, through `checks`)
 * and sends no standard headers; the boolean `headers` of express-rate-limit before v6 is the
 * default of `legacyHeaders`. `options` in tollgate's names; returns them with these filled.
 */
export function erlHeaderOptions(options, checks) {
  const out = { ...options };
  if (typeof out.headers === "boolean") {
    out.legacyHeaders ??= out.headers;
    delete out.headers;
  }
  out.standardHeaders ??= false;
  if (!isStandardHeaders(out.standardHeaders)) {
    checks.headersDraftVersion(out.standardHeaders);
    out.standardHeaders = false;
  }
  return out;
}

/** The tokens of a header value outside its Structured Field strings, each through `f`. */
function outsideStrings(value, f) {
  return value.replace(/"(?:[^"\\]|\\.)*"|[^"]+/g, (t) => (t.startsWith('"') ? t : f(t)));
}

/**
 * express-rate-limit's `pk` of a key: the base64 of the first 12 hex digits of its SHA-256
 * (undefined where `node:crypto` cannot be had synchronously, before Node 20.16).
 */
export function erlPartitionKey(key) {
  const crypto = globalThis.process?.getBuiltinModule?.("node:crypto");
  if (crypto === undefined) return undefined;
  const hex = crypto.createHash("sha256").update(String(key)).digest("hex").slice(0, 12);
  return globalThis.Buffer.from(hex).toString("base64");
}

/**
 * The core's draft-8 `RateLimit` and `RateLimit-Policy` (as `headers` wrote them) in the form
 * express-rate-limit sends in its mode: parameters after `"; "` rather than `";"`, and each
 * policy member's `pk` (express-rate-limit's hash of `key`, `erlPartitionKey`) on the policy
 * only, unless `pk` is false. The figures are the core's, unchanged.
 */
export function erlDraft8(headers, key, pk = true) {
  const out = { ...headers };
  const hash = pk ? erlPartitionKey(key) : undefined;
  for (const name of Object.keys(out)) {
    const lower = name.toLowerCase();
    if (lower !== "ratelimit" && lower !== "ratelimit-policy") continue;
    let value = outsideStrings(String(out[name]), (t) => t.replace(/;pk=:[^:]*:/g, "").replace(/;(?=[a-z]+=)/g, "; "));
    if (lower === "ratelimit-policy" && hash !== undefined) {
      value = `${outsideStrings(value, (t) => t.replace(/, /g, `; pk=:${hash}:, `))}; pk=:${hash}:`;
    }
    out[name] = value;
  }
  return out;
}
