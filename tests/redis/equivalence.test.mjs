// The same fixture trace gives the same decisions over Redis as in memory, for every
// algorithm and a multi-limit policy, with node-redis and with ioredis.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";
import { CONFIGS, trace } from "./trace.mjs";
import { LIMITERS } from "../js/fixture.mjs";
import { reserveTrace, replayReserve, firstDifference } from "../js/reserve-fixture.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const ops = trace();

for (const kind of CLIENTS) {
  test(`every algorithm decides over Redis as in memory (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    let n = 0;
    for (const [name, config] of Object.entries(CONFIGS)) {
      const memory = new RateLimiter(config);
      const store = new RedisStore(client, { prefix: `eq:${kind}:${n++}:` });
      const redis = new RateLimiter({ ...config, store });
      let denied = 0;
      for (const [i, { op, key, now, cost }] of ops.entries()) {
        if (op === "refund") {
          memory.refund(key, { now, cost });
          await redis.refund(key, { now, cost });
          continue;
        }
        const want = memory.limit(key, { now, cost });
        const got = await redis.limit(key, { now, cost });
        assert.deepEqual(got, want, `${name}: hit ${i} (${JSON.stringify(key)} at +${now - ops[0].now} ms, cost ${cost})`);
        if (!want.allowed) denied++;
      }
      // The trace must exercise denials, or it proves little.
      assert.ok(denied > 20, `${name}: only ${denied} denials`);
      const peekWant = memory.peek("alice", { now: ops.at(-1).now });
      assert.deepEqual(await redis.peek("alice", { now: ops.at(-1).now }), peekWant, `${name}: peek`);
    }
  });
}

/**
 * `store` keeping every key an hour past its TTL. Redis expires keys in real time, while the
 * trace runs on its own clock (a few ms between operations): on a loaded machine the replay
 * falls behind it, and a key would expire before the trace's time reaches its expiry. A state
 * past its expiry decides as a fresh key, so a key kept longer decides the same.
 */
function traceTimed(store) {
  const later = (ttl) => (ttl > 0 ? ttl + 3_600_000 : ttl);
  const one = store._swapOne;
  store._swapOne = (key, expected, next, ttl, guard) => one(key, expected, next, later(ttl), guard);
  const script = store._script;
  const swap = script.swap.bind(script);
  script.swap = (keys, expected, next, ttls, guard) => swap(keys, expected, next, ttls.map(later), guard);
  return store;
}

for (const kind of CLIENTS) {
  test(`the equivalence fixture's reserve/settle trace decides over Redis as natively (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const reserveOps = reserveTrace();
    const limiters = LIMITERS.map((o, l) => new RateLimiter({ ...o, store: traceTimed(new RedisStore(client, { prefix: `rs:${kind}:${l}:` })) }));
    const outcomes = await replayReserve(reserveOps, (l) => limiters[l]);
    assert.equal(firstDifference(reserveOps, outcomes), null);
  });
}

for (const kind of CLIENTS) {
  test(`concurrent hits on one key are decided in arrival order, as in memory (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    for (const [name, config] of Object.entries(CONFIGS)) {
      const memory = new RateLimiter(config);
      const redis = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `batch:${kind}:${name}:` }) });
      const now = ops[0].now;
      // 40 hits issued together: batched by the store, decided one after another by the core.
      const calls = Array.from({ length: 40 }, (_, i) => ({ now: now + i * 37, cost: i % 7 === 3 ? 2 : 1 }));
      const got = await Promise.all(calls.map((o) => redis.limit("k", o)));
      const want = calls.map((o) => memory.limit("k", o));
      assert.deepEqual(got, want, name);
      // A hit whose cost can never fit fails alone; the others of its batch are decided.
      const mixed = await Promise.allSettled([redis.limit("k2", { now }), redis.limit("k2", { now, cost: 1000 }), redis.limit("k2", { now })]);
      assert.deepEqual(mixed.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"], name);
      assert.equal(mixed[1].reason.name, "RangeError");
      assert.deepEqual(mixed[2].value, (memory.limit("k2", { now }), memory.limit("k2", { now })), name);
    }
  });
}
