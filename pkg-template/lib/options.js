// Options as users write them -> the flat lists the wasm `Policy` constructor takes. Types are
// checked here (TypeError naming the field and value); values and ranges by the Rust core.

const ALGORITHMS = ["fixed-window", "sliding-log", "sliding-window", "token-bucket", "gcra", "sliding-buckets"];

const show = (v) => (typeof v === "string" ? JSON.stringify(v) : String(v));

// Limits, bursts and millisecond windows the core can take exactly (its MAX_LIMIT is 2^53 - 1).
// Checked here (and by the Pacer's options, pacer.js) so that a number like 1e300 gets a range
// error, not a quota string "1e+300/1s" that the core would reject as malformed. `what` follows
// "a whole number" in the message (" of milliseconds", or "").
const MAX = Number.MAX_SAFE_INTEGER;

export function whole(field, value, what) {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${field} must be a whole number${what} from 1 to ${MAX}, got ${value}`);
  }
  return value;
}

function fail(field, value, expected) {
  return new TypeError(`${field} must be ${expected}, got ${show(value)}`);
}

/** A duration as the core parses it: `"1s"`, `"250ms"`, or a number of milliseconds. */
function duration(field, value) {
  if (typeof value === "string") return value;
  if (typeof value === "number") {
    return `${whole(field, value, " of milliseconds")}ms`;
  }
  throw fail(field, value, 'a duration such as "1s" or a number of milliseconds');
}

function one(o, at, index) {
  if (o === null || typeof o !== "object") throw fail(at || "options", o, "an object");
  const f = (name) => (at ? `${at}.${name}` : name);
  const { algorithm, limit, window, quota, burst, align, precision, name } = o;
  if (!ALGORITHMS.includes(algorithm)) {
    throw fail(f("algorithm"), algorithm, `one of ${ALGORITHMS.map((a) => `"${a}"`).join(", ")}`);
  }
  let q;
  if (quota !== undefined) {
    if (typeof quota !== "string") throw fail(f("quota"), quota, 'a string such as "100/s"');
    if (limit !== undefined || window !== undefined) {
      throw new TypeError(`${f("quota")} replaces limit and window; give one or the other`);
    }
    q = quota;
  } else {
    if (typeof limit !== "number") throw fail(f("limit"), limit, "a number");
    whole(f("limit"), limit, "");
    if (window === undefined) throw new TypeError(`${f("window")} is required with limit (or give quota)`);
    q = `${limit}/${duration(f("window"), window)}`;
  }
  let b = 0;
  if (burst !== undefined) {
    if (typeof burst !== "number") throw fail(f("burst"), burst, "a number");
    b = whole(f("burst"), burst, "");
  }
  let algo = algorithm;
  if (align !== undefined) {
    if (align !== "clock" && align !== "first-hit") throw fail(f("align"), align, '"clock" or "first-hit"');
    if (algorithm !== "fixed-window") {
      throw new TypeError(`${f("align")} applies to "fixed-window" only, not ${show(algorithm)}`);
    }
    if (align === "first-hit") algo = "fixed-window-first-hit";
  }
  const p = precision === undefined ? "" : duration(f("precision"), precision);
  if (name !== undefined && typeof name !== "string") throw fail(f("name"), name, "a string");
  return { name: name ?? (index === undefined ? "default" : `limit-${index}`), algorithm: algo, quota: q, burst: b, precision: p };
}

/** What a limit is made of, and what a limiter's options hold besides. */
export const LIMIT_FIELDS = ["algorithm", "limit", "window", "quota", "burst", "align", "precision", "name"];
export const LIMITER_FIELDS = ["limits", "maxKeys", "store"];

/**
 * Throws on a field of `o` that is not in `allowed`: a misspelt option (`brust`) would
 * otherwise be ignored, and the limiter would admit other than what its user wrote. Every
 * options object of the package goes through it (limiters, Pacer, LeasedPacer, RedisStore).
 */
export function known(o, allowed, at = "") {
  for (const field of Object.keys(o)) {
    if (!allowed.includes(field)) {
      throw new TypeError(`${at ? `${at}.` : ""}${field} is not an option (the options are ${allowed.join(", ")})`);
    }
  }
}

/** The limits of `options` (one, or `options.limits`), normalised. */
export function normalizeLimits(options) {
  if (options === null || typeof options !== "object") throw fail("options", options, "an object");
  let list;
  if (options.limits !== undefined) {
    if (!Array.isArray(options.limits) || options.limits.length === 0) {
      throw fail("limits", options.limits, "a non-empty array of limits");
    }
    if (options.algorithm !== undefined) {
      throw new TypeError("give either algorithm (one limit) or limits (several), not both");
    }
    const beside = Object.keys(options).find((f) => LIMIT_FIELDS.includes(f));
    if (beside !== undefined) throw new TypeError(`${beside} goes in each of limits, not beside them`);
    known(options, LIMITER_FIELDS, "");
    list = options.limits.map((l, i) => {
      if (l !== null && typeof l === "object") known(l, LIMIT_FIELDS, `limits[${i}]`);
      return one(l, `limits[${i}]`, i);
    });
  } else {
    known(options, [...LIMIT_FIELDS, ...LIMITER_FIELDS], "");
    list = [one(options, "", undefined)];
  }
  return {
    names: list.map((l) => l.name),
    algorithms: list.map((l) => l.algorithm),
    quotas: list.map((l) => l.quota),
    bursts: Float64Array.from(list.map((l) => l.burst)),
    precisions: list.map((l) => l.precision),
  };
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

export function callOptions(opts) {
  if (opts === undefined) return { cost: 1, now: Date.now() };
  if (opts === null || typeof opts !== "object") throw fail("options", opts, "an object");
  const { cost = 1, now = Date.now() } = opts;
  if (typeof cost !== "number") throw fail("cost", cost, "a number");
  if (typeof now !== "number") throw fail("now", now, "a number of epoch milliseconds");
  return { cost, now };
}
