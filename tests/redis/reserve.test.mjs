// Reserve and settle on a RedisStore (docs/reserve.md): the same decisions and the same state
// bytes as the in-memory limiter, through the one compare-and-swap path; a failed settlement
// changes nothing in Redis; concurrent processes' reservations never admit past the limit.
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

// The next hour: a state's TTL in Redis counts from the real clock (an import's, too).
const T0 = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
const CONFIGS = {
  "fixed-window": { algorithm: "fixed-window", quota: "100/m" },
  gcra: { algorithm: "gcra", quota: "100/m" },
  "several limits": { limits: [{ algorithm: "sliding-log", quota: "60/m", name: "minute" }, { algorithm: "token-bucket", quota: "100/h", name: "hour" }] },
};

for (const kind of CLIENTS) {
  test(`reserve and settle decide as in memory, with the same bytes (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    for (const [name, config] of Object.entries(CONFIGS)) {
      const memory = new RateLimiter(config);
      const redis = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `reserve:${kind}:${name}:` }) });
      const trace = [
        [0, 40, 10],
        [1, 30, 50],
        [2, 50, null],
        [3, 20, 0],
      ];
      for (const [i, estimate, actual] of trace) {
        const now = T0 + i * 1000;
        const m = memory.reserve(["k", "j"], { cost: estimate, now });
        const r = await redis.reserve(["k", "j"], { cost: estimate, now });
        const { reservation: mr, ...md } = m;
        const { reservation: rr, ...rd } = r;
        assert.deepEqual(rd, md, `${name} reserve ${i}`);
        assert.equal(rr === null, mr === null);
        if (actual !== null && mr !== null) {
          assert.deepEqual(await redis.settle(rr, actual, { now: now + 10 }), memory.settle(mr, actual, { now: now + 10 }), `${name} settle ${i}`);
        }
        assert.deepEqual(await redis.export("k"), memory.export("k"), `${name} bytes ${i}`);
      }
      // A reservation made in memory settles in Redis once its bytes are there.
      const m = memory.reserve("x", { cost: 5, now: T0 });
      await redis.import("x", memory.export("x"));
      const s = await redis.settle(m.reservation, 2, { now: T0 });
      assert.equal(s.refunded, 3);
      // Settled: a second settlement is refused and changes no byte.
      const bytes = await redis.export("x");
      await assert.rejects(redis.settle(m.reservation, 2, { now: T0 }), { code: "unknown_reservation", field: "reservation" });
      assert.deepEqual(await redis.export("x"), bytes);
      await assert.rejects(redis.settle("!", 2), { code: "invalid_reservation" });
      // A reset key's reservation is unknown.
      const again = await redis.reserve("y", { cost: 5, now: T0 });
      await redis.reset("y");
      await assert.rejects(redis.settle(again.reservation, 1, { now: T0 }), { code: "unknown_reservation" });
    }
  });
}

test("concurrent limiters reserving and settling one key never admit more than the limit", async (t) => {
  const { client, close } = await connect(CLIENTS[0], server.port);
  t.after(close);
  const config = { algorithm: "fixed-window", quota: "100/m" };
  const limiters = Array.from({ length: 4 }, () => new RateLimiter({ ...config, store: new RedisStore(client, { prefix: "reserve:race:", timeoutMs: 10_000 }) }));
  const now = T0 + 60_000 * 5;
  let used = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, i) => {
      const l = limiters[i % limiters.length];
      const r = await l.reserve("shared", { cost: 10, now });
      if (r.reservation === null) return;
      const actual = i % 3;
      const s = await l.settle(r.reservation, actual, { now });
      used += 10 - s.refunded;
    }),
  );
  // Every unit given back was handed out again, and what stands is within the limit.
  assert.ok(used <= 100, `${used} units stand`);
  const d = await limiters[0].peek("shared", { cost: 1, now });
  assert.equal(d.remaining + 1 + used, 100);
});

test("a synced RedisStore refuses reserve and settle", async (t) => {
  const { client, close } = await connect(CLIENTS[0], server.port);
  t.after(close);
  const l = new RateLimiter({ algorithm: "fixed-window", quota: "100/m", store: new RedisStore(client, { prefix: "reserve:sync:", syncRate: 100 }) });
  await assert.rejects(l.reserve("k", { cost: 1 }), { code: "unsupported_in_sync_mode" });
  await assert.rejects(l.settle("AQ", 1), { code: "unsupported_in_sync_mode" });
  await l.close?.();
});
