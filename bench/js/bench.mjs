// W1 and W2 in Node, every contender in the same run (see docs/benchmarks.md):
//   W1: 1 key, N checks, synthetic time +1 µs per check, 1000/s with a burst of 100.
//   W2: 1,000,000 keys drawn by a fixed-seed PRNG, N checks, same quota and clock.
// Contenders: tollgate (the npm package, GCRA), a plain-JS GCRA over a Map, and
// rate-limiter-flexible's RateLimiterMemory (which reads Date.now() itself and answers
// with promises, so it runs on the real clock with 1000 points per second).
// Then heap bytes per key after 1,000,000 keys. N defaults to 10,000,000 (BENCH_N to change).
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as LiteRateLimiter } from "../../pkg/dist/lib/lite.js";
import { wasmMemory } from "../../pkg/dist/lib/wasm.js";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { KEYS, keysByPrng, PlainGcra } from "./keys.mjs";

const N = Number(process.env.BENCH_N ?? 10_000_000);
const T0 = 1_700_000_000_000;

function time(fn) {
  const t = process.hrtime.bigint();
  const r = fn();
  return [Number(process.hrtime.bigint() - t) / 1e9, r];
}

const fmt = (checks, s) => `${(checks / s / 1e6).toFixed(2)} M checks/s`;

const gcra = (Limiter = RateLimiter) => new Limiter({ algorithm: "gcra", limit: 1000, window: "1s", burst: 100 });
const BATCH = 1024;

/** `limit(key)` per check: the simple path (with `Limiter`: `tollgate/lite`'s). */
function tollgateRun(keys, Limiter = RateLimiter) {
  const l = gcra(Limiter);
  return time(() => {
    let ok = 0;
    for (let i = 0; i < N; i++) if (l.limit(keys[i % keys.length], { now: T0 + i * 0.001 }).allowed) ok++;
    return ok;
  });
}

/** `limit(handle)` per check: the keys interned beforehand with `limiter.key()` (not timed). */
function handleRun(keys) {
  const l = gcra();
  const handles = new Map();
  const hs = keys.map((k) => handles.get(k) ?? handles.set(k, l.key(k)).get(k));
  return time(() => {
    let ok = 0;
    for (let i = 0; i < N; i++) if (l.limit(hs[i % hs.length], { now: T0 + i * 0.001 }).allowed) ok++;
    return ok;
  });
}

/**
 * `limitBatch` of BATCH checks per call, one `now` per check; keys as handles or strings;
 * `light`: results read are `allowed` only (an `out` without the number columns).
 */
function batchRun(keys, asHandles, light = false) {
  const l = gcra();
  const handles = new Map();
  const ks = asHandles ? keys.map((k) => handles.get(k) ?? handles.set(k, l.key(k)).get(k)) : keys;
  const batch = new Array(BATCH);
  const now = new Float64Array(BATCH);
  return time(() => {
    let ok = 0;
    let out = light ? { allowed: new Uint8Array(BATCH) } : undefined;
    for (let i = 0; i < N; i += BATCH) {
      const n = Math.min(BATCH, N - i);
      if (batch.length !== n) batch.length = n;
      for (let j = 0; j < n; j++) {
        batch[j] = ks[(i + j) % ks.length];
        now[j] = T0 + (i + j) * 0.001;
      }
      out = l.limitBatch(batch, { now: n === BATCH ? now : now.subarray(0, n) }, out);
      ok += out.admitted;
    }
    return ok;
  });
}

/** W1 only: `limitBatch(handle, { now })`, one key for BATCH checks per call, `allowed` only. */
function oneKeyBatchRun(keys) {
  const l = gcra();
  const h = l.key(keys[0]);
  const now = new Float64Array(BATCH);
  return time(() => {
    let ok = 0;
    let out = { allowed: new Uint8Array(BATCH) };
    for (let i = 0; i < N; i += BATCH) {
      const n = Math.min(BATCH, N - i);
      for (let j = 0; j < n; j++) now[j] = T0 + (i + j) * 0.001;
      out = l.limitBatch(h, { now: n === BATCH ? now : now.subarray(0, n) }, out);
      ok += out.admitted;
    }
    return ok;
  });
}

