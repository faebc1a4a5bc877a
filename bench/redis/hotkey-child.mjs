// One process of bench/redis/hotkey.mjs: `node hotkey-child.mjs <port> <contender> <key>
// <seconds> <inFlight>`. Connects, says "ready" over IPC, starts on "go", keeps `inFlight` hits
// on `key` in flight for `seconds`, and prints its counts as JSON.
import { RateLimiterRedis } from "rate-limiter-flexible";
import { Redis } from "ioredis";
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

/** This process's context switches so far (Linux; 0 elsewhere): voluntary ones are its waits. */
function switches() {
  try {
    const status = readFileSync("/proc/self/status", "utf8");
    const n = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]);
    return { waits: n("voluntary_ctxt_switches"), preempted: n("nonvoluntary_ctxt_switches") };
  } catch {
    return { waits: 0, preempted: 0 };
  }
}

const [port, contender, key, seconds, inFlight] = process.argv.slice(2);
const client = new Redis({ host: "127.0.0.1", port: Number(port) });
await new Promise((resolve) => client.once("ready", resolve));
const LIMIT = 1_000_000_000; // every hit admitted: the cost of a write, not of a denial
let hit;
let store = null;
if (contender === "tollgate" || contender === "base") {
  // "base": another build of the package (BENCH_BASE_PKG, its folder), in the same run as this one.
  const dir = contender === "base" ? pathToFileURL(`${process.env.BENCH_BASE_PKG}/`) : new URL("../../pkg/", import.meta.url);
  const { RateLimiter, RedisStore } = await import(new URL("dist/lib/index.js", dir));
  // The store's defaults (failure "open", timeoutMs 500), as the issue measured them.
  store = new RedisStore(client, { prefix: "hk:t:" });
  const l = new RateLimiter({ algorithm: "gcra", limit: LIMIT, window: "1h", store });
  hit = (k) => l.limit(k);
} else {
  const l = new RateLimiterRedis({ storeClient: client, points: LIMIT, duration: 3600, keyPrefix: "hk:f" });
  hit = (k) => l.consume(k).then(() => ({ allowed: true }), (r) => (r instanceof Error ? { error: true } : { allowed: false }));
}
// BENCH_WARMUP hits on a key of this process's own before "ready" (0: cold, as a process that just started).
const warm = Number(process.env.BENCH_WARMUP ?? 0);
await Promise.all(Array.from({ length: Number(inFlight) }, async (_, i) => {
  for (let n = i; n < warm; n += Number(inFlight)) await hit(`warm:${process.pid}`);
}));
const counts = { decisions: 0, admitted: 0, contention: 0, unavailable: 0, errors: 0 };
await new Promise((resolve) => {
  process.once("message", resolve);
  process.send("ready");
});
const cpuAtGo = process.cpuUsage();
const switchesAtGo = switches();
// The run's bounds on the monotonic clock of V8's profiles (µs), for profile-summary.mjs.
const goAt = Number(process.hrtime.bigint() / 1000n);
const end = performance.now() + Number(seconds) * 1000;
await Promise.all(
  Array.from({ length: Number(inFlight) }, async () => {
    while (performance.now() < end) {
      const d = await hit(key);
      counts.decisions++;
      if (d.error) counts.errors++;
      if (d.allowed) counts.admitted++;
      if (d.degraded) counts[d.degraded]++;
    }
  }),
);
// Writes Redis made under the core's guard (src/guard.rs; 0 for a package without it).
counts.guarded = store?._guarded?.writes ?? 0;
if (globalThis.__probe) counts.probe = globalThis.__probe;
// CPU of this process (user + system, µs): before "go" (start-up, connecting) and while deciding.
const cpu = process.cpuUsage(cpuAtGo);
counts.cpuRun = cpu.user + cpu.system;
const boot = cpuAtGo;
counts.cpuBoot = boot.user + boot.system;
const sw = switches();
counts.waits = sw.waits - switchesAtGo.waits;
counts.preempted = sw.preempted - switchesAtGo.preempted;
counts.window = [goAt, Number(process.hrtime.bigint() / 1000n)];
client.disconnect();
process.stdout.write(JSON.stringify(counts));
process.disconnect();
