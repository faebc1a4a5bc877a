// A Worker isolate restarted in sync mode (syncRate > 0): Miniflare disposed in the middle of
// a run and started again on the same persisted Durable Object storage. What the old isolate
// admitted and had not pushed yet is lost (and may be admitted again); nothing else is, the
// counts converge to the key's exact total, nothing crashes. The bound is in docs/reliability.md.
// No timed assertion: every wait polls for a condition, bounded in count only.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { start, post, get, freshKey, tempDir, sleep } from "./harness.mjs";

const LIMIT = 10;
// A fixed window of 10 per hour whose current window began 30 minutes ago: no window boundary
// falls inside the test.
const offsetMs = (((Date.now() - 1_800_000) % 3_600_000) + 3_600_000) % 3_600_000;
const POLICIES = {
  synced: {
    limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h", offset: `${offsetMs}ms` }],
    syncRate: 50,
    timeoutMs: 20_000,
  },
};

/** What the key's object holds durably: the sum of its merged counts. */
async function durable(s, key) {
  const r = await get(s.url, `/v1/test/state/synced/${encodeURIComponent(key)}`);
  assert.equal(r.status, 200, r.text);
  return r.body.counts.reduce((sum, [, , count]) => sum + count, 0);
}

async function hit(s, key) {
  const r = await post(s.url, "/v1/limit", { key, policy: "synced" });
  assert.equal(r.status, 200, r.text);
  return r.body.allowed;
}

/** Peeks (each peek may start a sync round) until `done(peek body)`; bounded in count. */
async function until(s, key, done, what) {
  for (let i = 0; i < 400; i++) {
    const r = await post(s.url, "/v1/peek", { key, policy: "synced" });
    assert.equal(r.status, 200, r.text);
    if (await done(r.body)) return;
    await sleep(50);
  }
  assert.fail(`never ${what}`);
}

test("an isolate restarted in sync mode loses at most its unpushed hits; counts converge", async () => {
  const dir = tempDir();
  const key = freshKey("restart");
  let s = await start({ persist: dir, bindings: { POLICIES } });
  try {
    let admitted = 0;
    for (let i = 0; i < 6; i++) {
      assert.equal(await hit(s, key), true);
      admitted += 1;
    }
    // Restarted at once: the latest hits may not have been pushed.
    await s.stop();
    s = await start({ persist: dir, bindings: { POLICIES } });
    const kept = await durable(s, key);
    assert.ok(kept <= admitted, `the object holds ${kept}, more than the ${admitted} admitted`);
    const lost = admitted - kept;
    console.log(`# restart 1: ${admitted} admitted before it, ${kept} durable, ${lost} lost`);

    // The new isolate decides from nothing until its first round brings the durable counts
    // (a peek's remaining is what would be left after one more hit).
    assert.equal(await hit(s, key), true);
    admitted += 1;
    await until(s, key, (b) => b.remaining === LIMIT - kept - 2, "saw the durable counts");
    while (await hit(s, key)) admitted += 1;
    assert.equal(admitted, LIMIT + lost, "over-admitted exactly the hits lost in the restart");
    // Converges: every admission since the restart reaches the object.
    await until(s, key, async () => (await durable(s, key)) === LIMIT, "converged to the limit");
    assert.equal(await hit(s, key), false);

    // A second restart with nothing unpushed loses nothing; the fresh isolate's first hit is
    // decided before its first round (the sync-mode bound: one sync interval of a new isolate).
    await s.stop();
    s = await start({ persist: dir, bindings: { POLICIES } });
    assert.equal(await durable(s, key), LIMIT);
    const first = await hit(s, key);
    await until(s, key, (b) => b.remaining === 0 && !b.allowed, "saw the durable counts again");
    assert.equal(await hit(s, key), false);
    assert.equal((await durable(s, key)) - LIMIT <= 1, true, "only the hit before the first round");
    console.log(`# restart 2: nothing unpushed; the fresh isolate's first hit ${first ? "admitted" : "denied"} before its first round`);
  } finally {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
