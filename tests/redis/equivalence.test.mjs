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
