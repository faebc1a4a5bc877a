// One-key compare-and-swaps of different keys issued together share one script call
// (lib/stores/redis/redis-batch.js): the decisions stay those of memory, a conflict or a bad key fails
// only its own key, and `batchKeys: false` sends one call per key.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";
import { CONFIGS, T0 } from "./trace.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const raw = (client) => ({ send: (args) => ("call" in client ? client.call(...args) : client.sendCommand(args)) });

/** EVALSHA calls Redis has run so far (INFO commandstats). */
async function evalshas(r) {
  const info = String(await r.send(["INFO", "commandstats"]));
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

const KEYS = Array.from({ length: 50 }, (_, i) => `u${i}`);
const ROUNDS = 8;

for (const kind of CLIENTS) {
  test(`hits on many keys issued together share script calls and decide as in memory (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    for (const name of ["sliding-window", "gcra", "token-bucket", "multi-limit policy"]) {
      const config = CONFIGS[name];
      const memory = new RateLimiter(config);
      const redis = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `many:${kind}:${name}:` }) });
      const before = await evalshas(r);
      let denied = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const now = T0 + round * 100;
        const got = await Promise.all(KEYS.map((k) => redis.limit(k, { now })));
        const want = KEYS.map((k) => memory.limit(k, { now }));
        assert.deepEqual(got, want, `${name}: round ${round}`);
        denied += want.filter((d) => !d.allowed).length;
      }
      const calls = (await evalshas(r)) - before;
      // One call per round that wrote anything (all 50 keys in one), not one per hit.
      assert.ok(calls <= ROUNDS, `${name}: ${calls} EVALSHA for ${ROUNDS * KEYS.length} hits`);
      assert.ok(denied > 0, `${name}: the rounds never reached the limit`);
    }
  });

  test(`a conflict or a bad key in a shared call fails only its own key (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const prefix = `mixed:${kind}:`;
    const config = CONFIGS["sliding-window"];
    const memory = new RateLimiter(config);
    const mine = new RateLimiter({ ...config, store: new RedisStore(client, { prefix, failure: "throw" }) });
    const theirs = new RateLimiter({ ...config, store: new RedisStore(client, { prefix }) });
    const now = T0;
    for (const k of ["a", "b", "c"]) assert.deepEqual(await mine.limit(k, { now }), memory.limit(k, { now }));
    // Another process counts a hit on "b": this process's cached bytes for "b" are stale.
    assert.deepEqual(await theirs.limit("b", { now: now + 1 }), memory.limit("b", { now: now + 1 }));
    // A key of another type among them.
    await r.send(["HSET", `${prefix}${mine.namespace}:h`, "f", "v"]);
    const settled = await Promise.allSettled(["a", "b", "h", "c"].map((k) => mine.limit(k, { now: now + 2 })));
    assert.deepEqual(settled[0].value, memory.limit("a", { now: now + 2 }));
    // "b" lost the swap, was decided again over what Redis held (both hits counted).
    assert.deepEqual(settled[1].value, memory.limit("b", { now: now + 2 }));
    assert.equal(settled[1].value.remaining, config.limit - 3);
    assert.equal(settled[2].status, "rejected");
    assert.match(String(settled[2].reason?.message), /WRONGTYPE/);
    assert.deepEqual(settled[3].value, memory.limit("c", { now: now + 2 }));
    assert.equal(String(await r.send(["TYPE", `${prefix}${mine.namespace}:h`])), "hash", "the bad key is left as it was");
  });

  test(`batchKeys: false sends one call per key, with the same decisions (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const config = CONFIGS.gcra;
    const memory = new RateLimiter(config);
    const redis = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `single:${kind}:`, batchKeys: false }) });
    const before = await evalshas(r);
    const got = await Promise.all(KEYS.map((k) => redis.limit(k, { now: T0 })));
    assert.deepEqual(got, KEYS.map((k) => memory.limit(k, { now: T0 })));
    assert.equal((await evalshas(r)) - before, KEYS.length);
    assert.throws(() => new RedisStore(client, { batchKeys: "yes" }), (e) => e instanceof TypeError && /batchKeys/.test(e.message) && /"yes"/.test(e.message));
  });
}
