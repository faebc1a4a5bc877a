// Sync modes with two isolates (two Miniflare workers sharing the Durable Object namespace):
// sync > 0 decides in each isolate and converges through the key's object; sync < 0 never
// leaves the isolate; sync = 0 is exact (also covered by concurrency.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, del, freshKey, sleep } from "./harness.mjs";

// A fixed window of 10 per hour whose current window began 30 minutes ago, so no boundary
// falls inside the test.
const offsetMs = (((Date.now() - 1_800_000) % 3_600_000) + 3_600_000) % 3_600_000;
const limit = (sync) => ({
  limits: [{ name: "per-hour", algorithm: "fixed-window", limit: 10, window: "1h", offset: `${offsetMs}ms` }],
  syncRate: sync,
});

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POLICIES: { synced: limit(100), local: limit(-1), exact: limit(0) } } });
});
after(async () => {
  await s?.stop();
});

/** Polls `check` every 50 ms until it returns a truthy value (10 s at most). */
async function until(what, check) {
  for (const end = Date.now() + 10_000; ; await sleep(50)) {
    const v = await check();
    if (v) return v;
    assert.ok(Date.now() < end, `never saw ${what}`);
  }
}

const hit = (w, policy, key) => post(s.url, "/v1/limit", { key, policy }, { host: `w${w}.test` });
const inspect = (policy, key) => get(s.url, `/v1/test/state/${policy}/${encodeURIComponent(key)}`, { headers: { host: "w0.test" } });

test("sync = 100 ms: isolates decide locally and converge through the key's Durable Object", async () => {
  const key = freshKey("sync");
  for (let i = 0; i < 7; i++) assert.equal((await hit(0, "synced", key)).body.allowed, true);
  await sleep(250);
  assert.equal((await hit(0, "synced", key)).body.allowed, true); // 8th: starts a round pushing the rest
  // The round ends when it ends (a loaded machine's object may answer after any fixed sleep):
  // polled, with a bound only for a round that never ends.
  const stored = await until("the round to reach the key's object", async () => {
    const r = await inspect("synced", key);
    return r.body.central === 1 && r;
  });
  assert.equal(stored.body.central, 1, "merged counts live in the key's object");
  assert.equal(stored.body.state, 0);
  // Isolate 1 knows nothing yet: its first hit is allowed and starts its first round.
  assert.equal((await hit(1, "synced", key)).body.allowed, true);
  // Its round has ended once its peek (which counts nothing) sees the 9 merged: one unit left.
  await until("isolate 1's round", async () => {
    const p = (await post(s.url, "/v1/peek", { key, policy: "synced" }, { host: "w1.test" })).body;
    return p.allowed && p.remaining === 0;
  });
  // Now it decides from 9 merged: exactly one more fits.
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push((await hit(1, "synced", key)).body.allowed);
  assert.deepEqual(answers, [true, false, false]);
  const peek = await post(s.url, "/v1/peek", { key, policy: "synced" }, { host: "w1.test" });
  assert.equal(peek.body.allowed, false);
  assert.equal(peek.body.remaining, 0);
});

test("sync < 0: local only, each isolate admits the whole limit and nothing is stored", async () => {
  const key = freshKey("local");
  let allowed = 0;
  for (let i = 0; i < 12; i++) for (const w of [0, 1]) allowed += (await hit(w, "local", key)).body.allowed ? 1 : 0;
  assert.equal(allowed, 20);
  const stored = await inspect("local", key);
  assert.deepEqual(stored.body, { state: 0, central: 0, alarm: null, counts: [] });
});

test("sync = 0 through two isolates is exact", async () => {
  const key = freshKey("exact");
  let allowed = 0;
  for (let i = 0; i < 12; i++) for (const w of [0, 1]) allowed += (await hit(w, "exact", key)).body.allowed ? 1 : 0;
  assert.equal(allowed, 10);
});

test("refund and reset work in every mode (refund's guarantee in sync mode: state.test.mjs)", async () => {
  const key = freshKey("refund");
  const r = await post(s.url, "/v1/refund", { key, policy: "synced" }, { host: "w0.test" });
  assert.equal(r.status, 200);
  assert.equal(r.body.refunded, 1);
  assert.equal(r.body.estimate, true);
  for (let i = 0; i < 10; i++) await hit(0, "local", key);
  assert.equal((await hit(0, "local", key)).body.allowed, false);
  const d = await del(s.url, `/v1/keys/local/${encodeURIComponent(key)}`, { host: "w0.test" });
  assert.equal(d.status, 200);
  assert.equal((await hit(0, "local", key)).body.allowed, true);
});
