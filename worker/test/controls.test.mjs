// The operator controls in workerd: a policy's blockDuration (the core's penalty,
// kept in the key's Durable Object), allow and deny lists (keys on /v1/limit, the client
// address in proxy mode), and shadow mode, whose would-be denials equal what an enforcing
// policy denies on the same hits. Test clock (`now`) on /v1/limit: no real time is waited.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { start, post, get, request, freshKey, POLICIES } from "./harness.mjs";
import { WORKER_FIELDS, WORKER_FIELDS_ALWAYS, WORKER_LIMIT_FIELDS } from "../../pkg-template/lib/contract/contract.generated.js";

const T = 1_700_000_000_000;
const limit = { limits: [{ name: "per-second", algorithm: "fixed-window", limit: 2, window: "1s" }] };
const CONTROLLED = {
  ...POLICIES,
  penalized: { ...limit, blockDuration: "10s" },
  renewing: { ...limit, blockDuration: "10s", continueExceeding: true },
  doubling: { ...limit, blockDuration: "1s", exponentialBackoff: true, maxBlockDuration: "4s" },
  enforcing: limit,
  shadowed: { ...limit, shadow: true },
  listed: { ...limit, allowList: ["vip", "192.0.2.0/24"], denyList: ["bad", "2001:db8:dead::/48"] },
};

let s;
let origin;
let reached = 0;

before(async () => {
  origin = http.createServer((req, res) => {
    reached++;
    res.end("origin");
  });
  await new Promise((r) => origin.listen(0, "127.0.0.1", r));
  // The API with the test clock; proxy mode (beside which TEST_MODE is refused) in its own
  // Worker, started by the test that uses it.
  s = await start({ bindings: { POLICIES: CONTROLLED } });
});
after(async () => {
  await s?.stop();
  origin?.close();
});

const hit = (policy, key, now) => post(s.url, "/v1/limit", { policy, key, now });

test("blockDuration: the Durable Object blocks a denied key for the block, with headers covering it", async () => {
  const key = freshKey("pen");
  assert.equal((await hit("penalized", key, T)).body.allowed, true);
  assert.equal((await hit("penalized", key, T)).body.allowed, true);
  const denied = await hit("penalized", key, T);
  assert.equal(denied.status, 200, "a denial is an answer");
  assert.deepEqual([denied.body.allowed, denied.body.penalty, denied.body.retryAfter], [false, true, 10_000]);
  assert.equal(denied.headers.get("retry-after"), "10");
  for (const s2 of [2, 9]) {
    const d = await hit("penalized", key, T + s2 * 1000);
    assert.deepEqual([d.body.allowed, d.body.penalty, d.body.retryAfter], [false, true, (10 - s2) * 1000], "the windows reset; the block stands");
  }
  const back = await hit("penalized", key, T + 10_000);
  assert.deepEqual([back.body.allowed, back.body.remaining], [true, 1], "nothing was counted during the block");
  const described = (await get(s.url, "/v1/policies")).body;
  assert.equal(JSON.stringify(described).includes("\"blockDuration\":10000"), true);
});

test("continueExceeding and exponentialBackoff: the Durable Object renews or doubles a block with each denied hit, as the core and every store", async () => {
  const key = freshKey("renew");
  for (let i = 0; i < 2; i++) assert.equal((await hit("renewing", key, T)).body.allowed, true);
  for (const [at, wait] of [[0, 10_000], [5_000, 10_000], [9_000, 10_000]]) {
    const d = (await hit("renewing", key, T + at)).body;
    assert.deepEqual([d.allowed, d.penalty, d.retryAfter], [false, true, wait], `renewed at +${at} ms`);
  }
  const back = (await hit("renewing", key, T + 19_000)).body;
  assert.deepEqual([back.allowed, back.remaining], [true, 1], "nothing was counted during the block");
  const doubled = freshKey("double");
  for (let i = 0; i < 2; i++) assert.equal((await hit("doubling", doubled, T)).body.allowed, true);
  for (const [at, wait] of [[0, 1000], [500, 2000], [1000, 4000], [1500, 4000]]) {
    const d = (await hit("doubling", doubled, T + at)).body;
    assert.deepEqual([d.allowed, d.penalty, d.retryAfter], [false, true, wait], `doubled at +${at} ms, to the cap`);
  }
  assert.equal((await hit("doubling", doubled, T + 5500)).body.allowed, true);
});

test("blockDuration over several keys: the denial blocks each denied key in its object, and the block survives export and import", async () => {
  // Ahead of the real clock: export and import read a key's state at the real time, where it is live.
  const t = 1_900_000_000_000;
  const [a, b, c] = [freshKey("pa"), freshKey("pb"), freshKey("pc")];
  const both = async (now) => (await post(s.url, "/v1/limit", { policy: "penalized", keys: [a, b], now })).body;
  assert.equal((await both(t)).allowed, true);
  assert.equal((await both(t)).allowed, true);
  const denied = await both(t);
  assert.deepEqual([denied.allowed, denied.penalty, denied.retryAfter], [false, true, 10_000]);
  for (const key of [a, b]) {
    const d = (await hit("penalized", key, t + 2000)).body;
    assert.deepEqual([d.allowed, d.penalty, d.retryAfter], [false, true, 8000], "the window reset; the block stands");
  }
  const state = `/v1/keys/penalized/${encodeURIComponent(a)}/state`;
  const exported = (await get(s.url, state)).body.state;
  const body = JSON.stringify({ state: exported });
  const put = await request(s.url, state.replace(encodeURIComponent(a), encodeURIComponent(c)), { method: "PUT", headers: { "content-type": "application/json" }, body });
  assert.equal(put.status, 200);
  const d = (await hit("penalized", c, t + 3000)).body;
  assert.deepEqual([d.allowed, d.penalty, d.retryAfter], [false, true, 7000], "the imported state is blocked as the exported one");
});

