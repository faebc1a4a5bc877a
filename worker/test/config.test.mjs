// Configuration and switches: the test clock is off by default, a bad configuration is a
// JSON config_error, assets are served at / when no ORIGIN is set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, freshKey } from "./harness.mjs";

test("without TEST_MODE a request cannot carry now, and fault headers are ignored", async () => {
  const s = await start({ bindings: { TEST_MODE: undefined } });
  try {
    const h = await get(s.url, "/healthz");
    assert.equal(h.body.testMode, false);
    const r = await post(s.url, "/v1/limit", { key: freshKey(), policy: "login", now: 1 });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "test_mode_disabled");
    const f = await post(s.url, "/v1/limit", { key: freshKey(), policy: "closed" }, { "tollgate-test-fault": "error" });
    assert.equal(f.status, 200, f.text);
    assert.equal(f.headers.get("tollgate-degraded"), null);
    assert.equal((await get(s.url, "/v1/test/state/login/x")).status, 404);
  } finally {
    await s.stop();
  }
});

test("a bad configuration answers config_error on every route", async () => {
  const bad = { x: { limits: [{ name: "a", algorithm: "gcra", quota: "1/s" }], syncRate: 100 } };
  const s = await start({ bindings: { POLICIES: bad } });
  try {
    for (const r of [await get(s.url, "/healthz"), await post(s.url, "/v1/limit", { key: "k", policy: "x" })]) {
      assert.equal(r.status, 500);
      assert.equal(r.body.error.code, "config_error");
      assert.match(r.body.error.message, /mergeable/);
    }
  } finally {
    await s.stop();
  }
});

test("POLICIES may also be a JSON string (as `wrangler secret`/dashboard vars are)", async () => {
  const s = await start({
    bindings: { POLICIES: JSON.stringify({ p: { limits: [{ name: "a", algorithm: "fixed-window", quota: "1/m" }] } }) },
  });
  try {
    const key = freshKey();
    assert.equal((await post(s.url, "/v1/limit", { key, policy: "p" })).status, 200);
    assert.equal((await post(s.url, "/v1/limit", { key, policy: "p" })).status, 429);
  } finally {
    await s.stop();
  }
});

test("the playground is served as static assets at /", async () => {
  const s = await start({ assets: true });
  try {
    const r = await get(s.url, "/");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type"), /text\/html/);
    assert.match(r.text, /<html/i);
    assert.equal((await get(s.url, "/healthz")).status, 200);
  } finally {
    await s.stop();
  }
});

test("auth: with API_TOKEN, /v1 needs the bearer token; /healthz does not", async () => {
  const s = await start({ bindings: { API_TOKEN: "s3cret-token" } });
  try {
    const key = freshKey();
    for (const h of [{}, { authorization: "Bearer wrong" }, { authorization: "Bearer s3cret-toke" }, { authorization: "s3cret-token" }]) {
      const r = await post(s.url, "/v1/limit", { key, policy: "login" }, h);
      assert.equal(r.status, 401, JSON.stringify(h));
      assert.equal(r.body.error.code, "unauthorized");
      assert.match(r.headers.get("www-authenticate"), /^Bearer/);
    }
    assert.equal((await get(s.url, "/v1/policies")).status, 401);
    const ok = await post(s.url, "/v1/limit", { key, policy: "login" }, { authorization: "Bearer s3cret-token" });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.remaining, 4, "the rejected requests counted nothing");
    assert.equal((await get(s.url, "/healthz")).status, 200);
  } finally {
    await s.stop();
  }
});
