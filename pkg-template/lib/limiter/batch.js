// Batch calls (see wasm/src/batch.rs): the hot path of `RateLimiter` without a key string
// crossing into wasm per call (key handles: key-handle.js). The decisions are the core's,
// exactly as `limit()`'s.
import { wasmMemory as memory } from "../wasm.js";
import { KeyHandle } from "./key-handle.js";
import { optionError } from "../contract/options.js";

let u8 = new Uint8Array(memory().buffer);
let f64 = new Float64Array(memory().buffer);

/** Views of wasm memory, renewed after memory growth (which detaches the old buffer). */
function views() {
  if (u8.length === 0 || f64.length === 0) {
    u8 = new Uint8Array(memory().buffer);
    f64 = new Float64Array(memory().buffer);
  }
}

let ids = new Uint32Array(256);
let bytes = new Uint8Array(4096);
const encoder = new TextEncoder();

/**
 * Every key's UTF-8 bytes into one buffer (`ids` gets each key's end): one copy into wasm for
 * the batch instead of one marshalled string per key. ASCII is written by hand, anything
 * else by `TextEncoder.encodeInto` (as wasm-bindgen does for single strings).
 */
function encodeKeys(keys, n) {
  if (ids.length < n) ids = new Uint32Array(Math.max(n, ids.length * 2));
  let at = 0;
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    if (typeof k !== "string") {
      throw optionError("invalid_type", `keys[${i}]`, `keys[${i}] must be a string, got ${typeof k} (keys are all handles or all strings)`);
    }
    if (bytes.length < at + 3 * k.length) {
      const grown = new Uint8Array(Math.max(2 * bytes.length, at + 3 * k.length));
      grown.set(bytes.subarray(0, at));
      bytes = grown;
    }
    let j = 0;
    for (; j < k.length; j++) {
      const c = k.charCodeAt(j);
      if (c > 0x7f) break;
      bytes[at++] = c;
    }
    if (j < k.length) at += encoder.encodeInto(k.slice(j), bytes.subarray(at)).written;
    ids[i] = at;
  }
  return at;
}
const one = new Float64Array(1);

const isNumbers = (v) => ArrayBuffer.isView(v) || Array.isArray(v);

/** `now`/`cost(s)` of a batch: one number for all entries, or one per entry. */
function perEntry(field, value, n, fallback) {
  if (value === undefined) {
    one[0] = fallback;
    return one;
  }
  if (typeof value === "number") {
    one[0] = value;
    return one;
  }
  if (!isNumbers(value) || value instanceof BigInt64Array || value instanceof BigUint64Array) {
    throw optionError("invalid_type", field, `${field} must be a number or an array of numbers, got ${typeof value}`);
  }
  if (value.length !== n) {
    throw optionError("out_of_range", field, `${field} must hold one value per entry (${n}), got ${value.length}`);
  }
  if (value instanceof Float64Array) return value;
  const out = Float64Array.from(value);
  for (let i = 0; i < out.length; i++) {
    if (typeof value[i] !== "number") throw optionError("invalid_type", `${field}[${i}]`, `${field}[${i}] must be a number, got ${typeof value[i]}`);
  }
  return out;
}

const NUMBERS = ["remaining", "resetAt", "retryAfter"];

/**
 * The result arrays: the caller's (`out`, reused between batches) or new ones. An `out` that
 * holds only `allowed` asks for nothing else: wasm then skips the numbers, a large share of a
 * one-key check's time (docs/benchmarks.md). Returns whether the numbers are wanted.
 */
function resultArrays(out, n) {
  if (out === undefined) {
    return { admitted: 0, allowed: new Uint8Array(n), remaining: new Float64Array(n), resetAt: new Float64Array(n), retryAfter: new Float64Array(n) };
  }
  if (out === null || typeof out !== "object") throw optionError("invalid_type", "out", `out must be an object of typed arrays, got ${out}`);
  const bad = () =>
    optionError("invalid_type", "out", `out must hold allowed (Uint8Array) and optionally remaining, resetAt, retryAfter (Float64Array), each of at least ${n} entries`);
  if (!(out.allowed instanceof Uint8Array) || out.allowed.length < n) throw bad();
  for (const f of NUMBERS) {
    const a = out[f];
    if (a !== undefined && (!(a instanceof Float64Array) || a.length < n)) throw bad();
  }
  return out;
}

const wantsNumbers = (r) => r.remaining !== undefined || r.resetAt !== undefined || r.retryAfter !== undefined;

/** How many entries a batch has: `keys.length`, or with one key for all, the `now`/`cost(s)` arrays' length (else 1). */
function entryCount(keys, o) {
  if (Array.isArray(keys)) return keys.length;
  for (const v of [o.now, o.costs ?? o.cost]) if (v !== undefined && typeof v !== "number" && isNumbers(v)) return v.length;
  return 1;
}

const oneId = new Uint32Array(1);

/** `handle`'s id, when it is a key handle of `owner`. */
function ownHandle(owner, handle) {
  if (handle.owner !== owner) throw optionError("invalid_value", "keys", "keys must be a key handle of this limiter");
  return handle.id;
}

