// `make bench-worker-store`: WorkerStore against the real Worker on loopback (workerd through
// Miniflare, one Durable Object per key) beside RedisStore against a local redis-server, in
// the same run: decisions per second and each decision's latency (median, p99), with
// INFLIGHT hits in flight from one process, on
//   hot: one key, admitting (every hit decided by the key's one Durable Object / one Redis key);
//   10k: 10,000 keys drawn by a fixed-seed PRNG, admitting.
// The limits admit every hit, so each decision is a round trip (no blocked-key cache).
// SECONDS per run: BENCH_SECONDS (default 3). Prints a Markdown table for docs/benchmarks.md.
import { RateLimiter, RedisStore, WorkerStore } from "../../pkg/dist/node/index.js";
import { createClient } from "redis";
import { RedisServer } from "../../tests/redis/redis-server.mjs";
import { start } from "../../worker/test/harness.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 32);
const LIMITS = { name: "bench", algorithm: "token-bucket", limit: 1_000_000_000, window: "1s" };

function keyStream(kind) {
  let s = 0x2545f491;
  return () => {
    if (kind === "hot") return "hot";
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return `user:${(s >>> 0) % 10_000}`;
  };
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Runs `hit(key)` with INFLIGHT in flight for SECONDS: decisions/s, median and p99 latency (ms). */
async function run(hit, kind) {
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
        if (!d.allowed || d.degraded !== undefined) failed++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / SECONDS, median: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), failed };
}

const worker = await start({ bindings: { POLICIES: { bench: { limits: [LIMITS] } } } });
const server = await RedisServer.start();
const client = createClient({ socket: { host: "127.0.0.1", port: server.port } });
await client.connect();
try {
  const contenders = {
    "WorkerStore (HTTP, Miniflare)": new RateLimiter({ store: new WorkerStore({ url: worker.url, policy: "bench", timeoutMs: 10_000 }) }),
    "RedisStore (node-redis)": new RateLimiter({ ...LIMITS, store: new RedisStore(client, { prefix: "bench:" }) }),
  };
  console.log(`| workload | store | decisions/s | median ms | p99 ms |`);
  console.log(`|---|---|---:|---:|---:|`);
  for (const kind of ["hot", "10k"]) {
    for (const [name, limiter] of Object.entries(contenders)) {
      await run((k) => limiter.limit(k), kind); // warm-up: policy fetch, connections, JIT
      const r = await run((k) => limiter.limit(k), kind);
      if (r.failed > 0) throw new Error(`${name}: ${r.failed} hits denied or degraded: the run measured something else`);
      console.log(`| ${kind} | ${name} | ${Math.round(r.perSecond)} | ${r.median.toFixed(2)} | ${r.p99.toFixed(2)} |`);
    }
  }
  console.log(`\n(${INFLIGHT} in flight, ${SECONDS} s per run after a warm-up run, one Node process; node ${process.version})`);
} finally {
  await client.quit();
  server.stop();
  await worker.stop();
}
