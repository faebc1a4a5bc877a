// The store's contract besides the decisions: expiry, the clock, bad state, bad input, the
// blocked-key cache and the round trips it costs.
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

/** Commands Redis ran, by name, from INFO commandstats (evalsha, get, ...). */
async function commandCounts(client) {
  const info = String(await client.send(["INFO", "commandstats"]));
  const counts = {};
  for (const m of info.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) counts[m[1]] = Number(m[2]);
  return counts;
}

const raw = (client) => ({ send: (args) => ("call" in client ? client.call(...args) : client.sendCommand(args)) });

for (const kind of CLIENTS) {
  test(`keys expire once their state is fresh again, at most the longest window (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const limiter = new RateLimiter({
      limits: [
        { algorithm: "sliding-window", limit: 5, window: "10s" },
        { algorithm: "fixed-window", limit: 50, window: "1m" },
      ],
      store: new RedisStore(client, { prefix: `ttl:${kind}:` }),
    });
    const now = Date.now();
    await limiter.limit("k", { now });
    const pttl = Number(await r.send(["PTTL", `ttl:${kind}:${limiter.namespace}:k`]));
    assert.ok(pttl > 0, `PTTL ${pttl}: no expiry set`);
    // Fresh again at the end of the current minute window at the latest (fixed window, clock).
    assert.ok(pttl <= 60_000 - (now % 60_000) + 20_000, `PTTL ${pttl}`);
    // One emission interval long enough that a loaded machine reads the TTL before it lapses.
    const g = new RateLimiter({ algorithm: "gcra", quota: "1/h", store: new RedisStore(client, { prefix: `ttl:${kind}:` }) });
    await g.limit("g");
    const gttl = Number(await r.send(["PTTL", `ttl:${kind}:${g.namespace}:g`]));
    assert.ok(gttl > 3_600_000 - 60_000 && gttl <= 3_600_000, `gcra PTTL ${gttl}: one emission interval`);
  });

  test(`a value that is not state is a RedisStateError, and changes nothing (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const prefix = `bad:${kind}:`;
    const limiter = new RateLimiter({ algorithm: "gcra", quota: "10/s", store: new RedisStore(client, { prefix }) });
    assert.match(limiter.namespace, /^[0-9a-f]{12}$/);
    const rkey = `${prefix}${limiter.namespace}:k`;
    await r.send(["SET", rkey, "not a tollgate state"]);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(limiter.limit("k"), (e) => {
        assert.ok(e instanceof RedisStateError);
        assert.equal(e.code, "redis_state_invalid");
        assert.equal(e.field, "namespace");
        assert.equal(e.namespace, limiter.namespace);
        assert.match(e.message, new RegExp(`under namespace "${limiter.namespace}" is not a tollgate state`));
        // Never the Redis key, its prefix or the caller's key (often a client's address).
        assert.ok(!e.message.includes(prefix) && !e.message.includes(rkey) && !("key" in e), e.message);
        return true;
      });
    }
    await assert.rejects(limiter.peek("k"), RedisStateError);
    assert.equal(String(await r.send(["GET", rkey])), "not a tollgate state");
    // A state of another policy under one namespace the user named for both is refused, naming it.
    const other = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1s", store: new RedisStore(client, { prefix, namespace: "shared" }) });
    await other.limit("k");
    const theirs = new RateLimiter({ algorithm: "gcra", quota: "10/s", store: new RedisStore(client, { prefix, namespace: "shared" }) });
    await assert.rejects(theirs.limit("k"), { name: "RedisStateError", code: "redis_state_invalid", field: "namespace", namespace: "shared", message: /namespace "shared"/ });
    // A key of another type: the script's GET fails, failure mode "throw" reports it.
    await r.send(["HSET", `${prefix}${limiter.namespace}:h`, "f", "v"]);
    const strict = new RateLimiter({ algorithm: "gcra", quota: "10/s", store: new RedisStore(client, { prefix, failure: "throw" }) });
    await assert.rejects(strict.limit("h"), /WRONGTYPE/);
    // After a reset the key works again.
    await limiter.reset("k");
    assert.equal((await limiter.limit("k")).allowed, true);
  });

  test(`bad input is a TypeError/RangeError naming the field, and nothing reaches Redis (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    const prefix = `input:${kind}:`;
    const limiter = new RateLimiter({ algorithm: "sliding-window", limit: 5, window: "1s", store: new RedisStore(client, { prefix }) });
    await assert.rejects(limiter.limit(""), { name: "RangeError", message: /key must not be empty/ });
    await assert.rejects(limiter.limit(42), { name: "TypeError", message: /key must be a string/ });
    await assert.rejects(limiter.limit("a".repeat(300)), { name: "RangeError", message: /at most 256/ });
    await assert.rejects(limiter.limit(["a", "a"]), { name: "RangeError", message: /repeats/ });
    await assert.rejects(limiter.limit("k", { cost: 0 }), { name: "RangeError", message: /cost/ });
    await assert.rejects(limiter.limit("k", { cost: 6 }), { name: "RangeError", message: /can never fit/ });
    await assert.rejects(limiter.limit("k", { cost: "2" }), { name: "TypeError", message: /cost/ });
    await assert.rejects(limiter.limit("k", { now: -1 }), { name: "RangeError", message: /now/ });
    const keys = await r.send(["KEYS", `${prefix}*`]);
    assert.deepEqual(keys, []);
    assert.throws(() => new RedisStore(client, { failure: "maybe" }), { name: "TypeError", message: /failure must be/ });
    assert.throws(() => new RedisStore(client, { clock: "ntp" }), { name: "TypeError", message: /clock must be/ });
    assert.throws(() => new RedisStore(client, { timeoutMs: 0 }), { name: "RangeError", message: /timeoutMs/ });
    // A fraction is a number out of range, as in wrangler.toml (tests/same-error/mistakes.json).
    assert.throws(() => new RedisStore(client, { syncRate: 1.5 }), { name: "RangeError", code: "out_of_range", field: "syncRate", message: /syncRate/ });
    assert.throws(() => new RedisStore({}, {}), { name: "TypeError", message: /client must be/ });
    assert.throws(() => new RateLimiter({ algorithm: "nope", store: new RedisStore(client) }), { name: "TypeError", message: /algorithm/ });
  });

  test(`clock "redis" takes Redis's TIME, not the caller's clock (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    // This node's clock is an hour ahead, and stands still for the test: the offset to Redis's
    // TIME is then measured again only if decisions ask for it (on the real clock, a process held
    // past the second it is kept for would measure it again and fail the count below).
    const ahead = Date.now() + 3_600_000;
    const skewed = () => ahead;
    const config = { algorithm: "fixed-window", limit: 5, window: "1m" };
    const local = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `clk:l:${kind}:`, now: skewed }) });
    const redis = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: `clk:r:${kind}:`, now: skewed, clock: "redis" }) });
    const before = Date.now();
    const dl = await local.limit("k");
    const dr = await redis.limit("k");
    assert.ok(dl.resetAt > before + 3_500_000, `local clock: resetAt ${dl.resetAt - before} ms ahead`);
    assert.ok(dr.resetAt > before && dr.resetAt <= before + 61_000, `redis clock: resetAt ${dr.resetAt - before} ms ahead`);
    const before2 = await commandCounts(raw(client));
    for (let i = 0; i < 3; i++) await redis.limit("k");
    const after2 = await commandCounts(raw(client));
    assert.equal((after2.time ?? 0) - (before2.time ?? 0), 0, "TIME is measured once a second, not per decision");
  });

  test(`one round trip per decision, and a blocked key answers from the cache (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    // The store's clock stands still: the blocked-key cache's second (counted on it) never
    // passes, however long a loaded machine takes for the 20 denied hits below.
    const frozen = Date.now();
    const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 10, window: "1m", store: new RedisStore(client, { prefix: `rt:${kind}:`, now: () => frozen }) });
    const before = await commandCounts(r);
    for (let i = 0; i < 10; i++) assert.equal((await limiter.limit("k")).allowed, true);
    const mid = await commandCounts(r);
    // The script is loaded once; then every admitted hit is one EVALSHA and no read (commands
    // the script runs are counted too, so GET/SET are not checked here).
    assert.equal(mid.evalsha - (before.evalsha ?? 0), 10);
    assert.equal((mid.mget ?? 0) - (before.mget ?? 0), 0);
    for (let i = 0; i < 20; i++) {
      const d = await limiter.limit("k");
      assert.equal(d.allowed, false);
      assert.ok(d.retryAfter > 0);
    }
    const end = await commandCounts(r);
    assert.equal(end.evalsha - mid.evalsha, 0, "denied hits on a key known blocked ask Redis nothing");
    // Without the cache, a denial is confirmed in Redis (one EVALSHA that writes nothing).
    const strict = new RateLimiter({ algorithm: "sliding-log", limit: 10, window: "1m", store: new RedisStore(client, { prefix: `rt:${kind}:`, blockedCache: false }) });
    assert.equal((await strict.limit("k")).allowed, false);
    assert.equal((await strict.limit("k")).allowed, false);
    assert.equal((await commandCounts(r)).evalsha - end.evalsha, 2); // cold cache: one conflict answered with the bytes; then one check
  });

  test(`a reset by another process is seen once the blocked-key cache's bound has passed (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const r = raw(client);
    // Two stores over one Redis are two processes; each has its own local clock (ms).
    let clock = Date.now();
    const policy = { algorithm: "sliding-log", limit: 3, window: "1h" }; // a login limiter
    const mk = (blockedCache) =>
      new RateLimiter({ ...policy, store: new RedisStore(client, { prefix: `bc:${kind}:`, blockedCache, now: () => clock }) });
    const a = mk(300);
    const b = mk(300);
    const hit = (l, key = "user") => l.limit(key, { now: clock });
    for (let i = 0; i < 3; i++) assert.equal((await hit(a)).allowed, true);
    assert.equal((await hit(a)).allowed, false); // blocked, and a knows it
    let before = await commandCounts(r);
    clock += 200;
    assert.equal((await hit(a)).allowed, false, "within the bound: answered from the cache");
    assert.equal((await commandCounts(r)).evalsha - before.evalsha, 0);
    // Within the bound a denial stands even though b resets the key meanwhile (documented).
    await b.reset("user");
    assert.equal((await hit(a)).allowed, false);
    // Past the bound, a asks Redis, sees the reset and admits: not locked out for the hour.
    clock += 101;
    before = await commandCounts(r);
    const d = await hit(a);
    assert.equal(d.allowed, true, "the reset by the other process is seen");
    assert.equal(d.remaining, 2);
    // A key hammered while blocked costs one confirming round trip per bound, not per hit.
    for (let i = 0; i < 2; i++) await hit(a);
    assert.equal((await hit(a)).allowed, false);
    before = await commandCounts(r);
    for (let step = 0; step < 10; step++) {
      clock += 100; // 1 s in all: confirmations at +400 (past 300) and at +800 (past 300 again)
      assert.equal((await hit(a)).allowed, false);
    }
    const confirms = (await commandCounts(r)).evalsha - before.evalsha;
    assert.ok(confirms >= 2 && confirms <= 4, `${confirms} confirmations for 10 denied hits over 1 s`);
    // Several keys at once (all or nothing) take the same bound.
    clock += 10_000;
    for (let i = 0; i < 3; i++) assert.equal((await a.limit(["ip", "acct"], { now: clock })).allowed, true);
    assert.equal((await a.limit(["ip", "acct"], { now: clock })).allowed, false);
    await b.reset(["ip", "acct"]);
    clock += 100;
    assert.equal((await a.limit(["ip", "acct"], { now: clock })).allowed, false);
    clock += 201;
    assert.equal((await a.limit(["ip", "acct"], { now: clock })).allowed, true);
    // Bad values are refused by name.
    assert.throws(() => new RedisStore(client, { blockedCache: -1 }), { name: "RangeError", code: "out_of_range", message: /^blockedCache must be a whole number of milliseconds from 0 to / });
    assert.throws(() => new RedisStore(client, { blockedCache: "soon" }), { name: "TypeError", code: "invalid_value", message: /blockedCache/ });
    // A duration, as every duration option takes (docs/vocabulary.md).
    assert.equal(new RedisStore(client, { blockedCache: "1s" })._blockedCacheMs, 1000);
  });
}
