// The cross-runtime equivalence fixture (tests/js/fixture.mjs: 120,000 hits over every
// algorithm and a policy of two limits, costs 1 to 3, ~2,000 keys) replayed through the running
// Worker over HTTP (workerd started by Miniflare, TEST_MODE on, `now` per request):
// - exact mode (syncRate = 0) answers every hit of the fixture (all 120,000 by default; a
//   share of its keys, each with all its hits, with TOLLGATE_WORKER_FIXTURE_SHARE) as the npm
//   package decides it in memory: `allowed`, `limit`, `remaining`, `resetAt`, `retryAfter`
//   and `blockedBy`; hits that can never fit are refused by both and change nothing;
// - the synced modes (syncRate = 100 ms, two isolates, and local only) stay within their
//   documented bound (worker/README.md: at most `isolates x limit` per window), measured.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { start } from "../../worker/test/harness.mjs";
import { LIMITERS, trace, policyOf, npmDecisions } from "./fixture.mjs";

/** A hit that can never fit goes before every this many hits of the trace. */
const NEVER_FITS_EVERY = 499;
/** Requests in flight at once (each key's hits stay in order; keys are independent objects). */
const CONCURRENCY = 16;
/**
 * The share of the fixture's (limiter, key) sequences replayed in exact mode, each sequence
 * whole (so every replayed key sees exactly its hits of the full trace): every hit by default
 * (120,000 HTTP requests to workerd, a few minutes); a smaller share, e.g.
 * TOLLGATE_WORKER_FIXTURE_SHARE=0.25, for a quicker run while developing.
 */
const SHARE = Number(process.env.TOLLGATE_WORKER_FIXTURE_SHARE ?? 1);

/**
 * The npm decision's fields as the Worker names them (one vocabulary: the same names). The
 * limit the figures are about is named by `blockedBy` on a denial (null on an admission in
 * both), and `limit` is that limit's.
 */
function sameDecision(worker, npm) {
  const fields = ["allowed", "limit", "remaining", "resetAt", "retryAfter", "blockedBy"];
  for (const f of fields) if (worker[f] !== npm[f]) return `${f}: Worker ${worker[f]}, package ${npm[f]}`;
  return null;
}

let hits, npm, s;
before(async () => {
  hits = trace();
  npm = npmDecisions(hits, NEVER_FITS_EVERY);
  const POLICIES = Object.fromEntries(LIMITERS.map((o, l) => [`l${l}`, policyOf(o)]));
  // `direct`: workerd's own socket for the Worker, as a deployed Worker is reached (see `limit`).
  s = await start({ bindings: { POLICIES }, direct: true });
});
after(async () => {
  await s?.stop();
});

/**
 * POST /v1/limit to `to`: with no `host`, the Worker's own socket in workerd (Miniflare's
 * direct socket, `s.directUrls[0]`), over a connection of its own: the Worker's real HTTP
 * handling, without the routing worker Miniflare puts in front of its entry URL, which a
 * deployed Worker does not have and which cost as much CPU per request as the Worker itself
 * (measured over a share of the fixture: the replay's CPU, workerd's and the test's, a quarter
 * less); with a `host`, `to` is a Miniflare, whose dispatch routes by host name to one of
 * several isolates.
 *
 * No connection is reused: workerd closes a connection idle for a few seconds, and a request
 * sent on one as it closes fails without telling whether the Worker counted the hit, so it
 * could not be retried. On a loaded machine a pooled connection does sit idle that long.
 */
async function limit(to, body, host) {
  const json = JSON.stringify(body);
  if (host !== undefined) {
    const res = await to.dispatchFetch(`http://${host}/v1/limit`, { method: "POST", headers: { "content-type": "application/json" }, body: json });
    return { status: res.status, body: await res.json() };
  }
  const url = new URL("/v1/limit", to);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(json) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode, body: JSON.parse(text) });
        } catch (e) {
          reject(new Error(`POST /v1/limit ${json}: status ${res.statusCode}, not JSON: ${text.slice(0, 200)}`));
        }
      });
      res.on("error", reject);
    });
    req.on("error", (e) => reject(new Error(`POST /v1/limit ${json}: ${e.code ?? ""} ${e.message}`)));
    req.end(json);
  });
}

/** Runs `run(sequence)` over the sequences, `CONCURRENCY` at a time. */
async function pool(sequences, run) {
  let next = 0;
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (next < sequences.length) await run(sequences[next++]);
  });
  await Promise.all(workers);
}

