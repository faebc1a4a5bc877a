// Gateway-style sync of window counters: syncRate 0 decides in Redis on
// every hit, N > 0 syncs every N ms, < 0 stays local; namespaces keep configurations apart.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const config = { algorithm: "sliding-window", limit: 10, window: "1m" };
// The stores' clock: the real one, shifted so that this file (a few seconds) runs at the start
// of a minute. Its counters are per clock minute, and a turn of the minute between two hits
// weighs the earlier ones down (6 hits, then 5 more admitted just after the turn): on the real
// clock, a test that spans one admits more than it counts on.
const shift = (Date.now() % 60_000) - 1_000;
const now = () => Date.now() - shift;
const node = (client, options) => new RateLimiter({ ...config, store: new RedisStore(client, { now, ...options }) });
const admitted = async (limiter, n, key = "k") => {
  let a = 0;
  for (let i = 0; i < n; i++) if ((await limiter.limit(key)).allowed) a++;
  return a;
};

for (const kind of CLIENTS) {
  test(`syncRate 0: every hit in Redis, exact across nodes (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const a = node(client, { prefix: `s0:${kind}:`, syncRate: 0 });
    const b = node(client, { prefix: `s0:${kind}:`, syncRate: 0 });
    assert.equal((await admitted(a, 6)) + (await admitted(b, 10)), 10);
  });

  test(`syncRate N: local decisions, diffs pushed and merged counts read back (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const events = [];
    const options = { prefix: `sN:${kind}:`, syncRate: 60_000, onError: (e) => events.push(e) };
    const a = node(client, options);
    const b = node(client, options);
    t.after(() => Promise.all([a.close(), b.close()]));
    const before = Number(await (kind === "ioredis" ? client.call("DBSIZE") : client.sendCommand(["DBSIZE"])));
    // Before a sync, each node admits the whole limit on its own (the documented over-admission).
    assert.equal(await admitted(a, 7), 7);
    assert.equal(Number(await (kind === "ioredis" ? client.call("DBSIZE") : client.sendCommand(["DBSIZE"]))), before, "nothing written between syncs");
    await a.sync();
    await b.sync();
    // b now knows a's 7 hits: 3 left for it.
    assert.equal(await admitted(b, 10), 3);
    await b.sync();
    await a.sync();
    assert.equal(await admitted(a, 5), 0);
    assert.deepEqual(events, []);
    // Bad input: the in-memory errors, and nothing read or written for it.
    await assert.rejects(a.limit(""), { name: "RangeError", message: /key must not be empty/ });
    await assert.rejects(a.limit("k", { cost: 11 }), { name: "RangeError", message: /can never fit/ });
    // refund/reset cannot be merged: refused clearly.
    await assert.rejects(a.refund("k"), { name: "TypeError", code: "unsupported_in_sync_mode", message: /refund is not supported/ });
    await assert.rejects(a.reset("k"), { name: "TypeError", code: "unsupported_in_sync_mode", message: /reset is not supported/ });
    // Only window counters merge.
    assert.throws(() => new RateLimiter({ algorithm: "gcra", quota: "10/s", store: new RedisStore(client, { syncRate: 100 }) }), {
      name: "TypeError",
      message: /gcra/,
    });
  });

  test(`syncRate N: the timer syncs by itself (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const options = { prefix: `sT:${kind}:`, syncRate: 50 };
    const a = node(client, options);
    const b = node(client, options);
    t.after(() => Promise.all([a.close(), b.close()]));
    assert.equal(await admitted(a, 8), 8);
    await b.limit("other"); // b starts its timer
    // a's timer pushes its 8 by itself: polled (how soon depends on the machine) through a
    // probe that reads Redis on first sight of the key, as b will.
    const pushed = async () => {
      const probe = node(client, options);
      const remaining = (await probe.peek("k")).remaining;
      await probe.close();
      return remaining <= 1;
    };
    for (let polls = 0; !(await pushed()); polls++) {
      assert.ok(polls < 1000, "a's timer never pushed its counts");
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(await admitted(b, 10), 2);
  });

  test(`syncRate < 0: local only, Redis untouched (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const a = node(client, { prefix: `sL:${kind}:`, syncRate: -1 });
    const b = node(client, { prefix: `sL:${kind}:`, syncRate: -1 });
    assert.equal(await admitted(a, 12), 10);
    assert.equal(await admitted(b, 12), 10);
    await a.close();
    const keys = await (kind === "ioredis" ? client.call("KEYS", `sL:${kind}:*`) : client.sendCommand(["KEYS", `sL:${kind}:*`]));
    assert.deepEqual(keys, []);
  });

  test(`namespaces keep configurations apart (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    for (const syncRate of [0, 60_000]) {
      const a = node(client, { prefix: `ns:${kind}:${syncRate}:`, namespace: "api", syncRate });
      const b = new RateLimiter({ algorithm: "fixed-window", limit: 3, window: "1m", store: new RedisStore(client, { prefix: `ns:${kind}:${syncRate}:`, namespace: "login", syncRate, now }) });
      const a2 = node(client, { prefix: `ns:${kind}:${syncRate}:`, namespace: "api", syncRate });
      assert.equal(await admitted(a, 4), 4);
      await a.sync?.();
      assert.equal(await admitted(b, 5), 3, `syncRate ${syncRate}: login is not counted with api`);
      await b.sync?.();
      await a2.sync?.();
      assert.equal(await admitted(a2, 10), 6, `syncRate ${syncRate}: api sees api's hits`);
      await Promise.all([a.close(), b.close(), a2.close()]);
    }
    assert.throws(() => new RedisStore(client, { namespace: 7 }), { name: "TypeError", message: /namespace/ });
  });
}
