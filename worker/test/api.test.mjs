// Every endpoint and every error of the HTTP API, against the Worker in workerd (Miniflare).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { parseList } from "structured-headers";
import { start, post, get, freshKey } from "./harness.mjs";

let s;
before(async () => {
  s = await start();
});
after(async () => {
  await s?.stop();
});

const limit = (body, h) => post(s.url, "/v1/limit", body, h);
const T0 = 1_800_000_000_000; // a fixed test clock (ms), TEST_MODE is on here

function assertErr(r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.headers.get("content-type"), "application/json");
  assert.equal(r.body.error.code, code, r.text);
  assert.equal(typeof r.body.error.message, "string");
  assert.ok(r.body.error.message.length > 0);
}

test("healthz and policies", async () => {
  const h = await get(s.url, "/healthz");
  assert.equal(h.status, 200);
  assert.deepEqual(h.body, { ok: true }, "liveness only: the configuration is behind auth");
  const p = await get(s.url, "/v1/policies");
  assert.equal(p.status, 200);
  assert.deepEqual(p.body.policies.api.limits[0], {
    name: "per-second",
    algorithm: "token-bucket",
    limit: 100,
    windowMs: 1000,
    burst: 500,
    reconfigure: "tokens used stay used: the new capacity minus what was used, at least 0",
  });
  assert.match(p.body.policies.api.reconfigure, /algorithm changes.*starts fresh/);
  assert.equal(p.body.policies.login.limits.length, 2);
  assert.equal(p.body.policies.api.syncRate, 0);
});

test("allowed then denied: body shape, draft-10 headers as Structured Field Lists, Retry-After", async () => {
  const key = freshKey("user");
  for (let i = 0; i < 5; i++) {
    const r = await limit({ key, policy: "login", cost: 1, now: T0 });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ["allowed", "blockedBy", "estimate", "limit", "limitName", "policy", "remaining", "resetAt", "retryAfter"]);
    assert.equal(r.body.allowed, true);
    assert.equal(r.body.limit, 5);
    assert.equal(r.body.remaining, 4 - i);
    assert.equal(r.body.retryAfter, 0);
    assert.equal(r.body.policy, "login");
    assert.equal(r.headers.get("retry-after"), null);
    const policy = parseList(r.headers.get("ratelimit-policy"));
    assert.deepEqual(policy.map(([name, params]) => [name, params.get("q"), params.get("w")]), [
      ["per-minute", 5, 60],
      ["per-hour", 20, 3600],
    ]);
    const rl = parseList(r.headers.get("ratelimit"));
    assert.equal(rl.length, 2);
    assert.equal(rl[0][0], "per-minute");
    assert.equal(rl[0][1].get("r"), 4 - i);
    assert.ok(Number.isInteger(rl[0][1].get("t")));
    assert.equal(r.headers.get("x-ratelimit-limit"), "5");
  }
  const denied = await limit({ key, policy: "login", now: T0 + 1000 });
  assert.equal(denied.status, 200, "a denial is an answer, not an error: " + denied.text);
  assert.equal(denied.body.allowed, false);
  assert.equal(denied.body.remaining, 0);
  assert.equal(denied.body.blockedBy, "per-minute");
  assert.ok(denied.body.retryAfter > 0);
  assert.ok(denied.body.resetAt > T0);
  const retry = Number(denied.headers.get("retry-after"));
  assert.ok(Number.isInteger(retry) && retry >= 1);
  assert.equal(retry, Math.ceil(denied.body.retryAfter / 1000));
  assert.equal(parseList(denied.headers.get("ratelimit"))[0][1].get("r"), 0);
  parseList(denied.headers.get("ratelimit-policy"));
});

test("the token bucket of the issue: 100/s with bursts of 500", async () => {
  const key = freshKey();
  let r = await limit({ key, policy: "api", cost: 500, now: T0 });
  assert.equal(r.status, 200);
  assert.equal(r.body.remaining, 0);
  r = await limit({ key, policy: "api", now: T0 });
  assert.equal(r.body.allowed, false);
  assert.equal(r.body.retryAfter, 10); // one token every 10 ms
  r = await limit({ key, policy: "api", now: T0 + 10 });
  assert.equal(r.body.allowed, true);
});

