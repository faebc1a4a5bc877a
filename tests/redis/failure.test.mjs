// Redis killed and restarted mid-run, and Redis too slow: each failure mode does what it
// says, the decision says it was degraded, and the state afterwards is correct.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore, RedisUnavailableError } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect, reconnected } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const config = { algorithm: "sliding-log", limit: 5, window: "1m" };

for (const kind of CLIENTS) {
  test(`Redis killed and restarted: open, closed and throw as configured, then exact again (${kind})`, { timeout: 30_000 }, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const limiter = (failure) =>
      new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `fail:${kind}:${failure}:`, failure, timeoutMs: 300 }) });
    const open = limiter("open");
    const closed = limiter("closed");
    const thrower = limiter("throw");
    for (const l of [open, closed, thrower]) {
      for (let i = 0; i < 3; i++) assert.equal((await l.limit("k")).allowed, true);
    }

    await server.kill();
    const o = await open.limit("k");
    assert.equal(o.allowed, true);
    assert.equal(o.degraded, "unavailable");
    assert.equal(o.limit, 5);
    const c = await closed.limit("k");
    assert.equal(c.allowed, false);
    assert.equal(c.degraded, "unavailable");
    assert.equal(c.remaining, 0);
    assert.ok(c.retryAfter > 0);
    await assert.rejects(thrower.limit("k"), (e) => e instanceof RedisUnavailableError && e.code === "redis_unavailable");
    await assert.rejects(thrower.peek("k"), RedisUnavailableError);

    // Restarted empty (no persistence): the script is loaded again, the stale bytes this
    // process remembered are replaced by what Redis holds, and the limit is exact again.
    await server.start();
    await reconnected(kind, client);
    for (const l of [open, closed, thrower]) {
      const ds = [];
      for (let i = 0; i < 7; i++) ds.push(await l.limit("k"));
      assert.deepEqual(ds.map((d) => d.allowed), [true, true, true, true, true, false, false]);
      assert.ok(ds.every((d) => d.degraded === undefined));
    }
  });

  test(`Redis slower than timeoutMs: degraded, not waited for (${kind})`, { timeout: 30_000 }, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const store = new RedisStore(client, { prefix: `slow:${kind}:`, failure: "closed", timeoutMs: 100 });
    const limiter = new RateLimiter({ ...config, store });
    assert.equal((await limiter.limit("k")).allowed, true);
    // Frozen until the decision is in: only timeoutMs can answer it, however slow the machine.
    server.pause();
    let d;
    try {
      d = await limiter.limit("k");
    } finally {
      server.resume();
    }
    assert.equal(d.degraded, "unavailable");
    assert.equal(d.allowed, false);
    await reconnected(kind, client);
    // Whether the late write landed or not, the next decisions are exact again.
    const after = await limiter.limit("k");
    assert.equal(after.degraded, undefined);
    assert.ok(after.remaining === 3 || after.remaining === 2, `remaining ${after.remaining}`);
  });
}
