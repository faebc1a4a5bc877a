// The same mistake gets the same code and field at every edge: the table of
// tests/same-error/mistakes.json through the npm package. The Worker runs the same table
// through its wrangler.toml and body parsers (worker/tests/same_error.rs) and over HTTP
// (worker/test/same-error.test.mjs).
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { LeasedPacer, Pacer, RateLimiter, RedisStore, WorkerStore, ipKey, rateLimit, rateLimitFetch } from "../../pkg/dist/lib/index.js";

const table = JSON.parse(readFileSync(new URL("../same-error/mistakes.json", import.meta.url), "utf8"));
const applies = (c) => c.edges === undefined || c.edges.includes("npm");
const NOW = 1_700_000_000_000;

for (const c of table.config.filter(applies)) {
  test(`options, ${c.mistake}: ${c.code} at ${c.field}`, () => {
    assert.throws(() => new RateLimiter(c.options), (e) => {
      assert.deepEqual({ code: e.code, field: e.field }, { code: c.code, field: c.field }, e.message);
      assert.ok(e instanceof (c.code === "out_of_range" ? RangeError : TypeError), e.message);
      return true;
    });
  });
}

for (const c of table.hit.filter(applies)) {
  test(`limit(key, options), ${c.mistake}: ${c.code} at ${c.field}`, () => {
    const limiter = new RateLimiter(table.policy);
    // JSON has no NaN: the table writes it as a string, which JavaScript can pass as a number.
    const options = { now: NOW, ...c.options };
    if (options.cost === "NaN") options.cost = NaN;
    assert.throws(() => limiter.limit(c.key, options), (e) => {
      assert.deepEqual({ code: e.code, field: e.field }, { code: c.code, field: c.field }, e.message);
      return true;
    });
    assert.equal(limiter.size, 0, "a bad hit changes nothing");
  });
}

// The options around a limit: the npm stores' (`redis`: RedisStore, `worker`: WorkerStore) and
// the middleware's, each case at the npm edges it names (worker/tests/same_error.rs runs its
// `toml` edge). Validation comes before any I/O: the Redis client is a stub that never
// answers, the Worker's URL is never asked.
const CODES = ["invalid_type", "missing_field", "unknown_field", "renamed", "conflicting_fields", "invalid_value", "out_of_range", "unsupported_option", "duplicate_name"];
const neverAnswers = { sendCommand: () => new Promise(() => {}) };
const STORE_EDGES = {
  redis: (c) => new RateLimiter({ ...(c.limits ?? table.policy), store: new RedisStore(neverAnswers, c.options) }),
  worker: (c) =>
    new RateLimiter({ ...(c.limits ?? table.policy), store: new WorkerStore({ url: "http://127.0.0.1:1", policy: "same", ...c.options }) }),
};
const MIDDLEWARE_EDGES = {
  rateLimit: (c) => rateLimit({ ...table.policy, ...c.options }),
  rateLimitFetch: (c) => rateLimitFetch({ ...table.policy, key: () => "k", ...c.options }),
};

/** `make(c)` throws the table's code and field, a RangeError for out_of_range (a TypeError otherwise, unless `classes` allows both). */
function throwsTheTables(make, c, classes = [c.code === "out_of_range" ? RangeError : TypeError]) {
  assert.throws(() => make(c), (e) => {
    assert.deepEqual({ code: e.code, field: e.field }, { code: c.code, field: c.field }, e.message);
    assert.ok(classes.some((k) => e instanceof k), `${e.name}: ${e.message}`);
    assert.ok(e.message.startsWith(c.field), `the message starts with the field: ${e.message}`);
    return true;
  });
}

for (const [edge, make] of Object.entries(STORE_EDGES)) {
  for (const c of table.store.filter((c) => c.edges.includes(edge))) {
    test(`${edge} store options, ${c.mistake}: ${c.code} at ${c.field}`, () => throwsTheTables(make, c));
  }
}

for (const [edge, make] of Object.entries(MIDDLEWARE_EDGES)) {
  for (const c of table.middleware.filter((c) => c.edges.includes(edge))) {
    // standardHeaders keeps the RangeError it had before it had a code.
    const classes = c.field === "standardHeaders" ? [RangeError, TypeError] : undefined;
    test(`${edge} options, ${c.mistake}: ${c.code} at ${c.field}`, () => throwsTheTables(make, c, classes));
  }
}

test("every store and middleware case names known edges and one of the core's codes", () => {
  const known = ["redis", "worker", "toml", "rateLimit", "rateLimitFetch"];
  for (const c of [...table.store, ...table.middleware]) {
    assert.ok(c.edges.length > 0 && c.edges.every((e) => known.includes(e)), c.mistake);
    assert.ok(CODES.includes(c.code), c.mistake);
  }
});

