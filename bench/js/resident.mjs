// W3, resident keys, in Node (docs/benchmarks.md, "W3: resident keys"): 1,000,000 keys drawn by a
// fixed-seed PRNG, GCRA 1000 per hour, N checks with synthetic time +0.1 µs per check, so that
// no key's state is fresh again during the run and every key stays in memory (unlike W2, where
// keys become fresh after 100 ms and the store may sweep them). Time per check, then bytes per
// key (`bytesOne`), each contender and each measure in a fresh process (`--time|--bytes
// <name>`): tollgate `limit(key)` (the full and the lite entry), a plain-JS GCRA over a `Map`,
// and rate-limiter-flexible's RateLimiterMemory (1000 points per 3600 s on the real clock,
// promises).
// N defaults to 3,000,000 (BENCH_N to change), medians of BENCH_RUNS runs (default 3).
import { execFileSync } from "node:child_process";
import { RateLimiter } from "../../pkg/dist/lib/index.js";
import { RateLimiter as LiteRateLimiter } from "../../pkg/dist/lib/lite.js";
import { wasmMemory } from "../../pkg/dist/lib/wasm.js";
import { wasmMemory as liteMemory } from "../../pkg/dist/load/node-lite.js";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { KEYS, keysByPrng, PlainGcra } from "./keys.mjs";

const N = Number(process.env.BENCH_N ?? 3_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const T0 = 1_700_000_000_000;
const STEP_MS = 0.0001;

const hourly = { algorithm: "gcra", limit: 1000, window: "1h" };

/**
 * Per contender: [limiter, check(key, now) -> admitted, keys held (null: every distinct key,
 * rate-limiter-flexible has no count), its wasm memory or null].
 */
const CONTENDERS = {
  "tollgate limit(key)": () => {
    const l = new RateLimiter(hourly);
    return [l, (key, now) => l.limit(key, { now }).allowed, () => l.size, wasmMemory];
  },
  "tollgate/lite limit(key)": () => {
    const l = new LiteRateLimiter(hourly);
    return [l, (key, now) => l.limit(key, { now }).allowed, () => l.size, liteMemory];
  },
  "plain-JS GCRA over a Map": () => {
    const g = new PlainGcra(1000, 3_600_000);
    return [g, (key, now) => g.limit(key, now), () => g.size, null];
  },
  "rate-limiter-flexible memory": () => {
    const r = new RateLimiterMemory({ points: 1000, duration: 3600 });
    const consume = async (key) => {
      try { await r.consume(key); return true; } catch { return false; }
    };
    return [r, consume, null, null];
  },
};

/** Time per check: N checks of the PRNG's keys. */
async function timeOne(name) {
  const keys = keysByPrng(N);
  const [, check, size] = CONTENDERS[name]();
  const started = process.hrtime.bigint();
  let ok = 0;
  if (name.startsWith("rate-limiter-flexible")) for (let i = 0; i < N; i++) ok += (await check(keys[i], T0 + i * STEP_MS)) ? 1 : 0;
  else for (let i = 0; i < N; i++) ok += check(keys[i], T0 + i * STEP_MS) ? 1 : 0;
  const ns = Number(process.hrtime.bigint() - started) / N;
  console.log(JSON.stringify({ name, ns, ok, keysHeld: size ? size() : new Set(keys).size }));
}

/**
 * Bytes per key: one hit for each of the 1,000,000 keys `user:0` to `user:999999` (made before
 * the first snapshot), then the JS heap growth after two GCs plus the wasm memory growth, over
 * the keys. A JS heap that shrank (V8 shows a few tens of bytes per key fewer for tollgate's
 * run, not from the limiter) counts as 0, never as a credit, as in bench.mjs.
 */
async function bytesOne(name) {
  const keys = Array.from({ length: KEYS }, (_, i) => `user:${i}`);
  const [, , , memory] = CONTENDERS[name]();
  const snap = () => {
    global.gc();
    global.gc();
    return [process.memoryUsage().heapUsed, memory ? memory().buffer.byteLength : 0];
  };
  const [h0, w0] = snap();
  const [held, check] = CONTENDERS[name]();
  if (name.startsWith("rate-limiter-flexible")) for (let i = 0; i < KEYS; i++) await check(keys[i], T0);
  else for (let i = 0; i < KEYS; i++) check(keys[i], T0);
  const [h1, w1] = snap();
  console.log(JSON.stringify({ name, bytesPerKey: (Math.max(0, h1 - h0) + (w1 - w0)) / KEYS, heap: (h1 - h0) / KEYS, wasm: (w1 - w0) / KEYS, held: !!held }));
}

if (process.argv[2] === "--time") {
  await timeOne(process.argv[3]);
  process.exit(0);
}
if (process.argv[2] === "--bytes") {
  await bytesOne(process.argv[3]);
  process.exit(0);
}

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
console.log(`node ${process.version}, W3 resident keys: ${KEYS} keys, GCRA 1000/h, N = ${N}, medians of ${RUNS} runs (fresh process each)`);
const results = {};
for (let r = 0; r < RUNS; r++) {
  for (const name of Object.keys(CONTENDERS)) {
    const run = (what) => JSON.parse(execFileSync(process.execPath, ["--expose-gc", process.argv[1], what, name], { encoding: "utf8" }).trim().split("\n").pop());
    (results[name] ??= []).push({ ...run("--time"), ...run("--bytes") });
  }
}
const map = median(results["plain-JS GCRA over a Map"].map((x) => x.ns));
const mapBytes = median(results["plain-JS GCRA over a Map"].map((x) => x.bytesPerKey));
console.log("| implementation | ns per check | vs the Map | bytes per key | vs the Map | keys held | admitted |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const [name, runs] of Object.entries(results)) {
  const ns = median(runs.map((x) => x.ns));
  const bytes = median(runs.map((x) => x.bytesPerKey));
  console.log(`| ${name} | ${ns.toFixed(1)} | ${(ns / map).toFixed(2)}x | ${bytes.toFixed(1)} | ${(bytes / mapBytes).toFixed(2)}x | ${runs[0].keysHeld} | ${runs[0].ok} |`);
}
