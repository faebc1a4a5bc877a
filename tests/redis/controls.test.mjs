// The operator controls over Redis: a penalty (`blockDuration`) lives in the key's
// state in Redis, so it decides exactly as in memory and outlives the process that set it;
// shadow mode and the lists apply to a store's limiter as to the in-memory one; `waitFor`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { connect } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const T = 1_700_000_000_000;
const PENALIZED = { algorithm: "fixed-window", limit: 2, window: 1000, blockDuration: "10s" };

test("blockDuration over Redis decides as in memory, and a second process sees the block", async (t) => {
  const { client, close } = await connect("node-redis", server.port);
  t.after(close);
  const prefix = `pen:${Date.now()}:`;
  const memory = new RateLimiter(PENALIZED);
  const redis = new RateLimiter({ ...PENALIZED, store: new RedisStore(client, { prefix }) });
  for (const step of [0, 0, 0, 100, 2000, 9999, 10_000, 10_000, 10_000]) {
    const now = T + step;
    assert.deepEqual(await redis.limit("k", { now }), memory.limit("k", { now }), `at +${step} ms`);
  }
  const other = new RateLimiter({ ...PENALIZED, store: new RedisStore(client, { prefix }) });
  const d = await other.limit("k", { now: T + 10_500 });
  assert.deepEqual([d.allowed, d.penalty], [false, true], "the block set at +10 s is in Redis, for every process");
});

test("shadow mode, lists and waitFor on a Redis limiter", async (t) => {
  const { client, close } = await connect("ioredis", server.port);
  t.after(close);
  const store = new RedisStore(client, { prefix: `ctl:${Date.now()}:` });
  const shadow = new RateLimiter({ algorithm: "gcra", quota: "1/h", shadow: true, allowList: ["vip"], denyList: ["10.0.0.0/8"], store });
  const first = await shadow.limit("u", { now: T });
  const second = await shadow.limit("u", { now: T });
  assert.deepEqual([first.allowed, first.wouldAllow, second.allowed, second.wouldAllow, second.shadow], [true, true, true, false, true]);
  assert.equal((await shadow.limit("vip", { now: T })).reason, "allowList");
  assert.equal((await shadow.limit("10.1.2.3", { now: T })).allowed, false);
  const waiting = new RateLimiter({ algorithm: "gcra", limit: 1, window: 500, store });
  await waiting.limit("w");
  assert.equal((await waiting.waitFor("w", { maxWait: 60_000 })).allowed, true);
  await assert.rejects(waiting.waitFor("w", { maxWait: 0 }), { code: "wait_timeout" });
});
