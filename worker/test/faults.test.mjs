// Fail open / fail closed with a fault injected in the Durable Object (TEST_MODE on), and
// the isolate's block cache answering a denial without calling the object at all.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, freshKey } from "./harness.mjs";

let s;
before(async () => {
  s = await start();
});
after(async () => {
  await s?.stop();
});

for (const fault of ["error", "timeout"]) {
  test(`fail open on ${fault}: allowed, marked degraded`, async () => {
    const t = performance.now();
    const r = await post(s.url, "/v1/limit", { key: freshKey(), policy: "open" }, { "tollgate-test-fault": fault });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.allowed, true);
    assert.equal(r.body.degraded, "unavailable");
    assert.equal(r.headers.get("tollgate-degraded"), `fail-open;reason="${fault}"`);
    if (fault === "timeout") assert.ok(performance.now() - t < 2500, "answered at the policy's timeout, not the object's delay");
  });

  test(`fail closed on ${fault}: denied with 503, marked degraded`, async () => {
    const r = await post(s.url, "/v1/limit", { key: freshKey(), policy: "closed" }, { "tollgate-test-fault": fault });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.allowed, false);
    assert.equal(r.body.degraded, "unavailable");
    assert.equal(r.headers.get("tollgate-degraded"), `fail-closed;reason="${fault}"`);
    assert.equal(r.headers.get("retry-after"), "1");
  });
}

test("a fault changes no state", async () => {
  const key = freshKey();
  await post(s.url, "/v1/limit", { key, policy: "closed" }, { "tollgate-test-fault": "error" });
  const p = await post(s.url, "/v1/peek", { key, policy: "closed" });
  assert.equal(p.body.remaining, 4);
});

test("a blocked key is answered from the block cache, without the Durable Object", async () => {
  const key = freshKey();
  // All on the test clock, in one of the policy's clock-aligned minutes: on the real clock a
  // minute that ends between the hits would admit the sixth.
  const now = 1_700_000_000_000;
  for (let i = 0; i < 5; i++) assert.equal((await post(s.url, "/v1/limit", { key, policy: "closed", now })).body.allowed, true);
  const first = await post(s.url, "/v1/limit", { key, policy: "closed", now });
  assert.equal(first.body.allowed, false);
  assert.equal(first.headers.get("tollgate-cache"), null, "the first denial comes from the object");
  // The object would now fail (and fail closed with 503); a plain denial proves it was not called.
  const cached = await post(s.url, "/v1/limit", { key, policy: "closed", now }, { "tollgate-test-fault": "error" });
  assert.equal(cached.status, 200, cached.text);
  assert.equal(cached.headers.get("tollgate-cache"), "hit");
  assert.equal(cached.body.allowed, false);
  assert.ok(cached.body.retryAfter > 0 && cached.body.retryAfter <= first.body.retryAfter);
  assert.ok(Number(cached.headers.get("retry-after")) >= 1);
  // A reset through this isolate drops the cache entry.
  await fetch(`${s.url}/v1/keys/closed/${encodeURIComponent(key)}`, { method: "DELETE" });
  assert.equal((await post(s.url, "/v1/limit", { key, policy: "closed", now })).body.allowed, true);
});
