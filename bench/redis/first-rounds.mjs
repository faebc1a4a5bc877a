// `node bench/redis/first-rounds.mjs`: what a fresh process pays for its first decisions, the
// per-process cost hotkey.mjs's 32 processes each pay (a process there decides a few dozen to
// a few hundred hits). Each of BENCH_RUNS (7) fresh processes per contender, contenders
// alternating, keeps 8 hits in flight on its own key (all admitted: GCRA 10^9/h, ioredis) for
// BENCH_ROUNDS (30) rounds and reports its CPU (user + system) per round; printed: the medians
// of the first round, the second, rounds 3-5, 6-10, 11 on, and all, in µs. BENCH_CONTENDERS
// as hotkey.mjs's (tollgate: pkg/, base: BENCH_BASE_PKG, flexible). With `child <port>
// <contender>` it is one such process.
import { fork } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const IN_FLIGHT = 8;

async function child(port, contender) {
  const { Redis } = await import("ioredis");
  const client = new Redis({ host: "127.0.0.1", port: Number(port) });
  await new Promise((resolve) => client.once("ready", resolve));
  let hit;
  if (contender === "flexible") {
    const { RateLimiterRedis } = await import("rate-limiter-flexible");
    const l = new RateLimiterRedis({ storeClient: client, points: 1e9, duration: 3600, keyPrefix: "fr:f" });
    hit = (k) => l.consume(k);
  } else {
    const dir = contender === "base" ? pathToFileURL(`${process.env.BENCH_BASE_PKG}/`) : new URL("../../pkg/", import.meta.url);
    const { RateLimiter, RedisStore } = await import(new URL("dist/lib/index.js", dir));
    const l = new RateLimiter({ algorithm: "gcra", limit: 1e9, window: "1h", store: new RedisStore(client, { prefix: "fr:t:" }) });
    hit = (k) => l.limit(k);
  }
  const key = `k${process.pid}`;
  const cpu = [];
  for (let r = 0; r < ROUNDS; r++) {
    const at = process.cpuUsage();
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => hit(key)));
    const d = process.cpuUsage(at);
    cpu.push(d.user + d.system);
  }
  client.disconnect();
  process.send(cpu);
}

if (process.argv[2] === "child") {
  await child(process.argv[3], process.argv[4]);
} else {
  const { RedisServer } = await import("../../tests/redis/redis-server.mjs");
  const server = await RedisServer.start();
  const contenders = (process.env.BENCH_CONTENDERS ?? "tollgate,flexible").split(",");
  const runs = new Map(contenders.map((c) => [c, []]));
  const self = fileURLToPath(import.meta.url);
  for (let i = 0; i < Number(process.env.BENCH_RUNS ?? 7); i++) {
    for (const c of contenders) {
      const p = fork(self, ["child", String(server.port), c]);
      runs.get(c).push(await new Promise((resolve, reject) => {
        p.once("message", resolve);
        p.once("exit", (code) => code !== 0 && reject(new Error(`${c} exited ${code}`)));
      }));
    }
  }
  await server.stop();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`| contender | round 1 | round 2 | rounds 3-5 | 6-10 | 11-${ROUNDS} | all ${ROUNDS} |`);
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const [c, rs] of runs) {
    const sum = (a, b) => median(rs.map((r) => r.slice(a, b).reduce((x, y) => x + y, 0)));
    const name = c === "base" ? `tollgate, ${process.env.BENCH_BASE_PKG}` : c;
    console.log(`| ${name} | ${[sum(0, 1), sum(1, 2), sum(2, 5), sum(5, 10), sum(10, ROUNDS), sum(0, ROUNDS)].map((x) => x.toLocaleString("en-US")).join(" | ")} |`);
  }
}
