// Options checks the JavaScript layer keeps: its own objects' fields (`known`), keys, call
// options. A limit's options (algorithm, quota, burst, ...) are the core's schema, parsed and
// validated in the wasm module (`tollgate::spec`, the same parser as the Worker's
// wrangler.toml), so the same mistake gets the same `code` and `field` at every edge. The
// options around a limit (the stores', the middleware's, the pacers') are checked here in
// JavaScript, with the helpers below, which word each mistake in the core's words (`WORDS`, from
// `tollgate::spec::words`); the table tests/same-error/mistakes.json holds them to wrangler.toml's
// answers.

import { CONTROL_FIELDS, LIMIT_FIELDS as CORE_LIMIT_FIELDS, POLICY_OPTIONS, WORDS as W } from "./contract.generated.js";

/** A value in a message as the core's spec errors show it (`show_kind` in src/spec.rs). */
export function show(v) {
  if (typeof v === "string") return JSON.stringify(v);
  if (v === null || Array.isArray(v)) return v === null ? "null" : "an array";
  if (typeof v === "object") return "an object";
  return typeof v === "function" ? "a function" : String(v);
}

// Limits, bursts and millisecond windows the core can take exactly (its MAX_LIMIT is 2^53 - 1).
// The Pacer's options (pacer.js) check their numbers with it. `what` follows "a whole number"
// in the message (" of milliseconds", or "").
export const MAX = Number.MAX_SAFE_INTEGER;

export function whole(field, value, what) {
  return wholeIn(field, value, 1, MAX, what);
}

/**
 * An option error: the core's `code` (src/spec.rs `code`, docs/vocabulary.md) and `field`, the
 * option's path as the user wrote it, so a program branches on the same code and field the
 * Worker answers for the same mistake. A `RangeError` for `out_of_range`, a `TypeError`
 * otherwise (as the wasm module's spec errors, wasm-common/src/errors.rs), unless `Class`
 * keeps the class an error had before it had a code.
 */
export function optionError(code, field, message, Class = code === "out_of_range" ? RangeError : TypeError) {
  return Object.assign(new Class(message), { code, field });
}

/** `<field> must be <expected>, got <value>` (the core's `wrong_type`), code `invalid_type` unless given. */
export function fail(field, value, expected, code = "invalid_type", Class = undefined) {
  return optionError(code, field, `${field}${W.mustBe}${expected}${W.got}${show(value)}`, Class);
}

/**
 * `value` as a whole number from `min` to `max`, worded as the core's `spec::whole` (`what`
 * follows "a whole number": " of milliseconds", or ""): `invalid_type` for what is not a
 * number, `out_of_range` for the rest (fractions, NaN, too small or large).
 */
export function wholeIn(field, value, min, max, what = "") {
  if (typeof value !== "number") throw fail(field, value, "a number");
  if (!Number.isInteger(value) || value < min || value > max) {
    throw optionError("out_of_range", field, `${field}${W.whole}${what}${W.from}${min}${W.to}${max}${W.got}${value}`);
  }
  return value;
}

/** `value` as one of the strings `allowed` (the core's `spec::one_of`): `invalid_value` for another string. */
export function oneOf(field, value, allowed) {
  if (allowed.includes(value)) return value;
  const expected = `${W.oneOf}${allowed.map((a) => JSON.stringify(a)).join(", ")}`;
  throw fail(field, value, expected, typeof value === "string" ? "invalid_value" : "invalid_type");
}

/** `value` when it is a function (or absent, when `optional`); `expected` says what it is for. */
export function fnOf(field, value, expected = "a function", optional = false) {
  if (typeof value === "function" || (optional && value === undefined)) return value;
  throw fail(field, value, expected);
}

/** `value` when it is `true` or `false`. */
export function flagOf(field, value) {
  if (typeof value === "boolean") return value;
  throw fail(field, value, "true or false");
}

/**
 * A duration option as every edge reads one (docs/vocabulary.md): whole milliseconds as a
 * number from `min` to `max`, or a string such as "250ms", "1s", "15m", longer than zero and
 * at most `max` ms. A string is read by the core's grammar in a wasm module, `ofText(holder,
 * field)` (its `durationMs` export: `tollgate::spec::duration`, which the Worker's
 * wrangler.toml options use too), so its mistakes get the core's code and message; the caller
 * passes the module it has loaded, so the lite entry never loads the full one.
 */
