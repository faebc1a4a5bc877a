// A denial's figures across processes (docs/redis.md, "Blocked-key cache"): two processes on
// one key, hits of different costs; every decision, cached denials included, is the one the
// in-memory limiter gives for the same hits in the same order: exact `remaining` and
// `retryAfter`, so a client that obeys Retry-After is not denied again.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { RateLimiter } from "tollgate";
import { RedisServer } from "./redis-server.mjs";

const decider = fileURLToPath(new URL("./decider.mjs", import.meta.url));

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

/** A decider.mjs process: `hit({ key, now, cost })` resolves to its decision. */
async function processOf(kind, config, storeOptions) {
  const child = spawn(process.execPath, [decider, String(server.port), kind, JSON.stringify(config), JSON.stringify(storeOptions)], { stdio: ["pipe", "pipe", "inherit"], timeout: 60_000 });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  assert.equal((await lines.next()).value, "ready");
  return {
    async hit(h) {
      child.stdin.write(JSON.stringify(h) + "\n");
      return JSON.parse((await lines.next()).value);
    },
    end: () => new Promise((resolve) => {
      child.once("exit", resolve);
      child.stdin.end();
    }),
  };
}

const T0 = 1_700_000_000_000;

test("two processes, sliding log 4 per 10 s, costs 1, 2, 1, 2 (and on): every denial's remaining and retryAfter are exact", async () => {
  const config = { algorithm: "sliding-log", limit: 4, window: "10s" };
  const storeOptions = { prefix: "figures:", failure: "throw", timeoutMs: 10_000 };
  const [a, b] = [await processOf("node-redis", config, storeOptions), await processOf("ioredis", config, storeOptions)];
  const memory = new RateLimiter(config);
  // The hits, then more of both costs while the key is blocked (cached denials).
  const hits = [
    [a, 1, 0], [b, 2, 700], [a, 1, 1400], [b, 2, 2099],
    [a, 2, 2200], [b, 1, 2300], [a, 1, 2400], [b, 2, 2500],
  ];
  const seen = [];
  for (const [p, cost, dt] of hits) {
    const h = { key: "user:42", now: T0 + dt, cost };
    const got = await p.hit(h);
    const want = memory.limit("user:42", { now: h.now, cost });
    seen.push([got.allowed, got.remaining, got.retryAfter]);
    assert.deepEqual([got.allowed, got.remaining, got.retryAfter], [want.allowed, want.remaining, want.retryAfter], `cost ${cost} at +${dt} ms: ${JSON.stringify(seen)}`);
  }
  // The denial: the truth is 0 left and 8601 ms and 1 ns, rounded up (not 1 and 7901).
  assert.deepEqual(seen[3], [false, 0, 8602]);
  await Promise.all([a.end(), b.end()]);
});
