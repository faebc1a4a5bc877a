// A WorkerStore limiter that decides by the Worker's limits (none of its own) and whose Worker
// never answered (down from the first hit, so that policy was never fetched) still answers
// every request by its failure mode: the middlewares write the core's headers of a decision
// over no known limit (none for an admission, `Retry-After` for a denial) instead of failing
// on "no policy yet" (which made every such request a 500). With its own limits, an outage is
// answered over them. No server is started: the fetch always fails.
import test from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { rateLimit, RateLimiter, WorkerStore } from "../../pkg/dist/lib/index.js";

const down = () => Promise.reject(new Error("connect ECONNREFUSED"));
const store = (failure) => new WorkerStore({ url: "http://127.0.0.1:9", policy: "api", failure, fetch: down, closedRetryMs: 2500, onError: () => {} });

async function serve(mw, run) {
  const server = http.createServer((req, res) => mw(req, res, (e) => (e ? ((res.statusCode = 500), res.end(String(e))) : res.end("ok"))));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    return await run(`http://127.0.0.1:${server.address().port}/`);
  } finally {
    server.close();
  }
}

const rateHeaders = (r) => [...r.headers].filter(([k]) => /ratelimit|retry-after/i.test(k));

test("failure open before the policy is known: 200 with no rate-limit figures to advertise", async () => {
  await serve(rateLimit({ limiter: new RateLimiter({ store: store("open") }), keyGenerator: () => "k" }), async (url) => {
    const r = await fetch(url);
    assert.equal(r.status, 200, await r.text());
    assert.deepEqual(rateHeaders(r), []);
  });
});

test("failure closed before the policy is known: 429 saying when to come back, closedRetryMs rounded up", async () => {
  await serve(rateLimit({ limiter: new RateLimiter({ store: store("closed") }), keyGenerator: () => "k" }), async (url) => {
    const r = await fetch(url);
    assert.equal(r.status, 429);
    assert.deepEqual(rateHeaders(r), [["retry-after", "3"]]);
  });
});

test("limiter.headers of such a decision is the core's, and refuses a decision of limits it never knew", async () => {
  const limiter = new RateLimiter({ store: store("closed") });
  const d = await limiter.limit("k");
  assert.equal(d.degraded, "unavailable");
  assert.deepEqual(limiter.headers(d), { "Retry-After": "3" });
  assert.deepEqual(limiter.headers({ ...d, allowed: true, retryAfter: 0 }), {});
  assert.throws(() => limiter.headers({ ...d, limits: [{ name: "x" }] }), TypeError);
});

test("with its own limits, an outage before the Worker's policy is known is answered over them", async () => {
  await serve(rateLimit({ store: store("open"), limit: 7, standardHeaders: "draft-6", legacyHeaders: false, keyGenerator: () => "k" }), async (url) => {
    const r = await fetch(url);
    assert.equal(r.status, 200);
    assert.deepEqual(rateHeaders(r).filter(([k]) => k !== "ratelimit-reset"), [["ratelimit-limit", "7"], ["ratelimit-policy", "7;w=60"], ["ratelimit-remaining", "6"]]);
  });
});
