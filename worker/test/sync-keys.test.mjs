// Sync mode with many active keys (1,000 here, 10,000 in `make bench-worker`; 30 and 300
// times what one round holds) and two isolates: every key is pushed within the bound of
// worker/README.md ("Sync modes"), whatever the number of keys, so no key is admitted beyond
// its limit once both isolates have pushed it. Requests carry 16 keys each (all or nothing in
// the isolate), so the test sends few requests for many keys; every request may begin a
// round. While the test waits, new keys keep coming (48 per poll, first in name order), as on
// a busy API. No timed assertion: each wait polls for a condition, bounded in count. On the
// real clock, a machine too slow to mark more than 32 keys per 100 ms does not tell this
// schedule from pushing the first 32 dirty keys per interval; the core's SyncQueue tests hold
// the bound at any rate.
// TOLLGATE_SYNC_KEYS sets the number of keys. Each key costs one object call per isolate
// that admits it (a new object for the first), which is what bounds the count in `make test`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, post, get, sleep } from "./harness.mjs";

const KEYS = Number(process.env.TOLLGATE_SYNC_KEYS ?? 1_000);
const PER_REQUEST = 16;
const LIMIT = 10;
const SYNC_MS = 100;
/** Polls of a wait, each at least one sync interval apart (the bound needs one or two, and
 * the time the objects take to answer the rounds already out). */
const POLLS = 600;
// A fixed window of 10 per hour whose current window began 30 minutes ago: no boundary
// falls inside the test.
const offsetMs = (((Date.now() - 1_800_000) % 3_600_000) + 3_600_000) % 3_600_000;
const POLICIES = {
  synced: {
    limits: [{ name: "per-hour", algorithm: "fixed-window", limit: LIMIT, window: "1h", offset: `${offsetMs}ms` }],
    syncRate: SYNC_MS,
    timeoutMs: 20_000,
  },
};

let s;
before(async () => {
  s = await start({ isolates: 2, bindings: { POLICIES } });
});
after(async () => {
  await s?.stop();
});

// Keys sort as they are made, so the last group is last in every order (the order of
// marking and the order of names).
const prefix = `many:${process.pid}:${Date.now()}`;
const groups = Array.from({ length: Math.ceil(KEYS / PER_REQUEST) }, (_, g) =>
  Array.from({ length: Math.min(PER_REQUEST, KEYS - g * PER_REQUEST) }, (_, i) => `${prefix}:${String(g * PER_REQUEST + i).padStart(6, "0")}`),
);
/** Groups whose keys a wait looks at: the first, the last, and 18 between. */
const sampled = [...new Set(Array.from({ length: 20 }, (_, i) => Math.round((i * (groups.length - 1)) / 19)))];
const admitted = new Map();

async function send(w, route, keys, cost) {
  const r = await post(s.url, route, { policy: "synced", keys, cost }, { host: `w${w}.test` });
  assert.equal(r.status, 200, r.text);
  return r.body.allowed;
}

/** Hits every key with `cost` from isolate `w` (16 requests at once); counts what it admitted. */
async function sweep(w, cost) {
  let next = 0;
  let allowed = 0;
  const client = async () => {
    while (next < groups.length) {
      const keys = groups[next++];
      if (await send(w, "/v1/limit", keys, cost)) {
        allowed += 1;
        for (const k of keys) admitted.set(k, (admitted.get(k) ?? 0) + cost);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  return allowed;
}

/** What the key's object holds: the sum of its merged counts. */
async function central(key) {
  const r = await get(s.url, `/v1/test/state/synced/${encodeURIComponent(key)}`, { headers: { host: "w0.test" } });
  assert.equal(r.status, 200, r.text);
  return r.body.counts.reduce((sum, [, , count]) => sum + count, 0);
}

/**
 * Polls until `done()`, at most POLLS times, each a sync interval after the last. Before each
 * check, isolate `w` admits 48 new keys that sort before every other (a busy API's new keys:
 * more than one round's worth per poll, always first in name order), which also begins any
 * round due. Returns the polls used.
 */
let fresh = 0;
async function until(w, done, what) {
  for (let i = 1; i <= POLLS; i++) {
    await sleep(SYNC_MS);
    for (let r = 0; r < 3; r++) {
      const keys = Array.from({ length: PER_REQUEST }, () => `${prefix}:!${String(fresh++).padStart(6, "0")}`);
      assert.equal(await send(w, "/v1/limit", keys, 1), true);
    }
    if (await done()) return i;
  }
  assert.fail(`${what}: not within ${POLLS} sync intervals`);
}

test(`sync mode, ${KEYS} keys, two isolates: every key pushed within the bound, none over its limit`, async () => {
  const t0 = Date.now();
  // Isolate 0 admits 4 of each key; each key's object ends up holding them.
  assert.equal(await sweep(0, 4), groups.length);
  const polls0 = await until(
    0,
    async () => (await Promise.all(sampled.map((g) => central(groups[g].at(-1))))).every((c) => c === 4),
    "isolate 0 pushed every key",
  );
  // Isolate 1 knows nothing of the keys: it admits 1 of each from its own view (the one
  // admission sync mode makes before an isolate's first round for a key), pushes it and reads
  // back the merged 5 (then a peek of 6 is denied).
  assert.equal(await sweep(1, 1), groups.length);
  const polls1 = await until(
    1,
    async () => {
      for (const g of sampled) if (await send(1, "/v1/peek", groups[g], LIMIT - 4)) return false;
      return true;
    },
    "isolate 1 read back every key's merged count",
  );
  // From the merged 5, isolate 1 admits exactly 5 more of each key, then nothing.
  assert.equal(await sweep(1, LIMIT - 5), groups.length);
  assert.equal(await sweep(1, 1), 0, "a key admitted beyond its limit: its push came too late");
  const over = [...admitted].filter(([, n]) => n > LIMIT);
  assert.deepEqual(over.slice(0, 5), [], `${over.length} keys admitted beyond ${LIMIT}`);
  assert.equal(admitted.size, KEYS);
  console.log(`# ${KEYS} keys: pushed within ${polls0} and ${polls1} polls; ${Date.now() - t0} ms in all`);
});
