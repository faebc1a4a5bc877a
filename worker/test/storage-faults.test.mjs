// Durable Object storage failures, injected in workerd (TEST_MODE on): a key's object whose
// next reads or writes fail (`Tollgate-Test-Fault: storage-writes=N`, `storage-reads=N`, with
// `,throw` the object also throws and is reset, as the runtime resets a broken object). The
// decision follows the policy's `failure` with `degraded: "unavailable"`; what the key had
// stored is unchanged; nothing crashes; the decisions after the fault are exact. The hook is
// worker/src/tests/storage_fault.rs. With TEST_MODE off the header changes nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, freshKey } from "./harness.mjs";

const LIMIT = 5;
// A timeout no slow machine reaches: a degraded answer here is the injected fault's, never a
// late one.
const policy = (algorithm, failure) => ({
  limits: [{ name: "per-hour", algorithm, limit: LIMIT, window: "1h" }],
  failure,
  timeoutMs: 20_000,
});
const POLICIES = {
  fwOpen: policy("fixed-window", "open"),
  fwClosed: policy("fixed-window", "closed"),
  gcraOpen: policy("gcra", "open"),
  slidingClosed: policy("sliding-window", "closed"),
  // For the real clock (TEST_MODE off): a window from the first hit has no boundary to cross.
  // A block longer than the window: once the hour is over, only the block denies.
  penalized: { ...policy("fixed-window", "closed"), blockDuration: "2h" },
  firstHit: { ...policy("fixed-window", "closed"), limits: [{ name: "per-hour", algorithm: "fixed-window", align: "first-hit", limit: LIMIT, window: "1h" }] },
};
// The test clock: every hit of a case at one instant, so nothing refills while it runs.
const NOW = Date.UTC(2026, 0, 1, 12, 30);

let s;
before(async () => {
  s = await start({ bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

const HEADER = "tollgate-test-fault";
const call = (route, policyName, key, headers = {}) => post(s.url, route, { key, policy: policyName, now: NOW }, headers);
const hit = (p, key, headers) => call("/v1/limit", p, key, headers);
const peek = (p, key, headers) => call("/v1/peek", p, key, headers);
const inspect = (p, key) => get(s.url, `/v1/test/state/${p}/${encodeURIComponent(key)}`);
const figures = (r) => ({ allowed: r.body.allowed, remaining: r.body.remaining, resetAt: r.body.resetAt, degraded: r.body.degraded });

function assertFailureMode(r, failure) {
  assert.equal(r.body.degraded, "unavailable", r.text);
  if (failure === "open") {
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.allowed, true);
  } else {
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.allowed, false);
  }
}

/** Hits until the first denial: how many were admitted, every answer exact (not degraded). */
async function admittedUntilDenied(p, key) {
  let admitted = 0;
  for (;;) {
    const r = await hit(p, key);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.degraded, undefined, r.text);
    if (!r.body.allowed) return admitted;
    admitted += 1;
    assert.ok(admitted <= LIMIT, "admitted more than the limit");
  }
}

for (const [p, failure] of [
  ["fwOpen", "open"],
  ["fwClosed", "closed"],
  ["gcraOpen", "open"],
  ["slidingClosed", "closed"],
]) {
  for (const mode of ["", ",throw"]) {
    test(`${p}: two failed writes${mode} follow failure "${failure}", change nothing, then decisions are exact`, async () => {
      const key = freshKey("sf");
      for (let i = 0; i < 2; i++) assert.equal((await hit(p, key)).body.allowed, true);
      const before = figures(await peek(p, key));
      assertFailureMode(await hit(p, key, { [HEADER]: `storage-writes=2${mode}` }), failure);
      assertFailureMode(await hit(p, key), failure);
      // The object read back what storage holds: the two hits before the fault, not the two
      // that failed to be written.
      assert.deepEqual(figures(await peek(p, key)), before);
      assert.equal(await admittedUntilDenied(p, key), LIMIT - 2);
      assert.equal((await inspect(p, key)).body.state, 1);
    });

    test(`${p}: failed reads${mode} on a restarted object follow failure "${failure}", then the stored state is read back`, async () => {
      const key = freshKey("sf");
      for (let i = 0; i < 3; i++) assert.equal((await hit(p, key)).body.allowed, true);
      const before = figures(await peek(p, key));
      // Arming read faults drops the object's memory: this hit and the next must read, and fail.
      assertFailureMode(await hit(p, key, { [HEADER]: `storage-reads=2${mode}` }), failure);
      const second = await peek(p, key);
      assert.equal(second.body.degraded, "unavailable", second.text);
      assert.deepEqual(figures(await peek(p, key)), before);
      assert.equal(await admittedUntilDenied(p, key), LIMIT - 3);
    });
  }
}

test("a fault on a fresh key writes nothing; the object answers the next request", async () => {
  const key = freshKey("sf");
  assertFailureMode(await hit("fwClosed", key, { [HEADER]: "storage-writes=1,throw" }), "closed");
  assert.equal((await inspect("fwClosed", key)).body.state, 0);
  assert.equal(await admittedUntilDenied("fwClosed", key), LIMIT);
});

test("a denial writes nothing, so an armed write fault waits for the next write", async () => {
  const key = freshKey("sf");
  assert.equal(await admittedUntilDenied("fwClosed", key), LIMIT);
  const denied = await hit("fwClosed", key, { [HEADER]: "storage-writes=1" });
  // Answered by the block cache or by the object: a plain denial either way.
  assert.equal(denied.status, 200, denied.text);
  assert.equal(denied.body.allowed, false);
  assert.equal(denied.body.degraded, undefined);
});

test("a penalty's block is written through: an object that reads its storage again still blocks", async () => {
  const key = freshKey("sf");
  assert.equal(await admittedUntilDenied("penalized", key), LIMIT); // the denial starts the block
  // Arming a read fault drops the object's memory: this peek's read fails, the next reads storage.
  assertFailureMode(await peek("penalized", key, { [HEADER]: "storage-reads=1" }), "closed");
  const afterTheWindow = await post(s.url, "/v1/peek", { key, policy: "penalized", now: NOW + 61 * 60_000 });
  assert.equal(afterTheWindow.status, 200, afterTheWindow.text);
  assert.deepEqual([afterTheWindow.body.allowed, afterTheWindow.body.penalty], [false, true], afterTheWindow.text);
});

test("with TEST_MODE off the storage fault header is ignored", async () => {
  const off = await start({ bindings: { POLICIES, TEST_MODE: undefined } });
  try {
    const key = freshKey("sf-off");
    const remaining = [];
    for (const value of ["storage-writes=3", "storage-reads=3,throw", "storage-writes=1,throw"]) {
      const r = await post(off.url, "/v1/limit", { key, policy: "firstHit" }, { [HEADER]: value });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.allowed, true);
      assert.equal(r.body.degraded, undefined);
      remaining.push(r.body.remaining);
    }
    assert.deepEqual(remaining, [LIMIT - 1, LIMIT - 2, LIMIT - 3], "every hit counted and stored");
  } finally {
    await off.stop();
  }
});