export function durationMs(field, value, min, max, ofText) {
  if (typeof value === "number") return wholeIn(field, value, min, max, " of milliseconds");
  if (typeof value !== "string") throw fail(field, value, 'a number of milliseconds or a duration such as "100ms"');
  const ms = ofText({ [field]: value }, field);
  if (ms > max) throw optionError("out_of_range", field, `${field} ${show(value)}${W.longer}${max} ms`);
  return ms;
}

/**
 * What a limit is made of (the core's `tollgate::spec::LIMIT_FIELDS`; docs/vocabulary.md), and
 * a concurrency limit's own `leaseTtl` (docs/concurrency.md): the adapters pass it on, the
 * core refuses it beside any other algorithm.
 */
export const LIMIT_FIELDS = Object.freeze([...CORE_LIMIT_FIELDS, "leaseTtl"]);
/**
 * A limiter's own options beside its limits: what the core's parser leaves to this layer
 * (`onDecision`: the decision hook, decision-hook.js).
 */
export const POLICY_FIELDS = ["maxKeys", "onDecision", "store", ...CONTROL_FIELDS];
/** Everything a limiter's options object may hold besides one limit's fields. */
export const LIMITER_FIELDS = ["limits", ...POLICY_OPTIONS, ...POLICY_FIELDS];
/** What a middleware's limits are made of: every limit and limiter option but `store` (read apart). */
export const SPEC_FIELDS = [...LIMIT_FIELDS, ...LIMITER_FIELDS].filter((f) => f !== "store");

/**
 * Throws on a field of `o` that is not in `allowed`: a misspelt option (`brust`) would
 * otherwise be ignored, and the limiter would admit other than what its user wrote. Every
 * options object of the package goes through it (limiters, Pacer, LeasedPacer, RedisStore).
 */
export function known(o, allowed, at = "", renamed = {}, also = []) {
  for (const name of Object.keys(o)) {
    if (!allowed.includes(name)) {
      const field = `${at ? `${at}.` : ""}${name}`;
      // A name spelt differently elsewhere: what to write (the core's `RENAMED`, code `renamed`).
      if (Object.hasOwn(renamed, name)) throw optionError("renamed", field, `${field}${W.writeInstead}${renamed[name]}`);
      const likely = closest(name, [...allowed, ...Object.keys(renamed), ...also]);
      const hint = likely === null ? "" : `; did you mean ${likely}?`;
      throw optionError("unknown_field", field, `${field}${W.notAnOption}${allowed.join(", ")})${hint}`);
    }
  }
}

/**
 * The name among `names` that `name` most likely misspells: one spelt the same but for case
 * (`windowMS`: `windowMs`), else the nearest by edit distance, at most 2 edits and fewer than
 * half its length; null when none is that near.
 */
export function closest(name, names) {
  const lower = name.toLowerCase();
  const sameCase = names.find((n) => n.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  let best = null;
  let bestDistance = Math.min(3, Math.ceil(name.length / 2));
  for (const n of names) {
    const d = editDistance(lower, n.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [n, d];
  }
  return best;
}

/** Levenshtein distance of two short strings (insertions, deletions, substitutions). */
function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/** `options` when it is an options object (not null, not an array); `expected` says what it holds. */
export function objectOf(options, expected = "an object", field = "options") {
  if (options !== null && typeof options === "object" && !Array.isArray(options)) return options;
  throw fail(field, options, expected);
}

export function maxKeysOf(options) {
  const m = options.maxKeys;
  if (m === undefined) return 0;
  return wholeIn("maxKeys", m, 1, MAX);
}

export function keysOf(key) {
  if (typeof key === "string") return [key];
  if (Array.isArray(key)) {
    // Each key of a list named by its place, as the Worker names a body's `keys[i]`.
    const i = key.findIndex((k) => typeof k !== "string");
    if (i < 0) return key;
    throw fail(`keys[${i}]`, key[i], "a string");
  }
  // No key at all is the Worker's body without `key`: required, not of the wrong type.
  if (key === undefined) throw optionError("missing_key", "key", "key is required");
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

/** A key of `key()`, `export` and `import`: one string (`invalid_type` otherwise). */
export function stringKey(key) {
  if (typeof key !== "string") throw optionError("invalid_type", "key", `key must be a string, got ${typeof key}`);
  return key;
}

/** A state given to `import`: bytes from any store's `export`, or `null` (fresh). */
export function stateBytes(state) {
  if (state !== null && !(state instanceof Uint8Array)) {
    throw optionError("invalid_type", "state", `state must be a Uint8Array or null, got ${typeof state}`);
  }
  return state;
}