test("one meaning of limit and remaining: the JSON's limit is X-RateLimit-Limit, and remaining is never above it (100/s, burst 500)", async () => {
  const key = freshKey();
  const r = await limit({ key, policy: "api", now: T0 });
  assert.equal(r.status, 200);
  assert.deepEqual([r.body.limit, r.body.remaining], [500, 499]);
  assert.deepEqual([r.headers.get("x-ratelimit-limit"), r.headers.get("x-ratelimit-remaining")], ["500", "499"]);
});

test("peek answers the same and consumes nothing; refund gives back; reset forgets", async () => {
  const key = freshKey();
  await limit({ key, policy: "login", cost: 3, now: T0 });
  const p1 = await post(s.url, "/v1/peek", { key, policy: "login", now: T0 });
  const p2 = await post(s.url, "/v1/peek", { key, policy: "login", now: T0 });
  assert.equal(p1.status, 200);
  assert.deepEqual(p1.body, p2.body);
  assert.equal(p1.body.remaining, 1);
  const big = await post(s.url, "/v1/peek", { key, policy: "login", cost: 3, now: T0 });
  assert.equal(big.status, 200);
  assert.equal(big.body.allowed, false);
  const ref = await post(s.url, "/v1/refund", { key, policy: "login", cost: 2, now: T0 });
  assert.equal(ref.status, 200, ref.text);
  assert.equal(ref.body.refunded, 2);
  assert.equal(ref.body.remaining, 3);
  const del = await fetch(`${s.url}/v1/keys/login/${encodeURIComponent(key)}`, { method: "DELETE" });
  assert.equal(del.status, 200);
  assert.deepEqual(await del.json(), { reset: true, policy: "login", key });
  const after = await post(s.url, "/v1/peek", { key, policy: "login", now: T0 });
  assert.equal(after.body.remaining, 4);
});

test("keys may hold slashes and any UTF-8 up to 256 bytes", async () => {
  const key = "tenant/é/" + "x".repeat(256 - "tenant/é/".length - 1);
  assert.equal(Buffer.byteLength(key), 256);
  const r = await limit({ key, policy: "login", now: T0 });
  assert.equal(r.status, 200, r.text);
  const del = await fetch(`${s.url}/v1/keys/login/${encodeURIComponent(key)}`, { method: "DELETE" });
  assert.equal(del.status, 200);
});

test("every bad request is a JSON error and changes nothing", async () => {
  const key = freshKey();
  const cases = [
    ["nope", 400, "invalid_json"],
    ["[1,2]", 400, "invalid_body"],
    [{ key, policy: "login", extra: true }, 400, "unknown_field"],
    [{ policy: "login" }, 400, "missing_key"],
    [{ key: "", policy: "login" }, 400, "missing_key"],
    [{ key: 42, policy: "login" }, 400, "invalid_type"],
    [{ key: "x".repeat(257), policy: "login" }, 400, "key_too_long"],
    [{ key }, 400, "missing_policy"],
    [{ key, policy: "nope" }, 400, "unknown_policy"],
    [{ key, policy: "login", cost: 0 }, 400, "invalid_cost"],
    [{ key, policy: "login", cost: -1 }, 400, "invalid_cost"],
    [{ key, policy: "login", cost: 1.5 }, 400, "invalid_cost"],
    [{ key, policy: "login", cost: "1" }, 400, "invalid_cost"],
    [{ key, policy: "login", cost: 6 }, 400, "invalid_cost"],
    [{ key, policy: "login", now: -1 }, 400, "invalid_now"],
    [JSON.stringify({ key, policy: "login", pad: "x".repeat(9000) }), 413, "body_too_large"],
  ];
  for (const [body, status, code] of cases) {
    for (const route of ["/v1/limit", "/v1/peek", "/v1/refund"]) {
      assertErr(await post(s.url, route, body), status, code);
    }
  }
  const untouched = await post(s.url, "/v1/peek", { key, policy: "login", now: T0 });
  assert.equal(untouched.body.remaining, 4, "no bad request counted");
  assertErr(await get(s.url, "/v1/limit"), 405, "method_not_allowed");
  assert.equal((await get(s.url, "/v1/limit")).headers.get("allow"), "POST");
  assertErr(await post(s.url, "/v1/policies", {}), 405, "method_not_allowed");
  assertErr(await get(s.url, "/v1/keys/login/x"), 405, "method_not_allowed");
  assertErr(await get(s.url, "/v1/nothing"), 404, "not_found");
  assertErr(await get(s.url, "/v1"), 404, "not_found");
  assertErr(await post(s.url, "/healthz", {}), 405, "method_not_allowed");
  const del = async (p) => {
    const r = await fetch(s.url + p, { method: "DELETE" });
    return { status: r.status, headers: r.headers, body: await r.json(), text: "" };
  };
  assertErr(await del("/v1/keys/nope/x"), 400, "unknown_policy");
  assertErr(await del("/v1/keys/login"), 400, "missing_key");
  assertErr(await del("/v1/keys/login/"), 400, "missing_key");
  assertErr(await del("/v1/keys/login/%zz"), 400, "invalid_path");
});