test("shadow: never blocks, and its would-be denials are the enforcing policy's denials on the same hits", async () => {
  const keys = [freshKey("sh"), freshKey("sh")];
  let denied = 0;
  let wouldDeny = 0;
  for (let i = 0; i < 24; i++) {
    const key = keys[i % 2];
    const now = T + Math.floor(i / 3) * 400;
    const e = await hit("enforcing", key, now);
    const sh = await hit("shadowed", key, now);
    assert.equal(sh.body.allowed, true, "shadow mode never blocks");
    assert.equal(sh.body.shadow, true);
    assert.equal(sh.body.wouldAllow, e.body.allowed);
    assert.equal(sh.body.remaining, e.body.remaining);
    assert.equal(sh.headers.get("tollgate-shadow"), e.body.allowed ? "allow" : "deny");
    assert.equal(sh.headers.get("retry-after"), null);
    if (!e.body.allowed) denied++;
    if (!sh.body.wouldAllow) wouldDeny++;
  }
  assert.ok(denied > 0);
  assert.equal(wouldDeny, denied);
});

test("lists on /v1/limit: an allow-listed key is admitted uncounted, a deny-listed one denied, both with reason", async () => {
  for (let i = 0; i < 4; i++) {
    const r = await hit("listed", "vip", T);
    assert.deepEqual([r.body.allowed, r.body.reason], [true, "allowList"]);
    assert.equal(r.headers.get("ratelimit"), null);
  }
  const bad = await hit("listed", "bad", T);
  assert.deepEqual([bad.status, bad.body.allowed, bad.body.reason], [200, false, "denyList"]);
  const other = freshKey("plain");
  await hit("listed", other, T);
  await hit("listed", other, T);
  const third = await hit("listed", other, T);
  assert.deepEqual([third.body.allowed, third.body.reason], [false, undefined]);
});

test("lists in proxy mode match the client address: denied 403 without reaching the origin, allowed through uncounted", async () => {
  const p = await start({
    bindings: { POLICIES: CONTROLLED, ORIGIN: `http://127.0.0.1:${origin.address().port}`, PROXY: { policy: "listed" } },
  });
  try {
    const before = reached;
    const denied = await get(p.url, "/x", { headers: { "cf-connecting-ip": "2001:db8:dead:1::9" } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.reason, "denyList");
    assert.equal(reached, before, "the origin never saw it");
    for (let i = 0; i < 4; i++) {
      const r = await get(p.url, "/x", { headers: { "cf-connecting-ip": "192.0.2.77" } });
      assert.equal(r.status, 200);
    }
    assert.equal(reached, before + 4);
  } finally {
    await p.stop();
  }
});

test("a bad list entry or shadow value is a config error naming its field", async () => {
  const bad = await start({ bindings: { POLICIES: { p: { ...limit, denyList: ["10.0.0.0/33"] } } } });
  try {
    const r = await post(bad.url, "/v1/limit", { policy: "p", key: "k" });
    assert.equal(r.body.error.code, "config_error");
    assert.match(r.body.error.message, /denyList\[0\]/);
  } finally {
    await bad.stop();
  }
});

test("every answer's JSON is the core's: its fields are tollgate::answer::WORKER_FIELDS, in that order", async () => {
  const seen = new Set();
  const check = (r) => {
    const fields = Object.keys(r.body);
    assert.deepEqual(fields.slice(0, WORKER_FIELDS_ALWAYS), WORKER_FIELDS.slice(0, WORKER_FIELDS_ALWAYS), r.text);
    const at = fields.map((f) => WORKER_FIELDS.indexOf(f));
    assert.ok(at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1])), r.text);
    for (const f of fields) seen.add(f);
    return r;
  };
  for (const policy of ["enforcing", "penalized", "shadowed"]) {
    const key = freshKey("wire");
    for (let i = 0; i < 3; i++) check(await post(s.url, "/v1/limit", { key, policy, now: T }));
  }
  for (const key of ["vip", "bad"]) check(await post(s.url, "/v1/limit", { key, policy: "listed", now: T }));
  const several = check(await post(s.url, "/v1/limit", { keys: [freshKey("wire"), freshKey("wire")], policy: "enforcing", now: T }));
  for (const pair of several.body.limits) assert.deepEqual(Object.keys(pair), WORKER_LIMIT_FIELDS);
  check(await post(s.url, "/v1/limit", { key: freshKey("wire"), policy: "closed" }, { "tollgate-test-fault": "error" }));
  assert.deepEqual([...seen].sort(), [...WORKER_FIELDS].sort(), "together, every field the core lists");
});
