// Configuration and switches: secure by default (no token and no PUBLIC: /v1 serves nothing),
// the test clock is off by default and absent from the production build, TEST_MODE is refused
// beside ORIGIN or API_TOKEN (and in the production build), a bad configuration is a JSON
// config_error, assets are served at / when no ORIGIN is set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, request, freshKey, PRODUCTION_BUILD } from "./harness.mjs";

test("without TEST_MODE a request cannot carry now, and fault headers are ignored", async () => {
  const s = await start({ bindings: { TEST_MODE: undefined } });
  try {
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

test("the production build has no test hooks: now is refused, fault headers and /v1/test/ do nothing", async () => {
  const s = await start({ script: PRODUCTION_BUILD, bindings: { TEST_MODE: undefined } });
  try {
    const r = await post(s.url, "/v1/limit", { key: freshKey(), policy: "login", now: 1 });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "test_mode_disabled");
    const f = await post(s.url, "/v1/limit", { key: freshKey(), policy: "closed" }, { "tollgate-test-fault": "error" });
    assert.equal(f.status, 200, f.text);
    assert.equal(f.headers.get("tollgate-degraded"), null);
    for (const route of ["/v1/test/state/login/x", "/v1/test/pools/ingest"]) assert.equal((await get(s.url, route)).status, 404, route);
    assert.equal((await post(s.url, "/v1/test/lease/login/x", { lockOp: "lock" })).status, 404);
  } finally {
    await s.stop();
  }
});

test("TEST_MODE is refused at start beside ORIGIN or API_TOKEN, and in the production build", async () => {
  const cases = [
    [{ TEST_MODE: "on", ORIGIN: "http://127.0.0.1:9", PROXY: { policy: "login" } }, undefined, /TEST_MODE is on beside ORIGIN/],
    [{ TEST_MODE: "on", API_TOKEN: "t0ken" }, undefined, /TEST_MODE is on beside API_TOKEN/],
    [{ TEST_MODE: "on" }, PRODUCTION_BUILD, /production build, which has no test hooks/],
  ];
  for (const [bindings, script, reason] of cases) {
    const s = await start({ bindings, script });
    try {
      for (const r of [await get(s.url, "/healthz"), await post(s.url, "/v1/limit", { key: "k", policy: "login", now: 1 }), await get(s.url, "/x")]) {
        assert.equal(r.status, 500, r.text);
        assert.equal(r.body.error.code, "config_error");
        assert.match(r.body.error.message, reason);
      }
    } finally {
      await s.stop();
    }
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
    assert.equal((await post(s.url, "/v1/limit", { key, policy: "p" })).body.allowed, true);
    assert.equal((await post(s.url, "/v1/limit", { key, policy: "p" })).body.allowed, false);
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

test("secure by default: without API_TOKEN and PUBLIC, /v1 serves nothing and says what to set", async () => {
  const s = await start({ bindings: { PUBLIC: undefined } });
  try {
    const key = freshKey();
    const routes = [
      ["POST", "/v1/limit", { key, policy: "login" }],
      ["POST", "/v1/peek", { key, policy: "login" }],
      ["GET", "/v1/policies"],
      ["GET", "/v1/pools"],
      ["GET", "/v1/pools/ingest"],
      ["DELETE", `/v1/keys/login/${key}`],
    ];
    for (const [method, route, body] of routes) {
      const r = method === "POST" ? await post(s.url, route, body) : await request(s.url, route, { method });
      assert.equal(r.status, 503, `${method} ${route}: ${r.text}`);
      assert.equal(r.body.error.code, "auth_not_configured");
      assert.match(r.body.error.message, /API_TOKEN/);
      assert.match(r.body.error.message, /PUBLIC/);
    }
    // A bearer token sent to an API that has none opens nothing either.
    const guessed = await post(s.url, "/v1/limit", { key, policy: "login" }, { authorization: "Bearer guess" });
    assert.equal(guessed.status, 503);
    const h = await get(s.url, "/healthz");
    assert.equal(h.status, 200);
    assert.deepEqual(h.body, { ok: true }, "liveness only: no policy list");
  } finally {
    await s.stop();
  }
});

test("PUBLIC opens /v1 only when it says true; a set API_TOKEN applies even then", async () => {
  for (const [PUBLIC, status] of [["false", 503], ["", 503], ["true", 200]]) {
    const s = await start({ bindings: { PUBLIC } });
    try {
      assert.equal((await get(s.url, "/v1/policies")).status, status, `PUBLIC=${JSON.stringify(PUBLIC)}`);
    } finally {
      await s.stop();
    }
  }
  const s = await start({ bindings: { PUBLIC: "true", API_TOKEN: "t0ken" } });
  try {
    assert.equal((await get(s.url, "/v1/policies")).status, 401);
    assert.equal((await get(s.url, "/v1/policies", { headers: { authorization: "Bearer t0ken" } })).status, 200);
  } finally {
    await s.stop();
  }
});

test("auth: with API_TOKEN, /v1 needs the bearer token; /healthz does not", async () => {
  const s = await start({ bindings: { API_TOKEN: "s3cret-token", PUBLIC: undefined } });
  try {
    const key = freshKey();
    for (const h of [{}, { authorization: "Bearer wrong" }, { authorization: "Bearer s3cret-toke" }, { authorization: "s3cret-token" }]) {
      const r = await post(s.url, "/v1/limit", { key, policy: "login" }, h);
      assert.equal(r.status, 401, JSON.stringify(h));
      assert.equal(r.body.error.code, "unauthorized");
      assert.match(r.headers.get("www-authenticate"), /^Bearer/);
      assert.doesNotMatch(r.text, /s3cret/, "an error never echoes the secret");
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
