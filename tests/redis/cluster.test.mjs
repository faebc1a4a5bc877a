// The Redis store on a real Redis Cluster (three masters, tests/redis/redis-cluster.mjs) with
// both clients' cluster modes: keys spread over every node decide exactly as in memory; the
// keys of one hit must share a hash slot (a clear error before any I/O otherwise, never
// Redis's CROSSSLOT taken for an outage); reset and the synced mode work across slots; the
// scripts load on whichever node a key lives on.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createCluster } from "redis";
import { Cluster } from "ioredis";
import { RateLimiter, RedisStore } from "tollgate";
// Not a public export: the installed tarball's own file, which the store uses.
const { keySlot } = await import(new URL("./node_modules/tollgate/dist/lib/stores/redis/redis-client.js", import.meta.url));
import { RedisCluster } from "./redis-cluster.mjs";
import { RedisServer } from "./redis-server.mjs";

let cluster;
before(async () => {
  cluster = await RedisCluster.start(3);
});
after(() => cluster?.stop());

async function connect(kind) {
  if (kind === "node-redis") {
    const client = createCluster({ rootNodes: cluster.rootNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    client.on("error", () => {});
    await client.connect();
    return { client, close: () => client.destroy?.() ?? client.disconnect() };
  }
  const client = new Cluster(cluster.rootNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  client.on("error", () => {});
  await new Promise((resolve, reject) => {
    client.once("ready", resolve);
    client.once("end", () => reject(new Error("ioredis could not connect to the cluster")));
  });
  return { client, close: () => client.disconnect() };
}

/** Keys per node, read from each node directly. */
async function keysPerNode() {
  const { execFile } = await import("node:child_process");
  const { promisify } = await import("node:util");
  const run = promisify(execFile);
  return Promise.all(cluster.nodes.map((n) => run("redis-cli", ["-p", String(n.port), "DBSIZE"]).then((r) => Number(r.stdout.trim()))));
}

test("keySlot is Redis Cluster's own hash slot (CLUSTER KEYSLOT)", async () => {
  const { execFile } = await import("node:child_process");
  const { promisify } = await import("node:util");
  const run = promisify(execFile);
  const keys = ["", "a", "user:42", "tollgate:user:42", "{user:42}:ip", "x{user:42}:acct", "{}", "{}{a}", "a{", "a}{b", "{a}{b}", "ж{ключ}", "🔑", "x".repeat(300)];
  for (let i = 0; i < 40; i++) keys.push(`tollgate:k${i * 7919}`);
  const port = String(cluster.nodes[0].port);
  for (const k of keys) {
    const { stdout } = await run("redis-cli", ["-p", port, "CLUSTER", "KEYSLOT", k]);
    assert.equal(keySlot(k), Number(stdout.trim()), JSON.stringify(k));
  }
});

for (const kind of ["node-redis", "ioredis"]) {
  test(`decisions over a cluster are the in-memory decisions, keys on every node (${kind})`, async (t) => {
    const { client, close } = await connect(kind);
    t.after(close);
    const prefix = `c:${kind}:`;
    // Limits per minute and a simulated clock that runs ahead by seconds per hit: every key's
    // TTL in Redis (real time) outlasts the test, so no expiry in Redis can depend on how fast
    // this machine runs; a state past its expiry decides like none, in Redis as in memory.
    for (const options of [
      { algorithm: "gcra", quota: "5/m", burst: 3 },
      { algorithm: "sliding-log", limit: 4, window: "1m" },
      { limits: [{ algorithm: "token-bucket", quota: "6/m" }, { algorithm: "fixed-window", limit: 20, window: "1h" }] },
    ]) {
      const store = new RedisStore(client, { prefix: `${prefix}${JSON.stringify(options).length}:`, failure: "throw" });
      const redis = new RateLimiter({ ...options, store });
      const memory = new RateLimiter(options);
      let seed = 7;
      const rand = (n) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      let now = 1_700_000_000_000;
      // Redis expires a key by its TTL in real time: the simulated clock also moves on by the
      // real time that passed, so it never falls behind it.
      let real = Date.now();
      for (let i = 0; i < 400; i++) {
        const t = Date.now();
        now += rand(2000) + (t - real);
        real = t;
        const key = `user:${rand(10)}`;
        const [a, b] = [await redis.limit(key, { now }), memory.limit(key, { now })];
        assert.deepEqual([a.allowed, a.remaining, a.resetAt, a.retryAfter], [b.allowed, b.remaining, b.resetAt, b.retryAfter], `${key} hit ${i}`);
      }
      // peek, refund and reset by key as in memory
      assert.deepEqual((await redis.peek("user:1", { now })).remaining, memory.peek("user:1", { now }).remaining);
      await redis.refund("user:2", { now });
      memory.refund("user:2", { now });
      assert.equal((await redis.peek("user:2", { now })).remaining, memory.peek("user:2", { now }).remaining);
      await redis.reset(["user:3", "user:4", "user:5"]); // keys in different slots: one DEL each
      memory.reset(["user:3", "user:4", "user:5"]);
      for (const k of ["user:3", "user:4", "user:5"]) assert.equal((await redis.peek(k, { now })).remaining, memory.peek(k, { now }).remaining);
    }
    const perNode = await keysPerNode();
    assert.ok(perNode.every((n) => n > 0), `every node holds keys: ${perNode}`);
  });

  test(`the keys of one hit must share a slot: hash tags work, others are refused before any I/O (${kind})`, async (t) => {
    const { client, close } = await connect(kind);
    t.after(close);
    const store = new RedisStore(client, { prefix: `m:${kind}:`, failure: "open" });
    const limiter = new RateLimiter({ algorithm: "fixed-window", limit: 2, window: "1m", store });
    const now = 1_700_000_000_000;
    // One slot by hash tag: all or nothing over both keys.
    const tagged = ["{user:42}:ip", "{user:42}:acct"];
    assert.equal((await limiter.limit(tagged, { now })).allowed, true);
    assert.equal((await limiter.limit(tagged, { now })).allowed, true);
    const denied = await limiter.limit(tagged, { now });
    assert.equal(denied.allowed, false);
    assert.equal(denied.degraded, undefined, "a real denial, not the failure mode");
    assert.equal((await limiter.peek("{user:42}:ip", { now })).remaining, 0);
    // Different slots: a RangeError naming both keys, even with failure: "open" (not an outage).
    const apart = ["user:1", "user:2"];
    assert.notEqual(keySlot(`m:${kind}:user:1`), keySlot(`m:${kind}:user:2`));
    await assert.rejects(limiter.limit(apart, { now }), { name: "RangeError", code: "invalid_value", field: "keys[1]", message: /^keys\[1\] is in another Redis Cluster hash slot than keys\[0\]/ });
    // The keys themselves (often a client's address) are not in the message.
    await assert.rejects(limiter.limit(apart, { now }), (e) => !e.message.includes("user:1") && !e.message.includes("user:2"));
    await assert.rejects(limiter.refund(apart, { now }), { name: "RangeError", message: /hash slot/ });
    const fresh = (await limiter.peek("never-hit", { now })).remaining;
    for (const k of apart) assert.equal((await limiter.peek(k, { now })).remaining, fresh, `nothing was counted for ${k}`);
    // One script call cannot span slots, so batching keys is refused on a cluster.
    assert.throws(() => new RedisStore(client, { batchKeys: true }), { name: "TypeError", message: /batchKeys cannot be true with a Redis Cluster client/ });
  });

  test(`the synced mode (window counters synced every N ms) works across slots (${kind})`, async (t) => {
    const { client, close } = await connect(kind);
    t.after(close);
    // The stores' clock: the real one shifted to a second into a minute, so that no turn of the
    // clock minute empties a's counts (a fixed window) while b polls for them.
    const shift = (Date.now() % 60_000) - 1_000;
    const now = () => Date.now() - shift;
    const mk = () => new RateLimiter({ algorithm: "fixed-window", limit: 50, window: "1m", store: new RedisStore(client, { prefix: `s:${kind}:`, syncRate: 20, now }) });
    const [a, b] = [mk(), mk()];
    t.after(() => Promise.all([a.close(), b.close()]));
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    for (const k of keys) for (let i = 0; i < 10; i++) await a.limit(k);
    for (const k of keys) await b.limit(k);
    // b merges a's counts for every key, whichever node it lives on, within a few syncs
    // (polled: how many depends on the machine).
    const merged = async () => {
      for (const k of keys) if ((await b.peek(k)).remaining > 50 - 11) return false;
      return true;
    };
    for (let polls = 0; !(await merged()); polls++) {
      assert.ok(polls < 500, "b never merged a's counts");
      await new Promise((r) => setTimeout(r, 20));
    }
  });
}

test("a single server is not taken for a cluster", async (t) => {
  const server = await RedisServer.start();
  t.after(() => server.stop());
  const { Redis } = await import("ioredis");
  const client = new Redis({ host: "127.0.0.1", port: server.port, lazyConnect: true });
  assert.doesNotThrow(() => new RedisStore(client, { batchKeys: true }));
  client.disconnect();
});
