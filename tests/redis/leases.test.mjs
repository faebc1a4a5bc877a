// Concurrency leases on a RedisStore (docs/concurrency.md): acquire, release and renew decide
// as in memory, with the same state bytes, through the one compare-and-swap path; a release
// that frees nothing writes nothing; export and import carry the leases.
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

// The next hour: a state's TTL in Redis counts from the real clock.
const T0 = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
const POLICY = {
  limits: [
    { algorithm: "concurrency", limit: 2, leaseTtl: "30s", name: "in-flight" },
    { algorithm: "gcra", quota: "5/m", name: "rate" },
  ],
};
const strip = ({ lease, ...d }) => d;

for (const kind of CLIENTS) {
  test(`acquire, release and renew decide as in memory, with the same bytes (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const memory = new RateLimiter(POLICY);
    const redis = new RateLimiter({ ...POLICY, store: new RedisStore(client, { prefix: `leases:${kind}:` }) });
    const held = { memory: [], redis: [] };
    const trace = ["acquire", "acquire", "acquire", "release", "acquire", "renew", "release", "release", "acquire", "acquire", "acquire"];
    for (const [i, op] of trace.entries()) {
      const now = T0 + i * 1000;
      let m, r;
      if (op === "acquire") {
        m = memory.acquire(["k", "j"], { now });
        r = await redis.acquire(["k", "j"], { now });
        assert.equal(typeof r.lease === "string", typeof m.lease === "string", `step ${i}`);
        if (m.lease) held.memory.push(m.lease), held.redis.push(r.lease);
      } else if (op === "release") {
        m = memory.release(held.memory[0], { now });
        r = await redis.release(held.redis[0], { now });
        held.memory.shift(), held.redis.shift();
        assert.equal(r.released, m.released);
      } else {
        m = memory.renew(held.memory[0], { now });
        r = await redis.renew(held.redis[0], { now });
        assert.equal(r.expiresAt, m.expiresAt);
      }
      assert.deepEqual(strip(r), strip(m), `step ${i} (${op})`);
      // The bytes differ only in the lease ids, which each limiter draws: Redis's, imported
      // in memory, decide as memory's own.
      const twin = new RateLimiter(POLICY);
      twin.import("k", await redis.export("k"));
      assert.deepEqual(twin.peek("k", { now }), memory.peek("k", { now }), `step ${i}: the states`);
    }
  });

  test(`a replayed release writes nothing; renew of an unknown lease rejects with its code (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const redis = new RateLimiter({ algorithm: "concurrency", limit: 1, leaseTtl: 1000, store: new RedisStore(client, { prefix: `replay:${kind}:` }) });
    const a = await redis.acquire("k", { now: T0 });
    assert.equal(a.expiresAt, T0 + 1000);
    assert.equal((await redis.limit("k", { now: T0 })).allowed, false, "limit acquires: the one slot is taken");
    assert.equal((await redis.release(a.lease, { now: T0 + 1 })).released, true);
    const bytes = await redis.export("k");
    assert.equal((await redis.release(a.lease, { now: T0 + 2 })).released, false);
    assert.deepEqual(await redis.export("k"), bytes, "the replay changed nothing");
    await assert.rejects(redis.renew(a.lease, { now: T0 + 3 }), { code: "unknown_lease", field: "lease" });
    await assert.rejects(redis.release("nope"), { code: "invalid_lease", field: "lease" });
    // Waiting in line runs on the real clock (queue.test.mjs): a given `now` is refused, not ignored.
    await assert.rejects(redis.acquire("k", { maxWait: 10, now: T0 + 4 }), { code: "conflicting_fields", field: "now" });
    const b = await redis.acquire("k", { now: T0 + 4 });
    // Another process (a store that never saw the key) renews and releases the lease: it reads
    // what Redis holds rather than refusing over what it does not know.
    const elsewhere = new RateLimiter({ algorithm: "concurrency", limit: 1, leaseTtl: 1000, store: new RedisStore(client, { prefix: `replay:${kind}:` }) });
    assert.equal((await elsewhere.renew(b.lease, { now: T0 + 4 })).expiresAt, T0 + 1004);
    // Export and import carry the lease: a limiter in memory holds it, and releases it.
    const memory = new RateLimiter({ algorithm: "concurrency", limit: 1, leaseTtl: 1000 });
    memory.import("k", await redis.export("k"));
    assert.equal(memory.acquire("k", { now: T0 + 5 }).allowed, false);
    assert.equal(memory.release(b.lease, { now: T0 + 5 }).released, true);
    await redis.import("k", memory.export("k"));
    assert.equal((await redis.acquire("k", { now: T0 + 6 })).allowed, true);
  });
}

for (const kind of CLIENTS) {
  test(`acquisitions in flight at once in one process each get their own lease (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const redis = new RateLimiter({ algorithm: "concurrency", limit: 4, leaseTtl: "30s", store: new RedisStore(client, { prefix: `leases-at-once:${kind}:` }) });
    for (let round = 0; round < 3; round++) {
      // 16 at once, with releases of the previous round's leases in flight beside them.
      const ds = await Promise.all(Array.from({ length: 16 }, () => redis.acquire("k")));
      const leases = ds.filter((d) => d.allowed).map((d) => d.lease);
      assert.equal(leases.length, 4, "exactly the limit admitted");
      assert.ok(leases.every((l) => typeof l === "string"), "every admitted hit holds a lease");
      assert.equal(new Set(leases).size, 4, "no two admitted hits share a lease");
      const released = await Promise.all([...leases.map((l) => redis.release(l)), redis.acquire("k")]);
      assert.ok(released.slice(0, 4).every((r) => r.released === true), "each lease freed its own slot");
      const extra = released[4];
      if (extra.allowed) await redis.release(extra.lease);
    }
  });
}

test("16 workers of one process acquiring and releasing on one key: none runs out of attempts, no slot leaks", async (t) => {
  const { client, close } = await connect("node-redis", server.port);
  t.after(close);
  const redis = new RateLimiter({ algorithm: "concurrency", limit: 4, leaseTtl: "30s", store: new RedisStore(client, { prefix: "leases-workers:" }) });
  let left = 400;
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (left-- > 0) {
        const d = await redis.acquire("k");
        if (!d.allowed) continue;
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setImmediate(r));
        inside--;
        assert.equal((await redis.release(d.lease)).released, true);
      }
    }),
  );
  assert.ok(most <= 4);
  const after = await redis.peek("k");
  assert.equal(after.remaining, 3, "every slot back: a peek leaves 3 of 4");
});