/** The ids of the first `n` key handles of `keys`, each checked to be `owner`'s. */
function handleIds(owner, keys, n) {
  if (ids.length < n) ids = new Uint32Array(Math.max(n, ids.length * 2));
  // A local for the module-level `ids`, which the loop would otherwise reload per entry.
  const into = ids;
  // A handle repeated from the previous entry (a burst of one key) was checked there.
  let last = null;
  let id = 0;
  for (let i = 0; i < n; i++) {
    const h = keys[i];
    if (h !== last) {
      if (!(h instanceof KeyHandle) || h.owner !== owner) {
        throw optionError("invalid_value", `keys[${i}]`, `keys[${i}] must be a key handle of this limiter (keys are all handles or all strings)`);
      }
      last = h;
      id = h.id;
    }
    into[i] = id;
  }
  return into.subarray(0, n);
}

/**
 * A batch's inputs, checked: its entry count `n`, the result arrays `r` (`admitted` 0 when
 * `n` is 0), the times and costs (one for all or one per entry). Throws on bad input.
 */
function batchInputs(keys, options, out) {
  const single = keys instanceof KeyHandle || typeof keys === "string";
  if (!single && !Array.isArray(keys)) {
    throw optionError("invalid_type", "keys", `keys must be a key handle, a string, or an array of them, got ${keys === null ? "null" : typeof keys}`);
  }
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw optionError("invalid_type", "options", `options must be an object, got ${options}`);
  }
  const o = options ?? {};
  const n = entryCount(keys, o);
  const r = resultArrays(out, n);
  if (n === 0) {
    r.admitted = 0;
    return { n, r, nows: null, costs: null };
  }
  if (o.cost !== undefined && o.costs !== undefined) throw optionError("conflicting_fields", "costs", "give cost (one for all) or costs (one per key), not both", TypeError);
  // Copies first: `one` is shared by now and cost.
  let nows = perEntry("now", o.now, n, Date.now());
  if (nows === one) nows = Float64Array.of(one[0]);
  const costs = perEntry(o.costs !== undefined ? "costs" : "cost", o.costs ?? o.cost, n, 1);
  return { n, r, nows, costs };
}

/**
 * One `limit()` per entry, in order, in one call into wasm. `keys` is an array of key handles
 * of `owner` or of strings, or one handle or string for every entry (then `now` or `costs`
 * gives the number of entries). Validates everything first: on bad input it throws and counts
 * nothing.
 */
export function limitBatch(wasm, owner, keys, options, out) {
  const { n, r, nows, costs } = batchInputs(keys, options, out);
  if (n === 0) return r;
  const numbers = wantsNumbers(r);
  let admitted;
  if (keys instanceof KeyHandle) {
    oneId[0] = ownHandle(owner, keys);
    admitted = wasm.limitBatch(oneId, n, nows, costs, numbers);
  } else if (typeof keys === "string") {
    const len = encodeKeys([keys], 1);
    admitted = wasm.limitBatchKeys(bytes.subarray(0, len), ids.subarray(0, 1), n, nows, costs, numbers);
  } else if (keys[0] instanceof KeyHandle) {
    admitted = wasm.limitBatch(handleIds(owner, keys, n), n, nows, costs, numbers);
  } else {
    const len = encodeKeys(keys, n);
    admitted = wasm.limitBatchKeys(bytes.subarray(0, len), ids.subarray(0, n), n, nows, costs, numbers);
  }
  views();
  const a = wasm.batchAllowedPtr;
  r.allowed.set(u8.subarray(a, a + n));
  if (numbers) {
    const p = wasm.batchNumbersPtr / 8;
    r.remaining?.set(f64.subarray(p, p + n));
    r.resetAt?.set(f64.subarray(p + n, p + 2 * n));
    r.retryAfter?.set(f64.subarray(p + 2 * n, p + 3 * n));
  }
  r.admitted = admitted;
  return r;
}

/** Entry `i`'s key of a batch of `owner` (checked by `limitBatch`'s own checks), as a function of `i`. */
function entryKeys(owner, keys, n) {
  if (keys instanceof KeyHandle) ownHandle(owner, keys);
  if (keys instanceof KeyHandle || typeof keys === "string") return () => keys;
  if (keys[0] instanceof KeyHandle) handleIds(owner, keys, n);
  else encodeKeys(keys, n);
  return (i) => keys[i];
}

/**
 * `limitBatch` of a limiter with controls (shadow, the lists, `onDecision`): each entry through
 * the limiter's own `limit()`, so that the controls see and report every hit as they do a
 * `limit()`'s, with the same inputs and results as `limitBatch`. Every entry is peeked first
 * (a peek checks what `limit()` checks and counts nothing), so bad input throws and counts
 * nothing.
 */
export function limitEach(owner, keys, options, out) {
  const { n, r, nows, costs } = batchInputs(keys, options, out);
  if (n === 0) return r;
  const keyAt = entryKeys(owner, keys, n);
  const call = (i) => ({ now: nows.length === 1 ? nows[0] : nows[i], cost: costs.length === 1 ? costs[0] : costs[i] });
  for (let i = 0; i < n; i++) owner.peek(keyAt(i), call(i));
  let admitted = 0;
  for (let i = 0; i < n; i++) {
    const d = owner.limit(keyAt(i), call(i));
    r.allowed[i] = d.allowed ? 1 : 0;
    admitted += r.allowed[i];
    if (r.remaining !== undefined) r.remaining[i] = d.remaining;
    if (r.resetAt !== undefined) r.resetAt[i] = d.resetAt;
    if (r.retryAfter !== undefined) r.retryAfter[i] = d.retryAfter;
  }
  r.admitted = admitted;
  return r;
}
