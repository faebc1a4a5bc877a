// `make bench-redis`, part 1: decisions per second, Redis commands and CPU per decision against
// a local redis-server: tollgate's RedisStore (node-redis and ioredis) and rate-limiter-flexible's
// RateLimiterRedis (ioredis plain and auto-pipelined, node-redis) in the same run. Commands:
// script calls Redis ran (INFO commandstats); a command is one round trip unless the client
// pipelines it with others (node-redis and ioredis with enableAutoPipelining write a tick's
// commands together; tollgate also puts different keys' swaps of a tick in one command).
//   R1: 10,000 keys drawn by a fixed-seed PRNG, 64 hits in flight, limits that admit
//       (the common case: each key's state is this process's last write).
//   R2: one hot key, 64 hits in flight, admitting.
//   R3: one key over its limit, 64 hits in flight (tollgate's blocked-key cache).
// Each contender runs SECONDS (default 3) per workload, one process, real clock.
// BENCH_WORKLOADS=R1 (comma-separated) and BENCH_ONLY=<part of a name> pick what runs.
import { RateLimiter, RedisStore } from "../../pkg/dist/lib/index.js";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { createClient } from "redis";
import { Redis } from "ioredis";
import { RedisServer } from "../../tests/redis/redis-server.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const INFLIGHT = 64;

const server = await RedisServer.start();
const nodeRedis = createClient({ socket: { host: "127.0.0.1", port: server.port } });
await nodeRedis.connect();
const ioredis = new Redis({ host: "127.0.0.1", port: server.port });
// ioredis writes each command as it is issued unless asked to pipeline a tick's commands;
// node-redis always does. Flexible is also run on both, so that no contender is measured on
// the slower client setting only.
const ioredisPiped = new Redis({ host: "127.0.0.1", port: server.port, enableAutoPipelining: true });

/** CPU seconds the Redis server has used so far (INFO cpu), read over a client not counted above. */
const probe = createClient({ socket: { host: "127.0.0.1", port: server.port } });
await probe.connect();
/**
 * Script calls Redis has run (INFO commandstats: EVAL + EVALSHA). Every contender sends only
 * these here, one per command; the commands scripts run inside are not counted.
 */
async function commands() {
  const info = String(await probe.sendCommand(["INFO", "commandstats"]));
  let n = 0;
  for (const m of info.matchAll(/cmdstat_(?:eval|evalsha):calls=(\d+)/g)) n += Number(m[1]);
  return n;
}
async function redisCpu() {
  const info = String(await probe.sendCommand(["INFO", "cpu"]));
  const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)[1]);
  return field("used_cpu_user") + field("used_cpu_sys");
}

function keyStream(kind) {
  let s = 0x2545f491;
  return () => {
    if (kind !== "R1") return "hot";
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    return `user:${(s >>> 0) % 10_000}`;
  };
}

/** Runs `hit(key)` with INFLIGHT in flight for SECONDS; decisions/s, commands and CPU per decision. */
async function run(hit, kind, seconds = SECONDS) {
  const next = keyStream(kind);
  const c0 = await commands();
  const r0 = await redisCpu();
  const u0 = process.cpuUsage();
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let allowed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (performance.now() < end) {
        if (await hit(next())) allowed++;
        done++;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const u1 = process.cpuUsage(u0);
  const r1 = await redisCpu();
  const c1 = await commands();
  return {
    perSec: done / secs,
    trips: (c1 - c0) / done,
    allowed: allowed / done,
    // CPU per decision moves less than decisions/s on a shared machine.
    nodeUs: (u1.user + u1.system) / done,
    redisUs: ((r1 - r0) * 1e6) / done,
  };
}

const big = { algorithm: "sliding-window", limit: 1_000_000_000, window: "1m" };
const small = { algorithm: "sliding-window", limit: 10, window: "1h" };
const contenders = {
  "tollgate RedisStore (node-redis)": (config, prefix) => {
    const l = new RateLimiter({ ...config, store: new RedisStore(nodeRedis, { prefix, timeoutMs: 5000 }) });
    return async (key) => (await l.limit(key)).allowed;
  },
  "tollgate RedisStore (ioredis)": (config, prefix) => {
    const l = new RateLimiter({ ...config, store: new RedisStore(ioredis, { prefix, timeoutMs: 5000 }) });
    return async (key) => (await l.limit(key)).allowed;
  },
  "rate-limiter-flexible RateLimiterRedis (ioredis)": (config, prefix) => {
    const l = new RateLimiterRedis({ storeClient: ioredis, points: config.limit, duration: config.window === "1h" ? 3600 : 60, keyPrefix: prefix });
    return (key) => l.consume(key).then(() => true, () => false);
  },
  "rate-limiter-flexible RateLimiterRedis (ioredis, enableAutoPipelining)": (config, prefix) => {
    const l = new RateLimiterRedis({ storeClient: ioredisPiped, points: config.limit, duration: config.window === "1h" ? 3600 : 60, keyPrefix: prefix });
    return (key) => l.consume(key).then(() => true, () => false);
  },
  // With node-redis, flexible sends EVAL with the script's text on every call.
  "rate-limiter-flexible RateLimiterRedis (node-redis)": (config, prefix) => {
    const l = new RateLimiterRedis({ storeClient: nodeRedis, useRedisPackage: true, points: config.limit, duration: config.window === "1h" ? 3600 : 60, keyPrefix: prefix });
    return (key) => l.consume(key).then(() => true, () => false);
  },
};

const rows = [];
const WORKLOADS = (process.env.BENCH_WORKLOADS ?? "R1,R2,R3").split(",");
for (const kind of WORKLOADS) {
  for (const [name, make] of Object.entries(contenders)) {
    if (process.env.BENCH_ONLY && !name.includes(process.env.BENCH_ONLY)) continue;
    const prefix = `bench:${kind}:${Object.keys(contenders).indexOf(name)}:`;
    const hit = make(kind === "R3" ? small : big, prefix);
    if (kind === "R3") for (let i = 0; i < 20; i++) await hit("hot"); // over the limit first
    await run(hit, kind === "R1" ? "R1" : "R2", 1); // warm-up (JIT, script load), not recorded
    const r = await run(hit, kind === "R1" ? "R1" : "R2");
    rows.push({ kind, name, ...r });
    console.error(`${kind} ${name}: ${Math.round(r.perSec)}/s, ${r.trips.toFixed(2)} commands/decision, CPU us/decision: node ${r.nodeUs.toFixed(1)}, redis ${r.redisUs.toFixed(1)}`);
  }
}

console.log(`| workload | contender | decisions/s | Redis commands per decision | CPU us per decision: Node | Redis | admitted |`);
console.log(`|---|---|---:|---:|---:|---:|---:|`);
for (const r of rows) {
  console.log(`| ${r.kind} | ${r.name} | ${Math.round(r.perSec).toLocaleString("en-US")} | ${r.trips.toFixed(2)} | ${r.nodeUs.toFixed(1)} | ${r.redisUs.toFixed(1)} | ${(100 * r.allowed).toFixed(0)}% |`);
}
await nodeRedis.quit();
await probe.quit();
ioredis.disconnect();
ioredisPiped.disconnect();
await server.stop();