test("the alarm deletes a key's state once its longest window (and the grace period) has passed", async () => {
  const key = freshKey();
  const r = await limit({ key, policy: "short" });
  assert.equal(r.status, 200);
  const stored = await get(s.url, `/v1/test/state/short/${encodeURIComponent(key)}`);
  assert.equal(stored.body.state, 1, stored.text);
  // The window (1 s) plus the grace period before the storage goes (DEADLINE_GRACE_MS, 1 s).
  assert.ok(stored.body.alarm > Date.now() && stored.body.alarm <= Date.now() + 2000, stored.text);
  let gone;
  for (let i = 0; i < 40; i++) {
    await new Promise((res) => setTimeout(res, 100));
    gone = await get(s.url, `/v1/test/state/short/${encodeURIComponent(key)}`);
    if (gone.body.state === 0) break;
  }
  assert.deepEqual(gone.body, { state: 0, central: 0, alarm: null, counts: [] });
});

test("a GCRA key with the test clock: exactly the burst, then one per emission interval", async () => {
  const key = freshKey();
  const answers = [];
  for (let i = 0; i < 11; i++) answers.push((await limit({ key, policy: "gcra", now: T0 })).body.allowed);
  assert.deepEqual(answers, [...Array(10).fill(true), false]);
  assert.equal((await limit({ key, policy: "gcra", now: T0 + 99 })).body.allowed, false);
  assert.equal((await limit({ key, policy: "gcra", now: T0 + 100 })).body.allowed, true);
});

test("a denial is 200 by default; ?status=429 or the policy's statusCode keeps 429, with the same body and headers", async () => {
  const key = freshKey("status");
  await limit({ key, policy: "login", cost: 5, now: T0 });
  const plain = await limit({ key, policy: "login", now: T0 });
  const asked = await post(s.url, "/v1/limit?status=429", { key, policy: "login", now: T0 });
  const peeked = await post(s.url, "/v1/peek?status=429", { key, policy: "login", now: T0 });
  assert.deepEqual([plain.status, asked.status, peeked.status], [200, 429, 429]);
  for (const r of [plain, asked, peeked]) {
    assert.equal(r.body.allowed, false);
    assert.ok(Number(r.headers.get("retry-after")) >= 1, "Retry-After with the 200 too");
    assert.equal(parseList(r.headers.get("ratelimit"))[0][1].get("r"), 0);
  }
  // The second denial may come from the isolate's blocked-key cache ("estimate": true); the
  // decision is the same.
  const { estimate: e1, ...plainDecision } = plain.body;
  const { estimate: e2, ...askedDecision } = asked.body;
  assert.deepEqual(plainDecision, askedDecision);
  // An allowed hit is 200 whatever the parameter asks for denials.
  const other = await post(s.url, "/v1/limit?status=429", { key: freshKey(), policy: "login", now: T0 });
  assert.equal(other.status, 200);
  assertErr(await post(s.url, "/v1/limit?status=418", { key, policy: "login", now: T0 }), 400, "invalid_status");
});

test("a policy with statusCode = 429 denies with 429 unless the request asks ?status=200", async () => {
  const strict = { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "1/m" }], statusCode: 429 };
  const w = await start({ bindings: { POLICIES: { strict } } });
  try {
    const key = freshKey();
    // The test clock: on the real one, a minute that ends between the two hits admits both.
    assert.equal((await post(w.url, "/v1/limit", { key, policy: "strict", now: T0 })).status, 200);
    const denied = await post(w.url, "/v1/limit", { key, policy: "strict", now: T0 });
    assert.equal(denied.status, 429);
    assert.equal(denied.body.allowed, false);
    const asked = await post(w.url, "/v1/limit?status=200", { key, policy: "strict", now: T0 });
    assert.deepEqual([asked.status, asked.body.allowed], [200, false]);
    assert.equal((await get(w.url, "/v1/policies")).body.policies.strict.statusCode, 429);
  } finally {
    await w.stop();
  }
});
