// Several limiters on one Redis (docs/redis.md, "Namespaces"): with the store's default options
// each limiter's keys carry its own namespace, derived from its policy, so limiters of
// different options decide as each would alone; one namespace named for two policies is a
// typed error naming it, at the first call; and a key a peer left (the integer counters
// @fastify/rate-limit and rate-limiter-flexible write, written here by the peers themselves)
// is taken as fresh. Fastify and @fastify/rate-limit are the versions tests/js pins.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { RateLimiter, RedisStore, RedisStateError } from "tollgate";
import tollgateFastify from "tollgate/fastify";
import { RateLimiterRedis } from "rate-limiter-flexible";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

const fromJs = createRequire(fileURLToPath(new URL("../js/package.json", import.meta.url)));
const Fastify = fromJs("fastify");
const peerFastify = fromJs("@fastify/rate-limit");

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const raw = (client) => (args) => ("call" in client ? client.call(...args) : client.sendCommand(args));
const T0 = 1_700_000_000_000;

for (const kind of CLIENTS) {
  test(`two limiters of different shapes on one RedisStore, default options: each decides as it would alone (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    // The pair (same algorithm, other figures), and a pair of different algorithms.
    for (const [A, B] of [
      [{ algorithm: "sliding-window", limit: 5, window: "1s" }, { algorithm: "sliding-window", limit: 1000, window: "1d" }],
      [{ algorithm: "gcra", quota: "5/s" }, { limits: [{ algorithm: "sliding-log", limit: 3, window: "1m" }, { algorithm: "fixed-window", limit: 9, window: "1h" }] }],
    ]) {
      const store = new RedisStore(client);
      const [a, b] = [new RateLimiter({ ...A, store }), new RateLimiter({ ...B, store })];
      const [ma, mb] = [new RateLimiter(A), new RateLimiter(B)];
      assert.match(a.namespace, /^[0-9a-f]{12}$/);
      assert.notEqual(a.namespace, b.namespace);
      // Another process with the same options (another store, another client): the same namespace.
      assert.equal(new RateLimiter({ ...A, store: new RedisStore(client) }).namespace, a.namespace);
      const key = `u:${kind}:${a.namespace}`;
      for (let round = 0; round < 6; round++) {
        const now = T0 + round * 10;
        assert.deepEqual(await a.limit(key, { now }), ma.limit(key, { now }), `a, round ${round}`);
        assert.deepEqual(await b.limit(key, { now, cost: 2 }), mb.limit(key, { now, cost: 2 }), `b, round ${round}`);
      }
      assert.deepEqual(await a.peek(key, { now: T0 + 60 }), ma.peek(key, { now: T0 + 60 }));
      assert.deepEqual(await b.peek(key, { now: T0 + 60 }), mb.peek(key, { now: T0 + 60 }));
    }
  });

  test(`one namespace named for two policies: a RedisStateError naming it at the first call, nothing written (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const store = new RedisStore(client, { prefix: `named:${kind}:`, namespace: "api" });
    const a = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1m", store });
    const b = new RateLimiter({ algorithm: "gcra", quota: "10/s", store });
    assert.equal(a.namespace, "api");
    await a.limit("1.2.3.4", { now: T0 });
    const held = String(await raw(client)(["GET", "named:" + kind + ":api:1.2.3.4"]));
    for (const call of [() => b.limit("1.2.3.4", { now: T0 }), () => b.peek("1.2.3.4", { now: T0 })]) {
      await assert.rejects(call(), (e) => {
        assert.ok(e instanceof RedisStateError);
        assert.deepEqual([e.code, e.field, e.namespace], ["redis_state_invalid", "namespace", "api"]);
        assert.match(e.message, /namespace "api"/);
        for (const secret of ["1.2.3.4", "named:", "127.0.0.1", String(server.port)]) assert.ok(!e.message.includes(secret), e.message);
        assert.ok(!JSON.stringify(e).includes("1.2.3.4"));
        return true;
      });
    }
    assert.equal(String(await raw(client)(["GET", "named:" + kind + ":api:1.2.3.4"])), held, "nothing written");
    // `namespace: ""`: keys are <prefix><key>, as before namespaces.
    const bare = new RateLimiter({ algorithm: "gcra", quota: "10/s", store: new RedisStore(client, { prefix: `bare:${kind}:`, namespace: "" }) });
    assert.equal(bare.namespace, "");
    await bare.limit("k", { now: T0 });
    assert.equal(Number(await raw(client)(["EXISTS", `bare:${kind}:k`])), 1);
  });
}

