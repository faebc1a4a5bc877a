// The rate-limit headers of a decision, written by the core (src/headers.rs) through the wasm
// `Policy.headers`: the same writer the Worker calls, so the package and the Worker send the
// same bytes. This file only reads the options and lays the decision out as numbers
// (wasm/src/headers.rs reads them). What each mode sends: docs/headers.md.
import { DECISION_PAIR_LEN, HEADER_DRAFTS, HEADER_RECORD_LEN } from "./contract.generated.js";
import { bindingKey } from "./decision.js";
import { fail, flagOf } from "./options.js";

/** `standardHeaders` values, the core's drafts by number (true is express-rate-limit's draft-6). */
const STANDARD = new Map([...HEADER_DRAFTS.map((d) => [d, Number(d.slice(6))]), [true, 6], [false, 0]]);

/** Whether `value` is one of the `standardHeaders` values. */
export const isStandardHeaders = (value) => STANDARD.has(value);

/** The header option names `headerOptions` reads. */
export const HEADER_OPTIONS = ["standardHeaders", "legacyHeaders", "partitionKey", "jitter"];

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
    throw fail("jitter", j, "true, false or a function returning a number in [0, 1)");
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

/**
 * The decision `d` (of a limiter over `names`) as the wasm writer reads it, the core's layout
 * (`tollgate::layout::HEADER_RECORD`): `[now, summary..., bindingKey, bindingLimit, pairs, pair...]`. The pair the figures are about is the core's
 * rule: the limit that denied (`blockedBy`, of the key in `bindingKey`), else the pair with the
 * least left, the first on ties. Each pair's wait for one unit is its `nextUnitAfter`; a
 * decision built elsewhere without it gets a safe stand-in (the wait until the limit resets,
 * never earlier than the true one).
 */
function record(d, names, now) {
  const pairs = d.limits;
  const keyIndex = new Map();
  const out = new Float64Array(HEADER_RECORD_LEN + pairs.length * DECISION_PAIR_LEN);
  const least = pairs.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  const bound = d.blockedBy != null ? bindingKey.get(d) : least.key;
  const bindingLimit = names.indexOf(d.blockedBy ?? least.name);
  const wait = (p) => p.nextUnitAfter ?? (p.remaining > 0 ? 0 : Math.max(0, p.resetAt - now));
  out.set([now, d.allowed ? 1 : 0, d.limit, d.remaining, d.resetAt, d.retryAfter, 0, 0, bindingLimit, pairs.length]);
  pairs.forEach((p, i) => {
    let k = keyIndex.get(p.key);
    if (k === undefined) keyIndex.set(p.key, (k = keyIndex.size));
    const limit = names.indexOf(p.name);
    if (limit < 0) throw new TypeError(`headers: the decision's limit ${JSON.stringify(p.name)} is not one of this limiter's`);
    const w = wait(p);
    if (p.key === bound && limit === bindingLimit) [out[6], out[7]] = [w, k];
    out.set([k, limit, p.allowed ? 1 : 0, p.limit, p.remaining, p.resetAt, p.retryAfter, w], HEADER_RECORD_LEN + i * DECISION_PAIR_LEN);
  });
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
  const lines = wasmPolicy.headers(record(decision, names, now), standard, legacy, pk, u).split("\n");
  const h = {};
  for (let i = 0; i + 1 < lines.length; i += 2) h[lines[i]] = lines[i + 1];
  return h;
}
