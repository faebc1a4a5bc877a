// Sync mode with many active keys and two isolates: every key is pushed within the bound of
// worker/README.md ("Sync modes"), whatever the number of keys, so each key is admitted
// exactly its limit once both isolates have pushed it. Time is the test build's clock: every
// request carries `now`, so every key is admitted at one instant, far more keys than rounds
// of 32 per interval could take, and the bound is checked at the first request one interval
// later (the isolate's queue, GET /v1/test/sync/{policy}: no key waits), whatever the
// machine's speed. Requests carry 16 keys each (all or nothing in the isolate), so the test
// sends few requests for many keys; every request may begin a round. Waiting for the rounds'
// object calls to end polls the queues, bounded in count; nothing is timed.
// TOLLGATE_SYNC_KEYS sets the number of keys: 10,000 in `make test-worker` (300 times what one
// round holds; fewer where the open-files limit cannot hold 10,000 objects: scripts/test-worker.sh)
// and `make bench-worker`, 1,000 when unset. Each key costs one object call per isolate and round that
// pushes it (a new object for the first), about three in all, which is what bounds the
// test's time: the objects' storage is in memory.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, sleep } from "./harness.mjs";

const KEYS = Number(process.env.TOLLGATE_SYNC_KEYS ?? 1_000);
const PER_REQUEST = 16;
const LIMIT = 10;
const SYNC_MS = 100;
/** Polls of a wait for rounds to end, 100 ms apart. */
const POLLS = 3_000;
/** The test clock: epoch ms, advanced by the test only. */
const T0 = Date.now();
// A fixed window of 10 per hour whose current window began 30 minutes before T0: no boundary
// falls inside the test.
const offsetMs = (((T0 - 1_800_000) % 3_600_000) + 3_600_000) % 3_600_000;
const POLICIES = {
  synced: {
    limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h", offset: `${offsetMs}ms` }],
    syncRate: SYNC_MS,
    // Thousands of objects are made at once on a busy machine: a push that times out is
    // queued again, which this test would see as a key left waiting.
    timeoutMs: 30_000,
  },
};

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POLICIES }, persist: false });
});
after(async () => {
  await s?.stop();
});

// Keys sort as they are made, so the last group is last in every order (the order of
// marking and the order of names).
const prefix = `many:${process.pid}:${T0}`;
const groups = Array.from({ length: Math.ceil(KEYS / PER_REQUEST) }, (_, g) =>
  Array.from({ length: Math.min(PER_REQUEST, KEYS - g * PER_REQUEST) }, (_, i) => `${prefix}:${String(g * PER_REQUEST + i).padStart(6, "0")}`),
);
/** Groups whose keys are read in their objects: the first, the last, and 18 between. */
const sampled = [...new Set(Array.from({ length: 20 }, (_, i) => Math.round((i * (groups.length - 1)) / 19)))];
/** Every key's admitted units, both isolates together. */
const admitted = new Map();

async function send(w, route, keys, cost, now) {
  const r = await post(s.url, route, { policy: "synced", keys, cost, now }, { host: `w${w}.test` });
  assert.equal(r.status, 200, r.text);
  return r.body.allowed;
}

/** Hits every key with `cost` from isolate `w` at `now` (16 requests at once); counts what it admitted. */
async function sweep(w, cost, now) {
  let next = 0;
  let allowed = 0;
  const client = async () => {
    while (next < groups.length) {
      const keys = groups[next++];
      if (await send(w, "/v1/limit", keys, cost, now)) {
        allowed += 1;
        for (const k of keys) admitted.set(k, (admitted.get(k) ?? 0) + cost);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  return allowed;
}

/** Isolate `w`'s sync queue: `{ waiting, out }`. */
async function queue(w) {
  const r = await get(s.url, "/v1/test/sync/synced", { headers: { host: `w${w}.test` } });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/**
 * The bound: every key isolate `w` admitted at `at` is in a round begun by the first request
 * at or after `at + SYNC_MS` (a peek, which queues nothing), so no key waits after it. Then
 * waits, polling, for the rounds' object calls to end; none may have failed (a failed push
 * is queued again). Returns the polls used.
 */
async function pushedWithinBound(w, at) {
  assert.equal(await send(w, "/v1/peek", groups[0], 1, at + SYNC_MS), true);
  const after = await queue(w);
  assert.equal(after.waiting, 0, `isolate ${w}: ${after.waiting} keys admitted ${SYNC_MS} ms ago are in no round`);
  for (let i = 1; i <= POLLS; i++) {
    const q = await queue(w);
    if (q.out === 0) {
      assert.equal(q.waiting, 0, `isolate ${w}: ${q.waiting} keys' pushes failed`);
      return i;
    }
    await sleep(100);
  }
  assert.fail(`isolate ${w}: rounds still out after ${POLLS} polls`);
}

/** What the key's object holds: the sum of its merged counts. */
async function central(key) {
  const r = await get(s.url, `/v1/test/state/synced/${encodeURIComponent(key)}`, { headers: { host: "w0.test" } });
  assert.equal(r.status, 200, r.text);
  return r.body.counts.reduce((sum, [, , count]) => sum + count, 0);
}

test(`sync mode, ${KEYS} keys, two isolates: every key pushed within the bound, none over its limit`, async () => {
  const t0 = Date.now();
  // Isolate 0 admits 4 of each key, all at T0; each key's object ends up holding them.
  assert.equal(await sweep(0, 4, T0), groups.length);
  const polls0 = await pushedWithinBound(0, T0);
  for (const g of sampled) assert.equal(await central(groups[g].at(-1)), 4);
  // Isolate 1 knows nothing of the keys: it admits 1 of each from its own view (the one
  // admission sync mode makes before an isolate's first round for a key), pushes it and reads
  // back the merged 5.
  const t1 = T0 + SYNC_MS;
  assert.equal(await sweep(1, 1, t1), groups.length);
  const polls1 = await pushedWithinBound(1, t1);
  // From the merged 5, isolate 1 admits exactly 5 more of each key, then nothing.
  const t2 = t1 + SYNC_MS;
  assert.equal(await sweep(1, LIMIT - 5, t2), groups.length);
  assert.equal(await sweep(1, 1, t2), 0, "a key admitted beyond its limit: its push came too late");
  const over = [...admitted].filter(([, n]) => n !== LIMIT);
  assert.deepEqual(over.slice(0, 5), [], `${over.length} keys admitted other than ${LIMIT} units`);
  assert.equal(admitted.size, KEYS);
  console.log(`# ${KEYS} keys: rounds ended within ${polls0} and ${polls1} polls; ${Date.now() - t0} ms in all`);
});
