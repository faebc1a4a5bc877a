// docs/vocabulary.md against the npm edges: each edge accepts exactly the options the table
// gives it, decisions carry exactly its decision fields, and the codes of configuration
// mistakes are the table's. The Worker's names are held to the same table by
// worker/tests/vocabulary.rs.
import test from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore, WorkerStore, rateLimit, rateLimitFetch } from "../../pkg/dist/lib/index.js";
import { RateLimiter as LiteRateLimiter } from "../../pkg/dist/lib/lite.js";
import { namesOf, optionsListedBy, vocabulary } from "./vocabulary.mjs";

const ONE = { algorithm: "gcra", quota: "10/s" };

/** Each npm edge and how to ask it which options it takes. */
const EDGES = {
  limiter: (extra) => new RateLimiter({ ...ONE, [extra]: 1 }),
  rateLimit: (extra) => rateLimit({ ...ONE, [extra]: 1 }),
  rateLimitFetch: (extra) => rateLimitFetch({ ...ONE, key: () => "k", [extra]: 1 }),
  redis: (extra) => new RedisStore({}, { [extra]: 1 }),
  worker: (extra) => new WorkerStore({ url: "http://127.0.0.1:1", policy: "p", [extra]: 1 }),
};

test("every operation the table gives an npm limiter is a method of that limiter", async () => {
  const { RedisLimiter } = await import("../../pkg/dist/lib/stores/redis/redis-limiter.js");
  const { WorkerLimiter } = await import("../../pkg/dist/lib/stores/worker/worker-limiter.js");
  // The Redis and Worker limiters' methods, read from their classes (a RedisStore needs a client).
  const limiters = { limiter: new RateLimiter(ONE), redis: RedisLimiter.prototype, worker: WorkerLimiter.prototype };
  for (const [edge, limiter] of Object.entries(limiters)) {
    const names = namesOf(edge, "operation");
    assert.ok(names.includes("reserve") && names.includes("settle"), edge);
    for (const name of names) assert.equal(typeof limiter[name], "function", `${edge}: ${name}`);
  }
});

/** Names the limiter edge lists in the table that are call options, not constructor options. */
const CALL_OPTIONS = ["cost", "now", "maxWait", "maxQueue", "signal"];

for (const [edge, make] of Object.entries(EDGES)) {
  test(`${edge}: accepts exactly the options docs/vocabulary.md gives it`, () => {
    let table = namesOf(edge, "option");
    // The limiter's own error lists what the core takes beside the limit it was given (a
    // gcra limit here): `leaseTtl` only beside a concurrency limit (docs/concurrency.md). The
    // middlewares pass it on to the core whatever the algorithm, and list it.
    if (edge === "limiter") table = table.filter((n) => !CALL_OPTIONS.includes(n) && n !== "leaseTtl");
    assert.deepEqual(optionsListedBy(make), table);
  });
}

test("fastify: accepts exactly the options docs/vocabulary.md gives it", async () => {
  const { default: plugin } = await import("../../pkg/dist/lib/fastify.js");
  let listed;
  try {
    await plugin({}, { zzNotAnOption: 1 });
  } catch (e) {
    listed = /is not an option \(the options are ([^)]*)\)/.exec(e.message)?.[1].split(", ").sort();
  }
  assert.deepEqual(listed, namesOf("fastify", "option"));
});

test("hono: rateLimiter and webSocketLimiter accept exactly the options docs/vocabulary.md gives them", async () => {
  const { rateLimiter, webSocketLimiter } = await import("../../pkg/dist/lib/hono.js");
  for (const make of [rateLimiter, webSocketLimiter]) {
    assert.deepEqual(optionsListedBy((extra) => make({ keyGenerator: () => "k", [extra]: 1 })), namesOf("hono", "option"));
  }
});

test("tollgate/lite takes the same options as RateLimiter", () => {
  assert.deepEqual(
    optionsListedBy((extra) => new LiteRateLimiter({ ...ONE, [extra]: 1 })),
    optionsListedBy(EDGES.limiter),
  );
});

