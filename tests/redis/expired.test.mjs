// Bytes that decide like a fresh key (past the core's `expires_at`) are swapped as "these or
// none" (lib/stores/redis/redis-value.js `expected`): a key Redis dropped by its TTL is then written in one
// script call, not a conflict and a second; the decisions stay those of memory. Bytes not yet
// expired are never taken for an absent key: a reset by another process is still seen.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";
import { T0 } from "./trace.mjs";
import { raw, evalshas } from "./commands.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

/** Resolves once `key` is gone from Redis (its TTL ran out), within 5 s. */
async function dropped(r, key) {
  const end = Date.now() + 5000;
  while (Number(await r.send(["EXISTS", key])) === 1) {
    assert.ok(Date.now() < end, `${key} still in Redis after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const kind of CLIENTS) {
  for (const batchKeys of [true, false]) {
    test(`a key Redis dropped by its TTL is written in one script call and decides as memory (${kind}, batchKeys ${batchKeys})`, async (t) => {
      const { client, close } = await connect(kind, server.port);
      t.after(close);
      const r = raw(client);
      // GCRA 10 per 20 s: each hit's bytes are fresh again 2 s after the last, and kept that
      // long. The hits' times are the real clock's, the one Redis's TTLs run on, so that what
      // Redis dropped is what memory finds expired.
      const config = { algorithm: "gcra", limit: 10, window: "20s" };
      const prefix = `expired:${kind}:${batchKeys}:`;
      const store = () => new RedisStore(client, { prefix, namespace: "", batchKeys });
      const a = new RateLimiter({ ...config, store: store() });
      const b = new RateLimiter({ ...config, store: store() });
      const memory = new RateLimiter(config);
      const hit = async (who) => {
        const now = Date.now();
        const before = await evalshas(r);
        const got = await who.limit("k", { now });
        assert.deepEqual(got, memory.limit("k", { now }));
        return (await evalshas(r)) - before;
      };
      await hit(a);
      await hit(b); // b learns a's bytes (a conflict: it believed the key absent)
      await dropped(r, `${prefix}k`);
      // a and b each hold bytes that decide like a fresh key by now, and Redis has none.
      assert.equal(await hit(a), 1, "a key dropped by its TTL cost another script call");
      // b's own bytes expired too, but a's are there: a swap over those (the guard), as before.
      await hit(b);
    });
  }

  test(`bytes not yet expired are not taken for an absent key: a reset by another process is seen (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const config = { algorithm: "sliding-window", limit: 5, window: "1h" };
    const prefix = `reset:${kind}:`;
    const limiter = new RateLimiter({ ...config, store: new RedisStore(client, { prefix, namespace: "" }) });
    for (let i = 0; i < 3; i++) await limiter.limit("k", { now: T0 + i });
    await r.send(["DEL", `${prefix}k`]); // another process's reset
    const d = await limiter.limit("k", { now: T0 + 3 });
    const fresh = new RateLimiter(config).limit("k", { now: T0 + 3 });
    assert.deepEqual(d, fresh, "the hit after the reset is decided over a fresh key");
  });
}
