// The same fixture trace gives the same decisions over Redis as in memory, for every
// algorithm and a multi-limit policy, with node-redis and with ioredis.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";
import { CONFIGS, trace } from "./trace.mjs";

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
