// Leased mode's other routes (leased_mode.rs, state_api.rs, api.rs) in two isolates sharing
// the Durable Object namespace: `/v1/peek` answers what a hit would get (the isolate's slice
// when it holds enough, else what the key's object could still grant) and takes no grant;
// a key's state is neither exported nor imported (`unsupported_in_leased_mode`); refund
// gives units back to the isolate's slice and reset clears the key's ledger.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, del, request, freshKey } from "./harness.mjs";

const LIMIT = 3;
// The test clock: 30 minutes into an hour, so no window boundary is crossed.
const NOW = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 7_200_000 + 1_800_000;
const POLICIES = {
  leased: { limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h" }], leaseTtl: "1m", timeoutMs: 20_000 },
};

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

const hit = (route, key, host, extra = {}) => post(s.url, route, { policy: "leased", key, now: NOW, ...extra }, { host });

test("peek answers what a hit would get and takes no grant", async () => {
  const key = freshKey("peek");
  // No slice anywhere: the object's ledger has the whole window left.
  for (let i = 0; i < 3; i++) {
    const p = await hit("/v1/peek", key, "w1.test", { cost: LIMIT });
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.allowed, true, p.text);
    assert.equal(p.body.remaining, LIMIT, p.text);
    assert.equal(p.body.estimate, true, p.text);
  }
  // The peeks took nothing: the other isolate gets the whole window in one hit.
  const h = await hit("/v1/limit", key, "w0.test", { cost: LIMIT });
  assert.equal(h.body.allowed, true, h.text);
  // Nothing is left anywhere: a peek from either isolate is denied, and so is a hit.
  for (const host of ["w0.test", "w1.test"]) {
    const p = await hit("/v1/peek", key, host);
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.allowed, false, `${host}: ${p.text}`);
    assert.equal(p.body.remaining, 0, `${host}: ${p.text}`);
  }
  assert.equal((await hit("/v1/limit", key, "w1.test")).body.allowed, false);
});

test("peek counts the isolate's own slice beside what the object has left", async () => {
  const key = freshKey("peek-slice");
  // w0 takes a slice by a hit of 1 (it asks for twice its demand: 2) and keeps what is left of it.
  assert.equal((await hit("/v1/limit", key, "w0.test")).body.allowed, true);
  // Its slice (1) covers a peek of 1; a peek of 2 adds what the window has not granted (1).
  for (const cost of [1, LIMIT - 1]) {
    const p = await hit("/v1/peek", key, "w0.test", { cost });
    assert.equal(p.body.allowed, true, p.text);
    assert.equal(p.body.remaining, LIMIT - 1, p.text);
    assert.equal(p.body.estimate, true, p.text);
  }
  // The other isolate has no slice: only the ungranted unit is its to get.
  const other = await hit("/v1/peek", key, "w1.test", { cost: LIMIT - 1 });
  assert.equal(other.body.allowed, false, other.text);
  assert.equal(other.body.remaining, 1, other.text);
  assert.equal((await hit("/v1/limit", key, "w0.test", { cost: LIMIT - 1 })).body.allowed, true);
});

test("a key's state is neither exported nor imported on a leased policy", async () => {
  const key = freshKey("state");
  const path = `/v1/keys/leased/${encodeURIComponent(key)}/state`;
  const out = await get(s.url, path, { headers: { host: "w0.test" } });
  assert.equal(out.status, 400, out.text);
  assert.equal(out.body.error.code, "unsupported_in_leased_mode", out.text);
  const put = await request(s.url, path, {
    method: "PUT",
    headers: { "content-type": "application/json", host: "w0.test" },
    body: JSON.stringify({ state: null }),
  });
  assert.equal(put.status, 400, put.text);
  assert.equal(put.body.error.code, "unsupported_in_leased_mode", put.text);
});

test("refund gives back to the isolate's slice; reset clears the key's ledger", async () => {
  const key = freshKey("refund");
  assert.equal((await hit("/v1/limit", key, "w0.test", { cost: 2 })).body.allowed, true);
  // One unit is left in the window: a hit of 2 is denied, unless one is refunded first.
  const r = await hit("/v1/refund", key, "w0.test", { cost: 1 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.refunded, 1, r.text);
  assert.equal((await hit("/v1/limit", key, "w0.test", { cost: 2 })).body.allowed, true);
  assert.equal((await hit("/v1/limit", key, "w1.test")).body.allowed, false);
  // A reset clears the ledger and this isolate's slice: it gets the whole window again.
  const d = await del(s.url, `/v1/keys/leased/${encodeURIComponent(key)}`, { host: "w0.test" });
  assert.equal(d.status, 200, d.text);
  assert.equal((await hit("/v1/limit", key, "w0.test", { cost: LIMIT })).body.allowed, true);
});