// The other npm constructors and their call options: each mistake carries one of the core's
// codes and the option's field (no table at other edges: these options are npm's alone).
const lease = { url: "http://127.0.0.1:1", pool: "p", holder: "h", partitions: 1, ttlMs: 1000 };
const OTHERS = [
  ["Pacer", () => new Pacer({ rate: "10/s", maxQueu: 5 }), "unknown_field", "maxQueu"],
  ["Pacer", () => new Pacer({}), "missing_field", "rate"],
  ["Pacer", () => new Pacer({ rate: 10 }), "invalid_type", "rate"],
  ["Pacer", () => new Pacer({ rate: "10/parsec" }), "invalid_value", "rate"],
  ["Pacer", () => new Pacer({ rate: { limit: 0, window: "1s" } }), "out_of_range", "rate.limit"],
  ["Pacer", () => new Pacer({ rate: "10/s", grain: "2s" }), "out_of_range", "grain"],
  ["Pacer", () => new Pacer({ rate: "10/s", grain: "soon" }), "invalid_value", "grain"],
  ["Pacer", () => new Pacer({ rate: "10/s", grain: true }), "invalid_type", "grain"],
  ["Pacer", () => new Pacer({ rate: "10/s", maxQueue: -1 }), "out_of_range", "maxQueue"],
  ["Pacer", () => new Pacer({ rate: "10/s", now: 5 }), "invalid_type", "now"],
  ["Pacer", () => new Pacer({ rate: "10/s", sleep: "no" }), "invalid_type", "sleep"],
  ["Pacer", () => new Pacer("10/s"), "invalid_type", "options"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, ttl: 1000 }), "unknown_field", "ttl"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, url: "ftp://x" }), "invalid_value", "url"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, url: 5 }), "invalid_type", "url"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, pool: "" }), "out_of_range", "pool"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, holder: "h".repeat(129) }), "out_of_range", "holder"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, partitions: 0 }), "out_of_range", "partitions"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, ttlMs: "1s" }), "invalid_type", "ttlMs"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, renewMargin: 600 }), "out_of_range", "renewMargin"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, grain: "soon" }), "invalid_value", "grain"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, maxQueue: 1.5 }), "out_of_range", "maxQueue"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, fetch: "no" }), "invalid_type", "fetch"],
  ["LeasedPacer", () => new LeasedPacer({ ...lease, now: 5 }), "invalid_type", "now"],
  ["rateLimit", () => rateLimit(5), "invalid_type", "options"],
  ["rateLimit", () => rateLimit({ ...table.policy, skip: true }), "invalid_type", "skip"],
  ["rateLimit", () => rateLimit({ ...table.policy, skipFailedRequests: "yes" }), "invalid_type", "skipFailedRequests"],
  ["rateLimit", () => rateLimit({ ...table.policy, requestPropertyName: 5 }), "invalid_type", "requestPropertyName"],
  ["rateLimit", () => rateLimit({ ...table.policy, passOnStoreError: 1 }), "invalid_type", "passOnStoreError"],
  ["rateLimit", () => rateLimit({ ...table.policy, validate: 5 }), "invalid_type", "validate"],
  ["rateLimit", () => rateLimit({ ...table.policy, logger: {} }), "invalid_type", "logger"],
  ["rateLimit", () => rateLimit({ ...table.policy, limiter: new RateLimiter(table.policy) }), "conflicting_fields", "limits"],
  ["rateLimit", () => rateLimit({ limiter: {} }), "invalid_type", "limiter"],
  ["rateLimit", () => rateLimit({ window: "1s", windowMs: 1000, limit: 5 }), "conflicting_fields", "windowMs"],
  ["rateLimit", () => rateLimit({ limit: () => 5, quota: "5/s" }), "conflicting_fields", "quota"],
  ["rateLimit", () => rateLimit({ ...table.policy, store: 5 }), "invalid_type", "store"],
  // rateLimit's ipv6Subnet is one of express-rate-limit's logged validations; ipKey throws.
  ["ipKey", () => ipKey("::1", 129), "out_of_range", "ipv6Subnet"],
  ["ipKey", () => ipKey("::1", "56"), "invalid_type", "ipv6Subnet", RangeError],
  ["rateLimitFetch", () => rateLimitFetch(table.policy), "missing_field", "key"],
  ["rateLimitFetch", () => rateLimitFetch({ ...table.policy, key: "k" }), "invalid_type", "key"],
  ["rateLimitFetch", () => rateLimitFetch({ ...table.policy, key: () => "k", windowMs: 1000 }), "renamed", "windowMs"],
  ["rateLimitFetch", () => rateLimitFetch({ ...table.policy, key: () => "k", headers: true }), "renamed", "headers"],
  ["rateLimitFetch", () => rateLimitFetch({ ...table.policy, key: () => "k", handler: "no" }), "invalid_type", "handler"],
  ["rateLimitFetch", () => rateLimitFetch({ ...table.policy, key: () => "k", brust: 5 }), "unknown_field", "brust"],
  ["RateLimiter", () => new RateLimiter({ ...table.policy, maxKeys: 0 }), "out_of_range", "maxKeys"],
  ["RateLimiter", () => new RateLimiter({ ...table.policy, maxKeys: 1.5 }), "out_of_range", "maxKeys"],
  ["RateLimiter", () => new RateLimiter({ ...table.policy, maxKeys: "10" }), "invalid_type", "maxKeys"],
  ["RateLimiter", () => new RateLimiter({ ...table.policy, store: {} }), "invalid_type", "store"],
  ["RedisStore", () => new RedisStore({}, {}), "invalid_type", "client"],
  ["RedisStore", () => new RedisStore(neverAnswers, 5), "invalid_type", "options"],
  ["RedisStore", () => new RedisStore(neverAnswers, { namespace: "a\nb" }), "invalid_value", "namespace"],
  ["WorkerStore", () => new WorkerStore({ policy: "same" }), "missing_field", "url"],
  ["WorkerStore", () => new WorkerStore({ url: "http://127.0.0.1:1", binding: { fetch() {} }, policy: "same" }), "conflicting_fields", "binding"],
  ["WorkerStore", () => new WorkerStore({ url: "http://127.0.0.1:1" }), "missing_field", "policy"],
  ["WorkerStore", () => new WorkerStore({ binding: {}, policy: "same" }), "invalid_type", "binding"],
  ["WorkerStore", () => new WorkerStore({ url: "http://127.0.0.1:1", policy: "same", failure: "insurance", insurance: 0.5 }).limiter(), "missing_field", "limits"],
  // A call's own arguments, named as the call names them.
  ["export", () => new RateLimiter(table.policy).export(5), "invalid_type", "key"],
  ["import", () => new RateLimiter(table.policy).import("k", "bytes"), "invalid_type", "state"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(["a", 5]), "invalid_type", "keys[1]"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(null), "invalid_type", "keys"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(["a", "b"], { costs: [1] }), "out_of_range", "costs"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(["a"], { costs: ["1"] }), "invalid_type", "costs[0]"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(["a"], { cost: 1, costs: [1] }), "conflicting_fields", "costs"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(["a"], {}, { allowed: [] }), "invalid_type", "out"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(["a"], 5), "invalid_type", "options"],
  ["limitBatch", () => new RateLimiter(table.policy).limitBatch(new RateLimiter(table.policy).key("a")), "invalid_value", "keys"],
];

