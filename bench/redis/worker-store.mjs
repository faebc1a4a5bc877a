// `make bench-worker-store`: WorkerStore against the real Worker on loopback (workerd through
// Miniflare, one Durable Object per key) beside RedisStore against a local redis-server, in
// the same run: decisions per second and each decision's latency (median, p99), with
// INFLIGHT hits in flight from one process, on
//   hot: one key, admitting (every hit decided by the key's one Durable Object / one Redis key);
//   10k: 10,000 keys drawn by a fixed-seed PRNG, admitting;
//   hot, denied: one key over its limit (1 an hour): the stores' blocked-key caches answer.
// In the admitting workloads every decision is a round trip. Beside them, the same request by
// plain fetch: the floor WorkerStore stands on.
// SECONDS per run: BENCH_SECONDS (default 3). Prints a Markdown table for docs/benchmarks.md.
import { RateLimiter, RedisStore, WorkerStore } from "../../pkg/dist/lib/index.js";
import { createClient } from "redis";
import { RedisServer } from "../../tests/redis/redis-server.mjs";
import { start, PRODUCTION_BUILD } from "../../worker/test/harness.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 32);
const LIMITS = { name: "bench", algorithm: "token-bucket", limit: 1_000_000_000, window: "1s" };
const DENYING = { name: "bench", algorithm: "fixed-window", limit: 1, window: "1h" };
const WORKLOADS = [
  { kind: "hot", policy: "bench", limits: LIMITS, allowed: true },
  { kind: "10k", policy: "bench", limits: LIMITS, allowed: true },
  { kind: "hot, denied", policy: "denied", limits: DENYING, allowed: false },
];

function keyStream(kind) {
  let s = 0x2545f491;
  return () => {
    if (kind !== "10k") return "hot";
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return `user:${(s >>> 0) % 10_000}`;
  };
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Runs `hit(key)` with INFLIGHT in flight for SECONDS: decisions/s, median and p99 latency (ms). */
async function run(hit, kind, allowed) {
  const next = keyStream(kind);
  const latencies = [];
  let failed = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const d = await hit(next());
        latencies.push(performance.now() - t);
        if (d.allowed !== allowed || d.degraded !== undefined) failed++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / SECONDS, median: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), failed };
}

const worker = await start({ bindings: { POLICIES: { bench: { limits: [LIMITS] }, denied: { limits: [DENYING] } }, TEST_MODE: undefined }, script: PRODUCTION_BUILD });
const server = await RedisServer.start();
const client = createClient({ socket: { host: "127.0.0.1", port: server.port } });
await client.connect();
try {
  // The floor under WorkerStore: the same request by plain fetch, nothing decoded into a decision.
  const plainFetch = (policy) => ({
    async limit(key) {
      const res = await fetch(`${worker.url}/v1/limit`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key, policy, cost: 1 }) });
      return res.json();
    },
  });
  const contenders = {
    "WorkerStore (HTTP, Miniflare)": (w) => new RateLimiter({ store: new WorkerStore({ url: worker.url, policy: w.policy, timeoutMs: 10_000 }) }),
    "plain fetch of POST /v1/limit (same Worker)": (w) => plainFetch(w.policy),
    "RedisStore (node-redis)": (w) => new RateLimiter({ ...w.limits, store: new RedisStore(client, { prefix: `bench:${w.policy}:` }) }),
  };
  console.log(`| workload | store | decisions/s | median ms | p99 ms |`);
  console.log(`|---|---|---:|---:|---:|`);
  for (const w of WORKLOADS) {
    for (const [name, make] of Object.entries(contenders)) {
      const limiter = make(w);
      if (!w.allowed) await limiter.limit("hot"); // the one admitted hit
      await run((k) => limiter.limit(k), w.kind, w.allowed); // warm-up: policy fetch, connections, JIT
      const r = await run((k) => limiter.limit(k), w.kind, w.allowed);
      if (r.failed > 0) throw new Error(`${name}: ${r.failed} hits decided otherwise or degraded: the run measured something else`);
      console.log(`| ${w.kind} | ${name} | ${Math.round(r.perSecond)} | ${r.median.toFixed(2)} | ${r.p99.toFixed(2)} |`);
    }
  }
  console.log(`\n(${INFLIGHT} in flight, ${SECONDS} s per run after a warm-up run, one Node process; node ${process.version})`);
} finally {
  await client.quit();
  server.stop();
  await worker.stop();
}
