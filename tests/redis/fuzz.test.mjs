// Bad input, fuzzed (fast-check): RedisStore options, limiter options and call arguments of
// every kind, and state bytes in Redis that are garbage, truncated, bit-flipped or another
// policy's. Every malformed input gets a clear error (a TypeError/RangeError naming the field,
// or a RedisStateError with its code for bytes that are not a state), never a crash, a hang or
// another kind of error, and no key in Redis changes (every key's type and value compared
// before and after). The counts of inputs tried are printed; docs/reliability.md records them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { RateLimiter, RedisStore, RedisStateError } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { connect } from "./clients.mjs";

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const ALGORITHMS = ["fixed-window", "sliding-log", "sliding-window", "token-bucket", "gcra", "sliding-buckets"];

let server;
let redis;
before(async () => {
  server = await RedisServer.start();
  redis = await connect("node-redis", server.port);
});
after(async () => {
  await redis?.close();
  await server.stop();
});
const send = (args) => redis.client.sendCommand(args);

/** Every key in Redis with its type and value (DUMP): the store's whole state. */
async function snapshot() {
  const keys = (await send(["KEYS", "*"])).map(String).sort();
  const out = [];
  for (const k of keys) out.push([k, String(await send(["TYPE", k])), String(await send(["DUMP", k]))]);
  return JSON.stringify(out);
}

/** An input error: a TypeError or RangeError with a message (and, if it has one, a snake_case code). */
function isInputError(e) {
  if (!(e instanceof TypeError || e instanceof RangeError) || typeof e.message !== "string" || e.message.length === 0) return false;
  return e.code === undefined || /^[a-z][a-z0-9_]*$/.test(e.code);
}

/** Anything a caller might pass: valid-looking values mixed with wrong types and extremes. */
const junk = fc.oneof(
  fc.anything(),
  fc.constantFrom(0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, 1e300, "", "1s", "0ms", "-5m", "abc", null, undefined, true, [], {}),
  fc.integer({ min: -10, max: 100_000 }),
  fc.string(),
);

test("RedisStore options: accepted or a TypeError/RangeError, nothing else", () => {
  let tried = 0;
  const fields = ["prefix", "namespace", "timeoutMs", "failure", "clock", "syncRate", "maxAttempts", "blockedCache", "batchKeys",
    "maxCachedKeys", "closedRetryMs", "clockRefreshMs", "now", "onError", "insurance", "nope"];
  const options = fc.dictionary(fc.constantFrom(...fields), fc.oneof(junk, fc.constantFrom("open", "closed", "throw", "insurance", "local", "redis", 0.25)), { maxKeys: 4 });
  fc.assert(
    fc.property(options, (o) => {
      tried++;
      try {
        new RedisStore(redis.client, o);
      } catch (e) {
        assert.ok(isInputError(e), `${e?.name}: ${e?.message} for ${fc.stringify(o)}`);
      }
    }),
    { numRuns: RUNS * 3 },
  );
  console.log(`# RedisStore options tried: ${tried}`);
});

