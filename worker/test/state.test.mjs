// A key's state out and in: GET/PUT /v1/keys/{policy}/{key}/state (state_api.rs), and refund
// and reset in the synced modes. Test clock fixed (TEST_MODE), so decisions compare exactly.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, del, request, freshKey, POLICIES } from "./harness.mjs";

const NOW = 1_800_000_000_000;
// A fixed window of 5 per hour whose window began 30 minutes before NOW's hour mark does not
// matter here: NOW never moves.
const synced = (sync) => ({ limits: [{ name: "per-hour", algorithm: "fixed-window", limit: 5, window: "1h" }], syncRate: sync });
let s;

before(async () => {
  s = await start({ bindings: { POLICIES: { ...POLICIES, synced: synced(100), local: synced(-1) } } });
});
after(async () => {
  await s?.stop();
});

const path = (policy, key) => `/v1/keys/${policy}/${encodeURIComponent(key)}/state`;
const exportState = (policy, key) => get(s.url, path(policy, key));
const importState = (policy, key, body) =>
  request(s.url, path(policy, key), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const hit = (policy, key, now = NOW, cost = 1) => post(s.url, "/v1/limit", { policy, key, now, cost });

test("export from one key, import into another: the same decisions after, for every hit", async () => {
  const a = freshKey("src");
  const b = freshKey("dst");
  assert.deepEqual((await exportState("login", a)).body, { policy: "login", key: a, state: null });
  for (let i = 0; i < 3; i++) assert.equal((await hit("login", a)).body.allowed, true);
  const out = await exportState("login", a);
  assert.equal(out.status, 200);
  assert.equal(typeof out.body.state, "string");
  const put = await importState("login", b, { state: out.body.state });
  assert.equal(put.status, 200);
  assert.deepEqual(put.body, { policy: "login", key: b, imported: true });
  assert.equal((await exportState("login", b)).body.state, out.body.state);
  // Later hits, some denied (5 a minute), decide identically on both keys.
  for (const dt of [0, 0, 1000, 20_000, 61_000, 61_000, 62_000]) {
    const [ra, rb] = [await hit("login", a, NOW + dt), await hit("login", b, NOW + dt)];
    const { policy: _a, ...da } = ra.body;
    const { policy: _b, ...db } = rb.body;
    assert.deepEqual(db, da, `at +${dt} ms`);
    assert.equal(rb.headers.get("ratelimit"), ra.headers.get("ratelimit"));
  }
  // null imports a fresh key.
  assert.equal((await importState("login", b, { state: null })).status, 200);
  assert.equal((await exportState("login", b)).body.state, null);
});

test("bad base64, bytes that are no state, another policy's state: 400 invalid_state on field state, nothing changed", async () => {
  const k = freshKey("keep");
  await hit("login", k);
  const before = (await exportState("login", k)).body.state;
  const other = freshKey("gcra");
  await hit("gcra", other);
  const gcraState = (await exportState("gcra", other)).body.state;
  const cases = [
    [{ state: "%%% not base64" }, "invalid_state"],
    [{ state: Buffer.from([1, 2, 3]).toString("base64") }, "invalid_state"],
    [{ state: gcraState }, "invalid_state"],
    [{ state: 7 }, "invalid_type"],
    [{}, "missing_field"],
    [{ state: null, sate: 1 }, "unknown_field"],
  ];
  for (const [body, code] of cases) {
    const r = await importState("login", k, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.code, code, JSON.stringify(body));
    assert.equal(r.body.error.field, code === "unknown_field" ? "sate" : "state");
    assert.equal((await exportState("login", k)).body.state, before, "state unchanged");
  }
  assert.equal((await importState("login", k, "nope")).body.error.code, "invalid_json");
  assert.equal((await exportState("nope", k)).body.error.code, "unknown_policy");
  assert.equal((await exportState("synced", k)).body.error.code, "unsupported_in_sync_mode");
  assert.equal((await request(s.url, path("login", k), { method: "POST" })).status, 405);
});

test("keys holding / : the key is everything between the policy and /state, and DELETE still resets", async () => {
  const k = `${freshKey("slash")}/x/state`;
  await hit("login", k);
  const escaped = await exportState("login", k);
  const raw = await get(s.url, `/v1/keys/login/${k}/state`);
  assert.equal(raw.body.key, k);
  assert.equal(raw.body.state, escaped.body.state);
  assert.notEqual(raw.body.state, null);
  assert.equal((await del(s.url, `/v1/keys/login/${k}`)).status, 200);
  assert.equal((await exportState("login", k)).body.state, null);
});

test("the state routes are behind the token like all of /v1", async () => {
  const locked = await start({ bindings: { PUBLIC: undefined, API_TOKEN: "s3cret" } });
  try {
    assert.equal((await get(locked.url, path("login", "k"))).status, 401);
    const ok = await get(locked.url, path("login", "k"), { headers: { authorization: "Bearer s3cret" } });
    assert.equal(ok.status, 200);
  } finally {
    await locked.stop();
  }
});

for (const policy of ["synced", "local"]) {
  test(`${policy} mode: refund gives units back in the isolate and reset forgets the key`, async () => {
    const k = freshKey(policy);
    for (let i = 0; i < 5; i++) assert.equal((await hit(policy, k)).body.allowed, true);
    assert.equal((await hit(policy, k)).body.allowed, false);
    const r = await post(s.url, "/v1/refund", { policy, key: k, now: NOW, cost: 2 });
    assert.equal(r.status, 200);
    assert.equal(r.body.refunded, 2);
    assert.equal(r.body.allowed, true);
    assert.equal(r.body.estimate, true);
    assert.equal(r.body.limits, undefined);
    assert.equal((await hit(policy, k)).body.allowed, true);
    assert.equal((await hit(policy, k)).body.allowed, true);
    assert.equal((await hit(policy, k)).body.allowed, false, "exactly the two refunded");
    assert.equal((await del(s.url, `/v1/keys/${policy}/${encodeURIComponent(k)}`)).status, 200);
    assert.equal((await hit(policy, k)).body.allowed, true, "reset: fresh");
  });
}

test("synced mode: several keys all or nothing in the isolate", async () => {
  const [a, b] = [freshKey("sa"), freshKey("sb")];
  for (let i = 0; i < 5; i++) await hit("synced", b);
  const r = await post(s.url, "/v1/limit", { policy: "synced", keys: [a, b], now: NOW });
  assert.equal(r.body.allowed, false);
  assert.equal(r.body.estimate, true);
  const pa = await post(s.url, "/v1/peek", { policy: "synced", key: a, now: NOW });
  assert.equal(pa.body.remaining, 4, "a was not charged");
});
