// Reconfiguration in a running Worker: state written under one configuration, the Worker
// restarted on the same persisted state folder with another, and each key keeps what it used
// (the core's rules, tollgate::reconfigure). Lowering 100 to 50 does not give a fresh 50.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { start, post, get, tempDir, freshKey } from "./harness.mjs";

// A fixed test clock (TEST_MODE on) in the middle of a clock hour, so no window turns over.
const T0 = 1_800_001_800_000;
const per = (algorithm, limit, extra = {}) => ({ limits: [{ name: "main", algorithm, limit, window: "1h", ...extra }] });
const policies = (limit, changed) => ({
  fixed: per("fixed-window", limit),
  sliding: per("sliding-window", limit),
  log: per("sliding-log", limit),
  bucket: per("token-bucket", limit),
  gcra: per("gcra", limit),
  changed: changed ? per("gcra", limit) : per("fixed-window", limit),
});
const NAMES = Object.keys(policies(100, false));

async function usedThenRestarted(limitAfter, changed) {
  const dir = tempDir("tollgate-reconfigure-");
  const keys = Object.fromEntries(NAMES.map((p) => [p, freshKey(p)]));
  let s = await start({ persist: dir, bindings: { POLICIES: policies(100, false) } });
  try {
    for (const p of NAMES) {
      const r = await post(s.url, "/v1/limit", { key: keys[p], policy: p, cost: 60, now: T0 });
      assert.equal(r.body.allowed, true, r.text);
      assert.equal(r.body.remaining, 40);
    }
  } finally {
    await s.stop();
  }
  s = await start({ persist: dir, bindings: { POLICIES: policies(limitAfter, changed) } });
  return { s, keys, dir };
}

test("lowering 100 to 50 keeps each key's usage: 60 used leaves nothing, not a fresh 50", async () => {
  const { s, keys, dir } = await usedThenRestarted(50, true);
  try {
    for (const p of NAMES.filter((p) => p !== "changed")) {
      const r = await post(s.url, "/v1/limit", { key: keys[p], policy: p, now: T0 + 1 });
      assert.equal(r.body.allowed, false, `${p}: ${r.text}`);
      assert.equal(r.body.remaining, 0, p);
      assert.equal(r.body.limit, 50, p);
    }
    // Another algorithm starts fresh.
    const fresh = await post(s.url, "/v1/limit", { key: keys.changed, policy: "changed", now: T0 + 1 });
    assert.equal(fresh.body.allowed, true, fresh.text);
    assert.equal(fresh.body.remaining, 49);
    const d = await get(s.url, "/v1/policies");
    assert.match(d.body.policies.fixed.reconfigure, /keeps what it has used.*algorithm changes.*starts fresh/);
    assert.match(d.body.policies.bucket.limits[0].reconfigure, /tokens used stay used/);
  } finally {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("raising 100 to 200 keeps the usage too: 60 used leaves 140, and the converted state persists", async () => {
  const { s, keys, dir } = await usedThenRestarted(200, false);
  try {
    for (const p of NAMES) {
      const r = await post(s.url, "/v1/limit", { key: keys[p], policy: p, now: T0 + 1 });
      assert.equal(r.body.allowed, true, `${p}: ${r.text}`);
      assert.equal(r.body.remaining, 139, `${p}: ${r.text}`);
    }
  } finally {
    await s.stop();
  }
  // Restarted again under the same configuration: the converted state is what was stored.
  const again = await start({ persist: dir, bindings: { POLICIES: policies(200, false) } });
  try {
    for (const p of NAMES) {
      const r = await post(again.url, "/v1/peek", { key: keys[p], policy: p, now: T0 + 2 });
      assert.equal(r.body.remaining, 138, `${p}: ${r.text}`);
    }
  } finally {
    await again.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
