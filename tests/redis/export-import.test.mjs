// export/import over Redis: a key's state as the core's bytes, exactly as the in-memory
// limiter gives and takes them, so a key moves between memory, Redis (and the Worker) with its
// usage; bad bytes are refused as memory refuses them (`invalid_state`) and change nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore, RedisStateError } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const LIMITS = {
  limits: [
    { name: "burst", algorithm: "token-bucket", quota: "10/s", burst: 4 },
    { name: "minute", algorithm: "sliding-log", quota: "7/m" },
  ],
};
const T0 = Date.now();

for (const kind of CLIENTS) {
  test(`export gives memory's bytes; import carries usage both ways (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const prefix = `xi:${kind}:`;
    const redis = new RateLimiter({ ...LIMITS, store: new RedisStore(client, { prefix }) });
    const memory = new RateLimiter(LIMITS);
    assert.equal(await redis.export("k"), null, "a fresh key exports null, as in memory");
    for (let i = 0; i < 3; i++) {
      const [a, b] = [await redis.limit("k", { now: T0 + i }), memory.limit("k", { now: T0 + i })];
      assert.deepEqual(a, b);
    }
    assert.deepEqual(await redis.export("k"), memory.export("k"), "the same bytes as memory's");

    // Memory -> Redis: a second key takes memory's usage and decides on from it.
    for (let i = 0; i < 4; i++) memory.limit("m", { now: T0 });
    await redis.import("moved", memory.export("m"));
    assert.deepEqual(await redis.export("moved"), memory.export("m"));
    assert.deepEqual(await redis.limit("moved", { now: T0 + 10 }), memory.limit("m", { now: T0 + 10 }));

    // Redis -> memory.
    const back = new RateLimiter(LIMITS);
    back.import("k", await redis.export("k"));
    assert.deepEqual(back.limit("k", { now: T0 + 50 }), await redis.limit("k", { now: T0 + 50 }));

    // null: fresh again.
    await redis.import("moved", null);
    assert.equal(await redis.export("moved"), null);
  });

  test(`import refuses bytes that are not a state of the policy, as memory does, and changes nothing (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const prefix = `xibad:${kind}:`;
    const redis = new RateLimiter({ ...LIMITS, store: new RedisStore(client, { prefix }) });
    const memory = new RateLimiter(LIMITS);
    await redis.limit("k", { now: T0 });
    const before = await redis.export("k");
    const other = new RateLimiter({ algorithm: "gcra", quota: "5/s" });
    other.limit("x", { now: T0 });
    for (const bad of [new Uint8Array([1, 2, 3]), other.export("x")]) {
      let want;
      try {
        memory.import("k", bad);
      } catch (e) {
        want = e;
      }
      assert.equal(want?.code, "invalid_state");
      await assert.rejects(redis.import("k", bad), (e) => e.constructor === want.constructor && e.code === want.code && e.field === "state");
      assert.deepEqual(await redis.export("k"), before, "nothing changed");
    }
    await assert.rejects(redis.import("k", "bytes"), TypeError);
    await assert.rejects(redis.export(42), TypeError);
    // A Redis value that is not a state: the store's own error, as for a decision.
    await client[("call" in client) ? "call" : "sendCommand"](...(("call" in client) ? ["SET", `${prefix}${redis.namespace}:junk`, "zz"] : [["SET", `${prefix}${redis.namespace}:junk`, "zz"]]));
    await assert.rejects(redis.export("junk"), RedisStateError);
  });
}
