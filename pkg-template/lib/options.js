// Options checks the JavaScript layer keeps: its own objects' fields (`known`), keys, call
// options. A limit's options (algorithm, quota, burst, ...) are the core's schema, parsed and
// validated in the wasm module (`tollgate::spec`, the same parser as the Worker's
// wrangler.toml), so the same mistake gets the same `code` and `field` at every edge.

const show = (v) => (typeof v === "string" ? JSON.stringify(v) : String(v));

// Limits, bursts and millisecond windows the core can take exactly (its MAX_LIMIT is 2^53 - 1).
// The Pacer's options (pacer.js) check their numbers with it. `what` follows "a whole number"
// in the message (" of milliseconds", or "").
const MAX = Number.MAX_SAFE_INTEGER;

export function whole(field, value, what) {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${field} must be a whole number${what} from 1 to ${MAX}, got ${value}`);
  }
  return value;
}

/** A TypeError with the `code` and `field` the core gives the same mistake (docs/vocabulary.md). */
function fail(field, value, expected, code = "invalid_type") {
  return Object.assign(new TypeError(`${field} must be ${expected}, got ${show(value)}`), { code, field });
}

/** What a limit is made of (the core's `tollgate::spec::LIMIT_FIELDS`; docs/vocabulary.md). */
export const LIMIT_FIELDS = ["algorithm", "limit", "window", "quota", "burst", "refillAmount", "align", "precision", "offset", "name"];
/** The controls beside the limits (controls.js); the penalty, `blockDuration`, is the core's. */
const CONTROL_FIELDS = ["shadow", "allowList", "denyList"];
/** A limiter's own options beside its limits: what the core's parser leaves to this layer. */
export const POLICY_FIELDS = ["maxKeys", "store", ...CONTROL_FIELDS];
/** Everything a limiter's options object may hold besides one limit's fields. */
export const LIMITER_FIELDS = ["limits", "blockDuration", ...POLICY_FIELDS];

/**
 * Throws on a field of `o` that is not in `allowed`: a misspelt option (`brust`) would
 * otherwise be ignored, and the limiter would admit other than what its user wrote. Every
 * options object of the package goes through it (limiters, Pacer, LeasedPacer, RedisStore).
 */
export function known(o, allowed, at = "") {
  for (const name of Object.keys(o)) {
    if (!allowed.includes(name)) {
      const field = `${at ? `${at}.` : ""}${name}`;
      const e = new TypeError(`${field} is not an option (the options are ${allowed.join(", ")})`);
      throw Object.assign(e, { code: "unknown_field", field });
    }
  }
}

export function maxKeysOf(options) {
  const m = options.maxKeys;
  if (m === undefined) return 0;
  if (typeof m !== "number" || !Number.isInteger(m) || m < 1) {
    throw new RangeError(`maxKeys must be a whole number of at least 1, got ${show(m)}`);
  }
  return m;
}

export function keysOf(key) {
  if (typeof key === "string") return [key];
  if (Array.isArray(key) && key.every((k) => typeof k === "string")) return key;
  throw fail("key", key, "a string or an array of strings");
}

/** A call's `{ cost, now }` (`cost` 1 and `now` the current time unless given). */
export function callOptions(opts) {
  const cost = costOf(opts);
  return { cost, now: nowOf(opts) };
}

/**
 * A call's `cost` (1 unless given); throws when `opts` is not an object or `cost` not a
 * number. With `nowOf` after it, what `callOptions` reads, without an object per call for
 * the per-request paths.
 */
export function costOf(opts) {
  if (opts === undefined) return 1;
  if (opts === null || typeof opts !== "object") throw fail("options", opts, "an object");
  const cost = opts.cost;
  if (typeof cost === "number") return cost;
  if (cost === undefined) return 1;
  throw fail("cost", cost, "a number", "invalid_cost");
}

/** A call's `now` (the current time unless given), for options `costOf` has accepted. */
export function nowOf(opts) {
  const now = opts === undefined ? undefined : opts.now;
  if (typeof now === "number") return now;
  if (now === undefined) return Date.now();
  throw fail("now", now, "a number of epoch milliseconds", "invalid_now");
}