for (const [edge, make, code, field, Class = code === "out_of_range" ? RangeError : TypeError] of OTHERS) {
  test(`${edge}: ${code} at ${field}`, () => {
    assert.throws(make, (e) => {
      assert.deepEqual({ code: e.code, field: e.field }, { code, field }, e.message);
      assert.ok(CODES.includes(e.code), e.code);
      // ipKey's errors keep the RangeError they had before they had a code.
      assert.ok(e instanceof Class, `${e.name}: ${e.message}`);
      return true;
    });
  });
}

const waitLimiter = new RateLimiter(table.policy);
for (const [options, code, field] of [
  [{}, "missing_field", "maxWait"],
  [{ maxWait: -1 }, "out_of_range", "maxWait"],
  [{ maxWait: "soon" }, "invalid_value", "maxWait"],
  [{ maxWait: true }, "invalid_type", "maxWait"],
  [{ maxWait: 10, signal: 5 }, "invalid_type", "signal"],
  [{ maxWait: 10, maxWiat: 5 }, "unknown_field", "maxWiat"],
  [5, "invalid_type", "options"],
]) {
  test(`waitFor(key, ${JSON.stringify(options)}): ${code} at ${field}`, async () => {
    await assert.rejects(waitLimiter.waitFor("k", options), (e) => {
      assert.deepEqual({ code: e.code, field: e.field }, { code, field }, e.message);
      assert.ok(e instanceof (code === "out_of_range" ? RangeError : TypeError), `${e.name}: ${e.message}`);
      return true;
    });
  });
}

test("waitFor takes maxWait as a duration, as every duration option", async () => {
  const l = new RateLimiter(table.policy);
  assert.equal((await l.waitFor("k", { maxWait: "1s" })).allowed, true);
});
