// The cost of a concurrency limit per request in one Node process (docs/benchmarks.md,
// "Concurrency"), every contender in the same run, rounds alternating between them:
//   tollgate sync:    `acquire(key)` + `release(lease)` in memory, no promise (the core's decision);
//   tollgate:         W workers, each request `acquire`, an empty async task, `release`
//                     (a denied request counts as served: what a middleware's 429 costs);
//   tollgate queued:  the same with `acquire(key, { maxWait })`: denied requests wait in line;
//   tollgate Redis:   the same over RedisStore (node-redis) on a local redis-server: one
//                     round trip to acquire, one to release, every process's limit;
//   p-limit:          W workers, each request `await limit(task)`;
//   bottleneck:       W workers, each request `await limiter.schedule(task)` (maxConcurrent).
// Limit 4, W = 16 workers, N requests per round (BENCH_N, default 200,000), ROUNDS rounds
// (BENCH_ROUNDS, default 5; bottleneck and Redis N / 100, scaled); the median ns per request.
import { createRequire } from "node:module";
import { RateLimiter, RedisStore } from "../../pkg/dist/lib/index.js";
import { RedisServer } from "../../tests/redis/redis-server.mjs";
import pLimit from "p-limit";
import Bottleneck from "bottleneck";

// The Redis client is the Redis benches' (bench/redis, installed beside this folder by
// `scripts/setup.sh npm-bench`).
const { createClient } = createRequire(new URL("../redis/package.json", import.meta.url))("redis");
const server = await RedisServer.start();
const client = createClient({ socket: { host: "127.0.0.1", port: server.port } });
await client.connect();

const N = Number(process.env.BENCH_N ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LIMIT = 4;
const WORKERS = 16;
const task = async () => {};

/** W workers sharing N requests; `one()` serves one request. Resolves with seconds. */
async function workers(one, n = N) {
  let left = n;
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (left-- > 0) await one();
    }),
  );
  return Number(process.hrtime.bigint() - t) / 1e9;
}

const limiter = () => new RateLimiter({ algorithm: "concurrency", limit: LIMIT, leaseTtl: "30s" });

const CONTENDERS = {
  "tollgate sync acquire+release": async () => {
    const l = limiter();
    const t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) l.release(l.acquire("k").lease);
    return Number(process.hrtime.bigint() - t) / 1e9;
  },
  "tollgate acquire+release (429 when full)": async () => {
    const l = limiter();
    return workers(async () => {
      const d = l.acquire("k");
      await task();
      if (d.allowed) l.release(d.lease);
    });
  },
  "tollgate queued (maxWait)": async () => {
    const l = limiter();
    return workers(async () => {
      const d = await l.acquire("k", { maxWait: 10_000, maxQueue: WORKERS });
      await task();
      l.release(d.lease);
    });
  },
  "tollgate Redis acquire+release (429 when full)": async () => {
    // A key of its own each round: no lease of an earlier round is left in it.
    const l = new RateLimiter({ algorithm: "concurrency", limit: LIMIT, leaseTtl: "30s", store: new RedisStore(client, { timeoutMs: 5000 }) });
    const key = `k${redisRound++}`;
    const s = await workers(async () => {
      const d = await l.acquire(key);
      await task();
      if (d.allowed) await l.release(d.lease);
    }, N / 100);
    return s * 100;
  },
  "p-limit": async () => {
    const limit = pLimit(LIMIT);
    return workers(() => limit(task));
  },
  bottleneck: async () => {
    const b = new Bottleneck({ maxConcurrent: LIMIT });
    // Bottleneck hands each job on through timers (milliseconds a request here): a
    // hundredth of the requests, the time scaled back to N.
    const s = await workers(() => b.schedule(task), N / 100);
    await b.stop();
    return s * 100;
  },
};

let redisRound = 0;
const times = Object.fromEntries(Object.keys(CONTENDERS).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) for (const [name, run] of Object.entries(CONTENDERS)) times[name].push(await run());
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times["p-limit"]);
console.log(`concurrency limit ${LIMIT}, ${WORKERS} workers, ${N} requests per round, median of ${ROUNDS} rounds (Node ${process.version})`);
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs);
  console.log(`${name.padEnd(42)} ${((m / N) * 1e9).toFixed(0).padStart(6)} ns/request  ${(m / base).toFixed(2)}x p-limit`);
}
await client.quit();
await server.stop();