function plainRun(keys) {
  const g = new PlainGcra(1000, 1000, 100);
  return time(() => {
    let ok = 0;
    for (let i = 0; i < N; i++) if (g.limit(keys[i % keys.length], T0 + i * 0.001)) ok++;
    return ok;
  });
}

async function flexibleRun(keys) {
  const r = new RateLimiterMemory({ points: 1000, duration: 1 });
  const t = process.hrtime.bigint();
  let ok = 0;
  for (let i = 0; i < N; i++) {
    try { await r.consume(keys[i % keys.length]); ok++; } catch { /* rejected */ }
  }
  return [Number(process.hrtime.bigint() - t) / 1e9, ok];
}

async function workload(name, keys) {
  const runs = [
    ["limit(key)", tollgateRun(keys)],
    ["limit(key), tollgate/lite", tollgateRun(keys, LiteRateLimiter)],
    ["limit(handle)", handleRun(keys)],
    [`limitBatch(handles, ${BATCH})`, batchRun(keys, true)],
    [`limitBatch(handles, ${BATCH}), allowed only`, batchRun(keys, true, true)],
    [`limitBatch(strings, ${BATCH})`, batchRun(keys, false)],
  ];
  if (keys.length === 1) runs.push([`limitBatch(one handle, ${BATCH} times), allowed only`, oneKeyBatchRun(keys)]);
  const [pj, pjOk] = plainRun(keys);
  const [fx] = await flexibleRun(keys);
  console.log(`${name}: plain-JS GCRA ${fmt(N, pj)} | rate-limiter-flexible ${fmt(N, fx)} | admitted by plain ${pjOk}`);
  for (const [api, [tg, tgOk]] of runs) {
    console.log(`${name}: tollgate ${api} ${fmt(N, tg)} = ${(pj / tg).toFixed(2)}x plain, ${(fx / tg).toFixed(2)}x flexible; admitted ${tgOk}`);
  }
}

/**
 * Bytes per key after 1,000,000 GCRA keys, each contender in a fresh process (`--bytes-per-key
 * map|tollgate`) so that one's garbage or V8 string representation changes do not land in
 * the other's figure. The key strings exist before the first snapshot and are not counted.
 * tollgate's own figure is its wasm memory growth (it holds a copy of each key there); its JS
 * heap delta is printed too and only counted when positive (V8 shows about -40 B/key here,
 * from the caller's key strings, not from the limiter).
 */
async function bytesPerKey(which) {
  const keys = Array.from({ length: KEYS }, (_, i) => `user:${i}`);
  const snap = () => {
    global.gc();
    global.gc();
    return [process.memoryUsage().heapUsed, wasmMemory().buffer.byteLength];
  };
  const [h0, w0] = snap();
  let held;
  if (which === "map") {
    held = new PlainGcra(1000, 1000, 100);
    for (let i = 0; i < KEYS; i++) held.limit(keys[i], T0);
  } else {
    held = gcra();
    for (let i = 0; i < KEYS; i++) held.limit(keys[i], { now: T0 });
  }
  const [h1, w1] = snap();
  const heap = (h1 - h0) / KEYS;
  const wasm = (w1 - w0) / KEYS;
  console.log(JSON.stringify({ which, heap, wasm, total: Math.max(0, heap) + wasm, held: !!held }));
}

async function heapPerKey() {
  const { execFileSync } = await import("node:child_process");
  const run = (which) =>
    JSON.parse(execFileSync(process.execPath, ["--expose-gc", process.argv[1], "--bytes-per-key", which], { encoding: "utf8" }));
  const tg = run("tollgate");
  const pj = run("map");
  console.log(
    `bytes per key (1,000,000 GCRA keys, fresh process each): tollgate ${tg.total.toFixed(1)} ` +
      `(wasm memory ${tg.wasm.toFixed(1)}, JS heap ${tg.heap.toFixed(1)}) | plain-JS Map ${pj.total.toFixed(1)} (JS heap) = ` +
      `${(tg.total / pj.total).toFixed(2)}x`,
  );
}

if (process.argv[2] === "--bytes-per-key") {
  await bytesPerKey(process.argv[3]);
  process.exit(0);
}

console.log(`node ${process.version}, N = ${N}`);
await workload("W1 (1 key)", ["user:42"]);
await workload("W2 (1,000,000 keys)", keysByPrng(Math.min(N, 10_000_000)));
await heapPerKey();