test("a decision carries only decision fields of docs/vocabulary.md, and the controls' decisions carry every one", () => {
  const now = 1_700_000_000_000;
  const table = namesOf("limiter", "field");
  const seen = new Set();
  const controls = { allowList: ["vip"], denyList: ["bad"] };
  for (const extra of [{}, { blockDuration: "1m" }, { shadow: true }]) {
    const l = new RateLimiter({ ...ONE, name: "second", ...controls, ...extra });
    const decisions = [l.limit("k", { now }), l.limit("k", { now, cost: 10 }), l.peek("k", { now, cost: 10 }), l.limit("vip", { now }), l.limit("bad", { now })];
    // Reserve and settle (docs/reserve.md): a reservation's decision and a settlement's answer.
    const reserved = l.reserve("r", { now, cost: 2 });
    decisions.push(reserved, l.settle(reserved.reservation, 1, { now }));
    for (const d of decisions) {
      for (const f of Object.keys(d)) {
        assert.ok(table.includes(f), `${f} is not a decision field of the table`);
        seen.add(f);
      }
    }
  }
  // Concurrency leases (docs/concurrency.md): an acquisition, a renewal and a release.
  const c = new RateLimiter({ algorithm: "concurrency", limit: 1 });
  const a = c.acquire("k", { now });
  for (const d of [a, c.renew(a.lease, { now }), c.release(a.lease, { now })]) {
    for (const f of Object.keys(d)) {
      assert.ok(table.includes(f), `${f} is not a decision field of the table`);
      seen.add(f);
    }
  }
  assert.deepEqual([...seen].sort(), table);
});

test("the limiter's call options are the table's", () => {
  const l = new RateLimiter(ONE);
  // Known call options are read; the table lists them for the limiter.
  for (const name of CALL_OPTIONS) assert.ok(namesOf("limiter", "option").includes(name), name);
  assert.throws(() => l.limit("k", { cost: "1" }), { code: "invalid_cost", field: "cost" });
  assert.throws(() => l.limit("k", { now: "soon" }), { code: "invalid_now", field: "now" });
});

test("every code a configuration mistake gets is in the table, for the limiter and the middleware", () => {
  const mistakes = [
    { ...ONE, brust: 1 },
    { ...ONE, burst: "5" },
    { ...ONE, burst: 0 },
    { ...ONE, limit: 5 },
    { ...ONE, precision: "1s" },
    { algorithm: "leaky", quota: "1/s" },
    { algorithm: "fixed-window-first-hit", quota: "1/s" },
    { quota: "1/s" },
    { limits: [{ ...ONE, name: "a" }, { ...ONE, name: "a" }] },
    { limits: [] },
  ];
  const codes = new Set();
  for (const options of mistakes) {
    for (const make of [(o) => new RateLimiter(o), (o) => rateLimit(o)]) {
      try {
        make(options);
        assert.fail(`accepted ${JSON.stringify(options)}`);
      } catch (e) {
        assert.equal(typeof e.code, "string", e.message);
        codes.add(e.code);
      }
    }
  }
  for (const code of codes) {
    assert.ok(namesOf("limiter", "code").includes(code), `${code} is not in docs/vocabulary.md for the limiter`);
    assert.ok(namesOf("rateLimit", "code").includes(code), `${code} is not in docs/vocabulary.md for rateLimit`);
  }
  assert.equal(codes.size, 9, [...codes].join(", "));
});

test("the table lists each name once per kind and uses only known edges and kinds", () => {
  const rows = vocabulary();
  assert.ok(rows.length > 50);
  const seen = new Set();
  for (const r of rows) {
    const id = `${r.kind}:${r.name}`;
    assert.ok(!seen.has(id), `${id} is listed twice`);
    seen.add(id);
    assert.ok(["option", "field", "code", "value", "operation"].includes(r.kind), id);
    for (const e of r.edges) assert.ok(["limiter", "rateLimit", "rateLimitFetch", "hono", "fastify", "redis", "worker", "toml", "http", "www", "vars", "proxy", "query", "erl", "pacer"].includes(e), `${id}: ${e}`);
    if (r.kind === "code") assert.match(r.name, /^[a-z][a-z0-9_]*$/, `${r.name}: codes are lowercase snake_case`);
  }
});
