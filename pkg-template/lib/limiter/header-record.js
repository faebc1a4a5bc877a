// The rate-limit headers of a decision, written by the core (src/headers.rs) through the wasm
// `Policy.headers`: the same writer the Worker calls, so the package and the Worker send the
// same bytes. This file only reads the options and lays the decision out as numbers
// (wasm/src/headers.rs reads them). What each mode sends: docs/headers.md.
import { DECISION_PAIR, DECISION_PAIR_LEN, HEADER_DRAFTS, HEADER_RECORD, HEADER_RECORD_LEN, SERVING_DOMAINS } from "../contract/contract.generated.js";
import { bindingKey } from "./decision.js";
import { fail, flagOf } from "../contract/options.js";

/** The header record's indices by name (`HEADER_RECORD`). */
const H = Object.fromEntries(HEADER_RECORD.map((name, i) => [name, i]));
/**
 * A pair record's indices by name (`DECISION_PAIR`): its key and limit, then its own figures
 * (the second `limit`, the limit's figure, is `figures`).
 */
const R = { key: DECISION_PAIR.indexOf("key"), limit: DECISION_PAIR.indexOf("limit"), figures: DECISION_PAIR.lastIndexOf("limit") };
for (const name of ["allowed", "remaining", "resetAt", "retryAfter", "nextUnitAfter"]) R[name] = DECISION_PAIR.indexOf(name);

/** `standardHeaders` values, the core's drafts by number (true is express-rate-limit's draft-6). */
const STANDARD = new Map([...HEADER_DRAFTS.map((d) => [d, Number(d.slice(6))]), [true, 6], [false, 0]]);

/** Whether `value` is one of the `standardHeaders` values. */
export const isStandardHeaders = (value) => STANDARD.has(value);

/**
 * Reads the header options `standardHeaders`, `legacyHeaders` and `jitter` (`partitionKey` is
 * read by each caller: a key string for `limiter.headers`, a boolean for the middleware).
 * Throws a TypeError/RangeError naming the option for a bad value.
 */
export function headerOptions(o) {
  const standard = STANDARD.get(o.standardHeaders ?? "draft-10");
  if (standard === undefined) {
    // A RangeError, as before the codes; the code and field are wrangler.toml's for the same value.
    const code = typeof o.standardHeaders === "string" ? "invalid_value" : "invalid_type";
    throw fail("standardHeaders", o.standardHeaders, `${HEADER_DRAFTS.map((d) => JSON.stringify(d)).join(", ")}, true or false`, code, RangeError);
  }
  const legacy = flagOf("legacyHeaders", o.legacyHeaders ?? true);
  const j = o.jitter ?? false;
  if (typeof j !== "boolean" && typeof j !== "function") {
    throw fail("jitter", j, SERVING_DOMAINS.http.jitter);
  }
  const jitter = j === true ? Math.random : j === false ? null : j;
  return { standard, legacy, jitter };
}

/** A draw of `jitter` for one denial, checked. */
function draw(jitter) {
  const u = jitter();
  if (typeof u !== "number" || !(u >= 0 && u < 1)) throw new RangeError(`jitter() must return a number in [0, 1), got ${String(u)}`);
  return u;
}

/** A figure the record leaves to the core (`tollgate::layout::read_header_record`). */
const CORE = -1;

/**
 * The decision `d` (of a limiter over `names`) as the wasm writer reads it, the core's layout
 * (`tollgate::layout::HEADER_RECORD`): `[now, summary..., bindingKey, bindingLimit, pairs,
 * pair...]`, each number at its generated name's index. A denial names the pair that denied it
 * (`blockedBy`, of the key in `bindingKey`); the rest the core fills in by its own rules: an
 * admission's binding pair, the summary's wait for one unit, a pair's `nextUnitAfter` that a
 * decision built elsewhere lacks.
 */