test("limiter options and call arguments over Redis: a decision or an input error, Redis unchanged", async () => {
  let tried = 0;
  // timeoutMs of 30 s: a valid call must be a decision, and on a loaded machine 500 ms can pass
  // before this process reads Redis's answer (a RedisUnavailableError, which is not the point).
  const store = new RedisStore(redis.client, { prefix: "fz:", failure: "throw", timeoutMs: 30_000 });
  // Windows of an hour: no key expires between two snapshots of one input.
  const good = new RateLimiter({ algorithm: "gcra", limit: 5, window: "1h", store });
  await good.limit("a", { now: 1_700_000_000_000 });
  const limitOptions = fc.record(
    {
      algorithm: fc.oneof(fc.constantFrom(...ALGORITHMS), junk),
      limit: junk,
      window: junk,
      quota: junk,
      burst: junk,
      precision: junk,
      align: fc.oneof(fc.constantFrom("clock", "first-hit"), junk),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(limitOptions, junk, junk, junk, async (options, key, cost, now) => {
      tried++;
      const before = await snapshot();
      let limiter = null;
      try {
        limiter = new RateLimiter({ ...options, store });
      } catch (e) {
        assert.ok(isInputError(e), `${e?.name}: ${e?.message} for ${fc.stringify(options)}`);
      }
      // Bad call arguments to a limiter that works: refused before any I/O.
      for (const call of [() => good.limit(key, { cost, now }), () => good.peek(key, { cost }), () => good.refund(key, { now })]) {
        let threw = null;
        try {
          await call();
        } catch (e) {
          threw = e;
        }
        if (threw !== null) {
          assert.ok(isInputError(threw), `${threw?.name}: ${threw?.message} for key ${fc.stringify(key)}, cost ${fc.stringify(cost)}, now ${fc.stringify(now)}`);
          assert.equal(await snapshot(), before, "a refused call changed Redis");
        }
      }
      void limiter;
    }),
    { numRuns: RUNS },
  );
  console.log(`# limiter options x call arguments tried: ${tried}`);
});

test("state bytes in Redis that are not a state: RedisStateError, the key and every other key unchanged", async () => {
  let tried = 0;
  let refused = 0;
  const now = 1_700_000_000_000;
  const limiters = ALGORITHMS.map((algorithm) => {
    const options = { algorithm, limit: 5, window: "1h", ...(algorithm === "sliding-buckets" ? { precision: "6m" } : {}) };
    // No blocked-key cache: the test rewrites Redis behind the store's back, and a denial the
    // store confirmed a moment ago would (rightly) stand without reading the new bytes.
    return new RateLimiter({ ...options, store: new RedisStore(redis.client, { prefix: `st:${algorithm}:`, failure: "open", blockedCache: false, timeoutMs: 30_000 }) });
  });
  // Real states of every algorithm, to truncate, flip and hand to the others.
  const real = [];
  for (const [i, l] of limiters.entries()) {
    await l.limit("seed", { now });
    await l.limit("seed", { now: now + 10 });
    real.push(String(await send(["GET", `st:${ALGORITHMS[i]}:${l.namespace}:seed`])));
  }
  const hex = (bytes) => Buffer.from(bytes).toString("hex");
  const value = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 40 }).map(hex), // random bytes
    fc.tuple(fc.constantFrom(...real), fc.nat()).map(([h, n]) => h.slice(0, 2 * (n % (h.length / 2)))).filter((h) => h.length > 0), // truncated
    fc.tuple(fc.constantFrom(...real), fc.nat(), fc.integer({ min: 1, max: 255 })).map(([h, at, x]) => {
      const b = Buffer.from(h, "hex");
      b[at % b.length] ^= x;
      return b.toString("hex");
    }), // one byte changed
    fc.tuple(fc.constantFrom(...real), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([h, extra]) => h + hex(extra)), // trailing bytes
    fc.constantFrom(...real), // another algorithm's state
    fc.string({ minLength: 1 }), // not hex at all
  );
  await fc.assert(
    fc.asyncProperty(fc.nat({ max: limiters.length - 1 }), value, fc.boolean(), fc.constantFrom("limit", "peek", "refund"), async (which, v, asHash, method) => {
      tried++;
      const rkey = `st:${ALGORITHMS[which]}:${limiters[which].namespace}:victim`;
      await send(["DEL", rkey]);
      if (asHash) await send(["HSET", rkey, "f", v]);
      else await send(["SET", rkey, v]);
      const before = await snapshot();
      try {
        const d = await limiters[which][method]("victim", { now: now + 20 });
        // The bytes happened to be a valid state of this policy: an exact decision, never degraded.
        assert.ok(!asHash, "a hash at the key was decided over");
        if (d !== undefined) assert.equal(d.degraded, undefined);
      } catch (e) {
        refused++;
        assert.ok(e instanceof RedisStateError, `${e?.name}: ${e?.message} for ${fc.stringify(v)}`);
        assert.equal(e.code, "redis_state_invalid");
        assert.equal(e.namespace, limiters[which].namespace);
        assert.ok(!e.message.includes(rkey), e.message);
        assert.equal(await snapshot(), before, "a refused state changed Redis");
      }
    }),
    { numRuns: RUNS * 2, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
  );
  console.log(`# state values tried: ${tried} (${refused} refused as not a state)`);
});

test("failure \"insurance\" needs its share, in (0, 1]; insurance without it is refused", () => {
  assert.throws(() => new RedisStore(redis.client, { failure: "insurance" }), TypeError);
  assert.throws(() => new RedisStore(redis.client, { insurance: 0.5 }), TypeError);
  assert.throws(() => new RedisStore(redis.client, { failure: "insurance", insurance: 0 }), RangeError);
  assert.throws(() => new RedisStore(redis.client, { failure: "insurance", insurance: 1.5 }), RangeError);
  assert.throws(() => new RedisStore(redis.client, { failure: "insurance", insurance: "half" }), TypeError);
  new RedisStore(redis.client, { failure: "insurance", insurance: 0.25 });
});
