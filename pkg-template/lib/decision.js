// Reads a decision the wasm layer wrote into its output buffer (layout in wasm/src/out.rs).
import { wasmMemory as memory } from "./wasm.js";

const HEADER = 8;
const PAIR = 7;
/** The key whose figures a multi-key decision shows (its headers are about that key). */
export const bindingKey = new WeakMap();

let view = new Float64Array(memory().buffer);

/**
 * The buffer's current view. Memory growth detaches the old ArrayBuffer (its views then have
 * length 0), so the cheap length check replaces a call into wasm per decision.
 */
export function outView() {
  if (view.length === 0) view = new Float64Array(memory().buffer);
  return view;
}

/**
 * A Decision object from the buffer at byte offset `ptr`; `names` are the limits' names; `v`
 * the view of the module that wrote it (the limiter's unless given).
 */
export function readDecision(ptr, names, keys, v = outView()) {
  const o = ptr / 8;
  const n = v[o + 7];
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
  if (keys.length > 1) bindingKey.set(d, keys[v[o + 5]]);
  return d;
}