function record(d, names, now) {
  const pairs = d.limits;
  const keyIndex = new Map();
  const out = new Float64Array(HEADER_RECORD_LEN + pairs.length * DECISION_PAIR_LEN);
  out[H.now] = now;
  out[H.allowed] = d.allowed ? 1 : 0;
  out[H.limit] = d.limit;
  out[H.remaining] = d.remaining;
  out[H.resetAt] = d.resetAt;
  out[H.retryAfter] = d.retryAfter;
  out[H.nextUnitAfter] = CORE;
  out[H.bindingKey] = CORE;
  out[H.bindingLimit] = d.blockedBy != null ? names.indexOf(d.blockedBy) : CORE;
  out[H.pairs] = pairs.length;
  const bound = bindingKey.get(d);
  pairs.forEach((p, i) => {
    let k = keyIndex.get(p.key);
    if (k === undefined) keyIndex.set(p.key, (k = keyIndex.size));
    const limit = names.indexOf(p.name);
    if (limit < 0) throw new TypeError(`headers: the decision's limit ${JSON.stringify(p.name)} is not one of this limiter's`);
    if (d.blockedBy != null && p.key === bound && out[H.bindingKey] === CORE) out[H.bindingKey] = k;
    const r = HEADER_RECORD_LEN + i * DECISION_PAIR_LEN;
    out[r + R.key] = k;
    out[r + R.limit] = limit;
    out[r + R.allowed] = p.allowed ? 1 : 0;
    out[r + R.figures] = p.limit;
    out[r + R.remaining] = p.remaining;
    out[r + R.resetAt] = p.resetAt;
    out[r + R.retryAfter] = p.retryAfter;
    out[r + R.nextUnitAfter] = p.nextUnitAfter ?? CORE;
  });
  if (d.blockedBy != null && out[H.bindingKey] === CORE) out[H.bindingKey] = 0;
  return out;
}

/**
 * The headers for `decision` as a `{ name: value }` record. `wasmPolicy`: the limiter's wasm
 * `Policy`; `names`: its limits' names; `options`: `now` (epoch ms; a number alone is `now`),
 * the header options, and `partitionKey` (a string sent hashed as `pk`).
 */
export function headersFor(decision, wasmPolicy, names, options = {}) {
  if (decision === null || typeof decision !== "object" || !Array.isArray(decision.limits) || decision.limits.length === 0) {
    throw new TypeError("headers: give a decision of this limiter");
  }
  const o = typeof options === "number" ? { now: options } : options ?? {};
  const now = o.now ?? Date.now();
  if (typeof now !== "number" || !Number.isFinite(now)) throw fail("now", now, "epoch milliseconds", "invalid_now");
  const pk = o.partitionKey;
  if (pk !== undefined && typeof pk !== "string") throw fail("partitionKey", pk, "a string (the limited key)");
  const { standard, legacy, jitter } = headerOptions(o);
  const u = !decision.allowed && jitter !== null ? draw(jitter) : -1;
  return fields(wasmPolicy.headers(record(decision, names, now), standard, legacy, pk, u));
}

/**
 * The headers of `decision` made before any limit was known (a shared store failed before its
 * policy was fetched; no `limits`), written by the core through `write(allowed, retryAfter,
 * draw)` (the extras module's `unknownPolicyHeaders`): none for an admission, a denial's
 * `Retry-After`. `options` as `headersFor`'s; only `jitter` matters.
 */
export function headersOfNoLimit(decision, options, write) {
  if (decision === null || typeof decision !== "object" || !Array.isArray(decision.limits) || decision.limits.length !== 0) {
    throw new TypeError("headers: give a decision of this limiter");
  }
  const { jitter } = headerOptions(typeof options === "object" && options !== null ? options : {});
  return fields(write(decision.allowed, decision.retryAfter, !decision.allowed && jitter !== null ? draw(jitter) : -1));
}

/** The core's `name\nvalue` text as a `{ name: value }` record. */
function fields(text) {
  const lines = text.split("\n");
  const h = {};
  for (let i = 0; i + 1 < lines.length; i += 2) h[lines[i]] = lines[i + 1];
  return h;
}
