// Reads a decision the wasm layer wrote into its output buffer (wasm-common/src/out.rs writes
// it): the core's layout (`tollgate::layout`), `DECISION_SUMMARY` then `DECISION_PAIR` records.
// Each module's classes write into their own memory: the caller passes that memory's view.
import { DECISION_HEADER_LEN, DECISION_PAIR_LEN, DENIED_BY_PENALTY } from "../contract/contract.generated.js";

const HEADER = DECISION_HEADER_LEN;
const PAIR = DECISION_PAIR_LEN;
const PENALTY = DENIED_BY_PENALTY;
/** The key whose figures a multi-key decision shows (its headers are about that key). */
export const bindingKey = new WeakMap();

/**
 * A function answering a Float64Array over the memory `memory()` returns, made on first use
 * and renewed after memory growth detached the old buffer (its views then have length 0, so
 * the cheap length check replaces a call into wasm per decision).
 */
export function float64View(memory) {
  let view = null;
  return () => {
    if (view === null || view.length === 0) view = new Float64Array(memory().buffer);
    return view;
  };
}

/**
 * A Decision object from the buffer at byte offset `ptr` of the view `v` (of the module that
 * wrote it); `names` are the limits' names.
 */
export function readDecision(ptr, names, keys, v) {
  const o = ptr / 8;
  const n = v[o + 7];
  if (n === 1 && keys.length === 1 && v[o] !== PENALTY) return readOne(o, names, v);
  const limits = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = o + HEADER + i * PAIR;
    const entry = {
      name: names[v[r + 1]],
      allowed: v[r + 2] === 1,
      limit: v[r + 3],
      remaining: v[r + 4],
      resetAt: v[r + 5],
      retryAfter: v[r + 6],
      nextUnitAfter: v[r + 7],
    };
    if (keys.length > 1) entry.key = keys[v[r]];
    limits[i] = entry;
  }
  const allowed = v[o] === 1;
  const d = {
    allowed,
    limit: v[o + 1],
    remaining: v[o + 2],
    resetAt: v[o + 3],
    retryAfter: v[o + 4],
    blockedBy: allowed ? null : names[v[o + 6]],
    limits,
  };
  if (v[o] === PENALTY) d.penalty = true;
  if (keys.length > 1) bindingKey.set(d, keys[v[o + 5]]);
  return d;
}

/** Keys of a one-key decision (`readDecision` only looks at more than one). */
const ONE = [""];

/**
 * The decision of one key at `o` (the output buffer's offset in numbers, its byte offset / 8):
 * `readDecision`'s, for the per-request calls. Small, so that the JIT inlines it, and
 * `readOne`, into the call: `readDecision`'s loop is reached only for a decision that is not
 * one pair without a penalty (several limits, a penalty's block).
 */
export function readKey(o, names, v) {
  if (v[o + 7] === 1 && v[o] !== PENALTY) return readOne(o, names, v);
  return readDecision(o * 8, names, ONE, v);
}

/**
 * `readDecision` of the common case, one key under one limit without a penalty: the same
 * object, built in one expression, so that every such decision has one shape (a hidden
 * class per object) and no array is grown. The limit's entry is the decision itself (the
 * core's answer for one pair is that pair's decision; wasm-common/src/out.rs writes it
 * twice), so each number is read once, for both objects.
 */
function readOne(o, names, v) {
  const allowed = v[o] === 1;
  // Every number here is whole, so `Math.trunc` returns it unchanged; but where a
  // `Float64Array` read is always a boxed number, `Math.trunc`'s result is a small integer
  // when it can be one. The objects' fields then start as small integers, which the JIT
  // stores in place, rather than as doubles, for which it allocates a box per field and
  // object on every call. (`resetAt`, an epoch time, is never a small integer.)
  const limit = Math.trunc(v[o + 1]);
  const remaining = Math.trunc(v[o + 2]);
  const resetAt = v[o + 3];
  const retryAfter = Math.trunc(v[o + 4]);
  const nextUnitAfter = Math.trunc(v[o + HEADER + 7]);
  const name = names[0];
  return {
    allowed,
    limit,
    remaining,
    resetAt,
    retryAfter,
    blockedBy: allowed ? null : name,
    limits: [{ name, allowed, limit, remaining, resetAt, retryAfter, nextUnitAfter }],
  };
}
