// One process of bench/redis/hotkey.mjs: `node hotkey-child.mjs <port> <contender> <key>
// <seconds> <inFlight>`. Connects, says "ready" over IPC, starts on "go", keeps `inFlight` hits
// on `key` in flight for `seconds`, and prints its counts as JSON.
import { RateLimiter, RedisStore } from "../../pkg/dist/lib/index.js";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { Redis } from "ioredis";

const [port, contender, key, seconds, inFlight] = process.argv.slice(2);
const client = new Redis({ host: "127.0.0.1", port: Number(port) });
await new Promise((resolve) => client.once("ready", resolve));
const LIMIT = 1_000_000_000; // every hit admitted: the cost of a write, not of a denial
let hit;
let store = null;
if (contender === "tollgate") {
  // The store's defaults (failure "open", timeoutMs 500), as the issue measured them.
  store = new RedisStore(client, { prefix: "hk:t:" });
  const l = new RateLimiter({ algorithm: "gcra", limit: LIMIT, window: "1h", store });
  hit = (k) => l.limit(k);
} else {
  const l = new RateLimiterRedis({ storeClient: client, points: LIMIT, duration: 3600, keyPrefix: "hk:f" });
  hit = (k) => l.consume(k).then(() => ({ allowed: true }), (r) => (r instanceof Error ? { error: true } : { allowed: false }));
}
const counts = { decisions: 0, admitted: 0, contention: 0, unavailable: 0, errors: 0 };
await new Promise((resolve) => {
  process.once("message", resolve);
  process.send("ready");
});
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
client.disconnect();
process.stdout.write(JSON.stringify(counts));
process.disconnect();