test("a key @fastify/rate-limit left (its own plugin's integer counter) is fresh to a RedisStore at the same key, and its first admitted hit replaces it", async (t) => {
  const { client, close } = await connect("ioredis", server.port);
  t.after(close);
  const peer = Fastify();
  await peer.register(peerFastify, { max: 3, timeWindow: 60_000, redis: client, nameSpace: "peer-fastify-" });
  peer.get("/", async () => "ok");
  for (let i = 0; i < 5; i++) await peer.inject("/");
  await peer.close();
  const rkey = "peer-fastify-127.0.0.1";
  assert.equal(await client.get(rkey), "5", "the peer's counter, as it writes it");
  const config = { algorithm: "fixed-window", limit: 3, window: "1m" };
  const memory = new RateLimiter(config);
  const store = new RedisStore(client, { prefix: "peer-fastify-", namespace: "", failure: "throw" });
  const limiter = new RateLimiter({ ...config, store });
  assert.deepEqual(await limiter.peek("127.0.0.1", { now: T0 }), memory.peek("127.0.0.1", { now: T0 }));
  assert.equal(await limiter.export("127.0.0.1"), null, "read as fresh");
  assert.equal(await client.get(rkey), "5", "a peek writes nothing");
  assert.deepEqual(await limiter.limit("127.0.0.1", { now: T0 }), memory.limit("127.0.0.1", { now: T0 }));
  assert.match(await client.get(rkey), /^0[0-9a-f]+$/, "replaced by tollgate's state");
  assert.deepEqual(await limiter.limit("127.0.0.1", { now: T0 + 1 }), memory.limit("127.0.0.1", { now: T0 + 1 }));

  // tollgate/fastify over the peer's live keys, its default options: no collision, no 500.
  const again = Fastify();
  await again.register(peerFastify, { max: 3, timeWindow: 60_000, redis: client });
  again.get("/", async () => "ok");
  for (let i = 0; i < 4; i++) await again.inject("/");
  await again.close();
  const ours = Fastify();
  await ours.register(tollgateFastify, { max: 3, timeWindow: 60_000, redis: client });
  ours.get("/", async () => "ok");
  t.after(() => ours.close());
  const res = await ours.inject("/");
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers["x-ratelimit-remaining"], "2");
});

for (const kind of CLIENTS) {
  test(`a key rate-limiter-flexible left (its own RateLimiterRedis counter) is fresh to a RedisStore at the same key (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const peer = new RateLimiterRedis({ storeClient: client, useRedisPackage: kind === "node-redis", keyPrefix: `rlflx-${kind}`, points: 4, duration: 60 });
    for (let i = 0; i < 3; i++) await peer.consume("user:42");
    const rkey = `rlflx-${kind}:user:42`;
    assert.equal(String(await raw(client)(["GET", rkey])), "3", "the peer's counter, as it writes it");
    const config = { algorithm: "sliding-log", limit: 4, window: "1m" };
    const memory = new RateLimiter(config);
    const limiter = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `rlflx-${kind}:`, namespace: "", failure: "throw" }) });
    for (let i = 0; i < 5; i++) {
      const now = T0 + i;
      assert.deepEqual(await limiter.limit("user:42", { now, cost: 2 }), memory.limit("user:42", { now, cost: 2 }), `hit ${i}`);
    }
    assert.match(String(await raw(client)(["GET", rkey])), /^0[0-9a-f]+$/, "replaced by tollgate's state");
    // The state's own expiry: a window after its newest hit (free 1 ns after it: 1 ms rounded up).
    const ttl = Number(await raw(client)(["PTTL", rkey]));
    assert.ok(ttl > 0 && ttl <= 60_001, `PTTL ${ttl}`);
  });
}