test("exact mode: the Worker answers every hit of the fixture as the npm package decides it", async () => {
  const byKey = new Map();
  for (const h of hits) {
    const k = `${h.l}|${h.key}`;
    if (!byKey.has(k)) byKey.set(k, []);
    byKey.get(k).push(h);
  }
  const mismatches = [];
  let refusedHits = 0;
  let denials = 0;
  let cached = 0;
  const started = performance.now();
  const every = Math.max(1, Math.round(1 / SHARE));
  const sequences = [...byKey.values()].filter((_, i) => i % every === 0);
  const replayed = sequences.reduce((n, q) => n + q.length, 0);
  await pool(sequences, async (sequence) => {
    for (const h of sequence) {
      const policy = `l${h.l}`;
      if (npm.refused.has(h.i)) {
        const r = await limit(s.directUrls[0], { key: h.key, policy, now: h.now, cost: npm.tooLarge[h.l] });
        if (r.status !== 400 || r.body.error?.code !== "invalid_cost") {
          mismatches.push(`hit ${h.i}: cost ${npm.tooLarge[h.l]} never fits, the Worker answered ${r.status} ${JSON.stringify(r.body)}`);
        }
        refusedHits++;
      }
      const r = await limit(s.directUrls[0], { key: h.key, policy, now: h.now, cost: h.cost });
      const want = npm.decisions[h.i];
      const why = r.status >= 500 || r.body.allowed === undefined ? `status ${r.status} ${JSON.stringify(r.body)}` : sameDecision(r.body, want);
      if (why !== null) mismatches.push(`hit ${h.i} (limiter ${h.l}, ${h.key} at ${h.now}, cost ${h.cost}): ${why}`);
      const native = `${+r.body.allowed},${r.body.remaining},${r.body.resetAt},${r.body.retryAfter}`;
      if (why === null && native !== h.native) mismatches.push(`hit ${h.i}: the native crate says ${h.native}, the Worker ${native}`);
      if (r.body.allowed === false) denials++;
      if (r.body.estimate === true) cached++;
    }
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `exact: ${replayed} of the fixture's ${hits.length} hits, ${sequences.length} of its ${byKey.size} (limiter, key) pairs, in ${seconds.toFixed(1)} s; ` +
      `${denials} denials, ${cached} of them answered by the blocked-key cache; ${refusedHits} hits that never fit refused`,
  );
  assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} mismatches`);
  assert.equal(new Set(sequences.map((q) => q[0].l)).size, LIMITERS.length, "every limiter and the policy of two limits");
  assert.ok(denials > replayed / 10 && cached > denials / 4, "the trace exercises denials and the cache");
  assert.ok(refusedHits > (200 * replayed) / hits.length);
});

/** Most units admitted for one key in any clock-aligned window of `windowMs` (the bound's unit). */
function maxPerWindow(admitted, windowMs) {
  const per = new Map();
  for (const { key, now, cost } of admitted) {
    const k = `${key}@${Math.floor(now / windowMs)}`;
    per.set(k, (per.get(k) ?? 0) + cost);
  }
  return Math.max(0, ...per.values());
}

/** The mergeable limiters of the fixture (sync modes take only those), with limit and window. */
const MERGEABLE = [
  { l: 0, limit: 20, windowMs: 1000 }, // fixed-window
  { l: 3, limit: 30, windowMs: 3000 }, // sliding-window
  { l: 4, limit: 12, windowMs: 1000 }, // sliding-buckets
];
/** The synced replays take the fixture's first hits of the mergeable limiters, in trace order. */
const SYNCED_HITS = 3000;

for (const { sync, isolates } of [
  { sync: 100, isolates: 2 },
  { sync: -1, isolates: 2 },
]) {
  test(`sync = ${sync} with ${isolates} isolates: within the documented bound of ${isolates} x limit per window, measured`, async () => {
    const POLICIES = Object.fromEntries(MERGEABLE.map(({ l }) => [`s${l}`, policyOf(LIMITERS[l], sync)]));
    const synced = await start({ bindings: { POLICIES }, isolates });
    try {
      const mergeable = new Set(MERGEABLE.map((m) => m.l));
      const subset = hits.filter((h) => mergeable.has(h.l)).slice(0, SYNCED_HITS);
      const admitted = new Map(MERGEABLE.map(({ l }) => [l, []]));
      const exact = new Map(MERGEABLE.map(({ l }) => [l, []]));
      let notEstimates = 0;
      // In trace order (sync rounds run on the hits' clock), alternating isolates per hit.
      for (const h of subset) {
        const r = await limit(synced.mf, { key: h.key, policy: `s${h.l}`, now: h.now, cost: h.cost }, `w${h.i % isolates}.test`);
        assert.equal(typeof r.body.allowed, "boolean", `${r.status} ${JSON.stringify(r.body)}`);
        if (r.body.estimate !== true) notEstimates++;
        if (r.body.allowed) admitted.get(h.l).push(h);
        if (npm.decisions[h.i].allowed) exact.get(h.l).push(h);
      }
      assert.equal(notEstimates, 0, "every synced answer says it is an estimate");
      for (const { l, limit: max, windowMs } of MERGEABLE) {
        const units = (list) => list.reduce((n, h) => n + h.cost, 0);
        const worst = maxPerWindow(admitted.get(l), windowMs);
        const exactWorst = maxPerWindow(exact.get(l), windowMs);
        console.log(
          `sync ${sync}, ${isolates} isolates, ${LIMITERS[l].algorithm} ${max}/${windowMs}ms: admitted ${units(admitted.get(l))} units ` +
            `(exact mode: ${units(exact.get(l))}); most in one key's window ${worst} (exact: ${exactWorst}, bound ${isolates * max})`,
        );
        assert.ok(exactWorst <= max, "the exact decisions keep the limit per window");
        assert.ok(worst <= isolates * max, `${LIMITERS[l].algorithm}: ${worst} units in one window, above ${isolates} x ${max}`);
      }
    } finally {
      await synced.stop();
    }
  });
}
