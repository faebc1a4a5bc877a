// `WorkerStore` (the npm package from its packed tarball) against the real Worker in workerd
// (Miniflare, TEST_MODE on so that hits carry the fixture's `now`):
// - a share of the equivalence fixture (tests/js/fixture.mjs) gives the same decisions through
//   `WorkerStore` as in memory, over HTTP and over a service binding from a second Worker that
//   imports the package's workerd entry;
// - refund, reset, peek and the limits check (`policy_mismatch`) through the Worker;
// - several keys: memory's decisions, and two-key hits from many concurrent clients on
//   overlapping keys admit every key exactly up to its limit, charging none for a denial;
// - export/import through the Worker: memory's bytes out and in, bad bytes refused as memory
//   refuses them;
// - a Worker that refuses the request (4xx) throws the caller's error whatever `failure` says;
//   a Worker that is gone or does not answer in time is an outage: `failure` decides.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { isDeepStrictEqual } from "node:util";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RateLimiter, WorkerStore, WorkerUnavailableError, WorkerRequestError, WaitTimeoutError } from "tollgate";
import { start } from "../../worker/test/harness.mjs";
import { LIMITERS, trace, policyOf, npmDecisions } from "./fixture.mjs";
import { MULTI_LIMITERS, nativeFixture } from "../js/fixture.mjs";

const here = dirname(fileURLToPath(import.meta.url));
/** esbuild as the Worker's tests have it (worker/node_modules), to bundle the client Worker as wrangler does. */
const { build } = createRequire(resolve(here, "../../worker/package.json"))("esbuild");
/**
 * Per limiter: the first HOT_HITS hits of its busiest key (a key's first hits are decided the
 * same whatever follows, so a prefix is a whole trace of its own; it brings the denials), then
 * whole sequences of other keys until HITS_PER_LIMITER: about 640 hits in all, seconds over
 * Miniflare (the whole fixture goes through the Worker in worker-fixture.test.mjs).
 */
const HOT_HITS = 40;
const HITS_PER_LIMITER = 80;
/** A hit that can never fit goes before every this many hits of the trace. */
const NEVER_FITS_EVERY = 499;
const CONCURRENCY = 8;
const FIELDS = ["allowed", "limit", "remaining", "resetAt", "retryAfter", "blockedBy"];
const T0 = 1_700_000_000_000;
/**
 * Every store that must hear the Worker waits this long: on a loaded machine a slow answer
 * would otherwise be an outage, and the failure mode would answer (no timed assertion here).
 */
const PATIENT = 60_000;

/** A client Worker: runs one limiter call through `WorkerStore({ binding })` per request. */
const CLIENT = `
  import { RateLimiter, WorkerStore } from "tollgate";
  const limiters = new Map();
  function limiterOf(env, policy) {
    if (!limiters.has(policy)) limiters.set(policy, new RateLimiter({ store: new WorkerStore({ binding: env.TOLLGATE, policy, timeoutMs: ${PATIENT} }) }));
    return limiters.get(policy);
  }
  export default {
    async fetch(request, env) {
      const { policy, key, now, cost } = await request.json();
      try {
        return Response.json(await limiterOf(env, policy).limit(key, { now, cost }));
      } catch (e) {
        return Response.json({ thrown: { name: e.name, code: e.code, field: e.field } });
      }
    },
  };`;

let hits, npm, s, sequences, clientRoot;
before(async () => {
  hits = trace();
  npm = npmDecisions(hits, NEVER_FITS_EVERY);
  const byKey = new Map();
  for (const h of hits) {
    const k = `${h.l}|${h.key}`;
    if (!byKey.has(k)) byKey.set(k, []);
    byKey.get(k).push(h);
  }
  const all = [...byKey.values()];
  sequences = [];
  for (let l = 0; l < LIMITERS.length; l++) {
    const mine = all.filter((q) => q[0].l === l);
    const busiest = mine.reduce((a, b) => (b.length > a.length ? b : a));
    sequences.push(busiest.slice(0, HOT_HITS));
    let taken = Math.min(HOT_HITS, busiest.length);
    for (const q of mine) {
      if (q === busiest || taken + q.length > HITS_PER_LIMITER) continue;
      taken += q.length;
      sequences.push(q);
    }
  }
  // Every policy waits long for its objects: on a loaded machine a slow object (or a hit queued
  // behind other hits' leases) would otherwise be a failed one, answered by the policy's
  // failure mode instead of decided.
  const patient = (policy) => ({ ...policy, timeoutMs: 20_000 });
  const POLICIES = {
    ...Object.fromEntries(LIMITERS.map((o, l) => [`l${l}`, patient(policyOf(o))])),
    ...Object.fromEntries(MULTI_LIMITERS.map((o, l) => [`m${l}`, patient(policyOf(o))])),
    five: patient({ limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }] }),
    pair: patient({ limits: [{ name: "total", algorithm: "fixed-window", quota: "6/h" }] }),
    moved: patient({ limits: [{ name: "burst", algorithm: "token-bucket", quota: "10/s", burst: 4 }, { name: "minute", algorithm: "sliding-log", quota: "7/m" }] }),
  };
  // The client Worker bundled as wrangler does: the "workerd" condition picks the package's
  // loaders for its "#wasm" imports, the .wasm files left external (workerd imports them as
  // compiled modules), in a folder of its own with the installed package's .wasm files one level
  // up, where the loaders' ../*.wasm find them.
  const dist = resolve(here, "node_modules/tollgate/dist");
  clientRoot = mkdtempSync(join(tmpdir(), "tollgate-client-worker-"));
  for (const f of readdirSync(dist).filter((f) => f.endsWith(".wasm"))) copyFileSync(join(dist, f), join(clientRoot, f));
  const scriptPath = join(clientRoot, "worker/client.js");
  await build({
    stdin: { contents: CLIENT, resolveDir: here, loader: "js" },
    bundle: true, format: "esm", platform: "neutral", conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"], external: ["*.wasm"], outfile: scriptPath, logLevel: "warning",
  });
  const client = {
    name: "client",
    modules: true,
    modulesRoot: clientRoot,
    scriptPath,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2026-04-01",
    serviceBindings: { TOLLGATE: "w0" },
  };
  s = await start({ bindings: { POLICIES }, extraWorkers: [client] });
});
after(async () => {
  await s?.stop();
  if (clientRoot) rmSync(clientRoot, { recursive: true, force: true });
});

/** Runs `run(sequence)` over the sequences, `CONCURRENCY` at a time (each key's hits in order). */
async function pool(run) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < sequences.length) await run(sequences[next++]);
    }),
  );
}

function differs(got, want) {
  for (const f of FIELDS) if (got[f] !== want[f]) return `${f}: WorkerStore ${got[f]}, memory ${want[f]}`;
  return null;
}

/**
 * Replays the share of the fixture through `decide(h, cost)` and compares each decision with the
 * package's in memory; a hit that can never fit must be refused as memory refuses it.
 */
async function replay(decide) {
  const mismatches = [];
  let replayed = 0;
  let estimates = 0;
  let denials = 0;
  await pool(async (sequence) => {
    for (const h of sequence) {
      if (npm.refused.has(h.i)) {
        const want = npm.refused.get(h.i);
        const got = await decide(h, npm.tooLarge[h.l]).then(
          (d) => d.thrown ?? { name: "none" },
          (e) => ({ name: e.name, code: e.code, field: e.field }),
        );
        if (got.name !== want.name || got.code !== want.code || got.field !== want.field) {
          mismatches.push(`hit ${h.i}: never fits, memory throws ${want.name} ${want.code}, WorkerStore ${JSON.stringify(got)}`);
        }
      }
      const d = await decide(h, h.cost);
      const why = d.thrown ? `threw ${JSON.stringify(d.thrown)}` : differs(d, npm.decisions[h.i]);
      if (why !== null) mismatches.push(`hit ${h.i} (limiter ${h.l}, ${h.key} at ${h.now}, cost ${h.cost}): ${why}`);
      if (d.estimate === true) estimates++;
      if (d.allowed === false) denials++;
      replayed++;
    }
  });
  assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} mismatches`);
  assert.equal(new Set(sequences.map((q) => q[0].l)).size, LIMITERS.length, "every limiter and the policy of two limits");
  assert.ok(denials > replayed / 20, `the replay exercises denials (${denials} of ${replayed})`);
  return { replayed, estimates, denials };
}

test("over HTTP: the fixture's decisions through WorkerStore are memory's", async () => {
  // Limiter 0 gives its own limits (equal to the Worker's: accepted), the others take the Worker's.
  const limiters = LIMITERS.map((o, l) => {
    const store = new WorkerStore({ url: s.url, policy: `l${l}`, timeoutMs: PATIENT });
    return l === 0 ? new RateLimiter({ ...o, store }) : new RateLimiter({ store });
  });
  const started = performance.now();
  const { replayed, estimates, denials } = await replay((h, cost) => limiters[h.l].limit(`http:${h.key}`, { now: h.now, cost }));
  await Promise.all(limiters.map((l) => l.close()));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`HTTP: ${replayed} hits (${denials} denied) in ${seconds} s, ${estimates} answered as estimates (the Worker's or this process's blocked-key cache)`);
});

test("over a service binding: a second Worker's WorkerStore({ binding }) decides as memory does", async () => {
  const client = await s.mf.getWorker("client");
  const decide = async (h, cost) => {
    const res = await client.fetch("http://client/", {
      method: "POST",
      body: JSON.stringify({ policy: `l${h.l}`, key: `binding:${h.key}`, now: h.now, cost }),
    });
    return res.json();
  };
  const { replayed } = await replay(decide);
  console.log(`service binding: ${replayed} hits`);
});

test("peek, refund and reset go to the Worker; limits that are not the Worker's are refused", async () => {
  const store = new WorkerStore({ url: s.url, policy: "five", timeoutMs: PATIENT });
  const limiter = new RateLimiter({ store });
  const key = `prr:${process.pid}`;
  for (let i = 0; i < 5; i++) assert.equal((await limiter.limit(key, { now: T0 })).allowed, true);
  const denied = await limiter.limit(key, { now: T0 });
  assert.equal(denied.allowed, false);
  assert.equal(denied.blockedBy, "per-minute");
  assert.equal((await limiter.peek(key, { now: T0 })).allowed, false);
  await limiter.refund(key, { now: T0, cost: 2 });
  const afterRefund = await limiter.peek(key, { now: T0 });
  assert.equal(afterRefund.allowed, true);
  assert.equal(afterRefund.remaining, 1);
  for (let i = 0; i < 2; i++) assert.equal((await limiter.limit(key, { now: T0 })).allowed, true);
  assert.equal((await limiter.limit(key, { now: T0 })).allowed, false);
  await limiter.reset(key);
  assert.equal((await limiter.limit(key, { now: T0 })).remaining, 4);
  // headers() by the core, over the Worker's policy.
  assert.equal(limiter.headers(denied, { now: T0 })["Retry-After"] !== undefined, true);

  const mine = new RateLimiter({ name: "per-minute", algorithm: "fixed-window", quota: "5/m", store });
  assert.equal((await mine.limit(`${key}:mine`, { now: T0 })).allowed, true);
  const other = new RateLimiter({ name: "per-minute", algorithm: "fixed-window", quota: "6/m", store, });
  await assert.rejects(other.limit(key, { now: T0 }), (e) => e.code === "policy_mismatch" && e.field === "policy");
});

test("waitFor and blockUntilReady through the Worker: admitted at once, or refused as soon as the wait is known to be too long", async () => {
  // Real time (waitFor sleeps a denial's retryAfter), on an hour's window: nothing here waits.
  const limiter = new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "pair", timeoutMs: PATIENT }) });
  const key = `wait:${process.pid}`;
  const first = await limiter.waitFor(key, { maxWait: 100, cost: 6 });
  assert.equal(first.allowed, true);
  await assert.rejects(limiter.waitFor(key, { maxWait: 100 }), (e) => e instanceof WaitTimeoutError && e.code === "wait_timeout" && e.decision.allowed === false);
  const last = await limiter.blockUntilReady(key, 100);
  assert.equal(last.allowed, false);
  assert.ok(last.retryAfter > 100);
  const aborted = new AbortController();
  aborted.abort(new Error("gone"));
  await assert.rejects(limiter.waitFor(key, { maxWait: 100, signal: aborted.signal }), /gone/);
});

test("a request the Worker refuses is the caller's error, whatever the failure mode", async () => {
  for (const failure of ["open", "closed"]) {
    const limiter = new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "five", failure, timeoutMs: PATIENT }) });
    await assert.rejects(limiter.limit("k", { now: T0, cost: 6 }), (e) => e instanceof RangeError && e.code === "invalid_cost" && e.field === "cost");
    await assert.rejects(limiter.limit("", { now: T0 }), (e) => e instanceof RangeError && e.code === "missing_key");
    const unknown = new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "nope", failure, timeoutMs: PATIENT }) });
    await assert.rejects(unknown.limit("k"), (e) => e instanceof WorkerRequestError && e.code === "unknown_policy");
  }
});

/** A local HTTP server that accepts requests and never answers them (a hung Worker). */
async function silentServer() {
  const sockets = new Set();
  const server = http.createServer(() => {});
  server.on("connection", (c) => sockets.add(c));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const c of sockets) c.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

test("a Worker that is gone or does not answer is an outage: failure decides, marked degraded", async () => {
  const gone = await start({ bindings: { POLICIES: { five: { limits: [{ name: "per-minute", algorithm: "fixed-window", quota: "5/m" }], timeoutMs: 20_000 } } } });
  const own = { name: "per-minute", algorithm: "fixed-window", quota: "5/m" };
  const errors = [];
  const make = (url, failure, extra = {}) =>
    new RateLimiter({ ...own, store: new WorkerStore({ url, policy: "five", failure, timeoutMs: PATIENT, onError: (e) => errors.push(e), ...extra }) });
  const open = make(gone.url, "open");
  const closed = make(gone.url, "closed");
  const thrown = make(gone.url, "throw");
  const insured = make(gone.url, "insurance", { insurance: 0.4 });
  // Reached once while up: the policy is known and matched.
  for (const l of [open, closed, thrown, insured]) assert.equal((await l.limit("warm", { now: T0 })).allowed, true);
  await gone.stop();

  const o = await open.limit("k", { now: T0 });
  assert.equal(o.allowed, true);
  assert.equal(o.degraded, "unavailable");
  const c = await closed.limit("k", { now: T0 });
  assert.equal(c.allowed, false);
  assert.equal(c.degraded, "unavailable");
  assert.ok(c.retryAfter >= 1000);
  await assert.rejects(thrown.limit("k", { now: T0 }), (e) => e instanceof WorkerUnavailableError && e.code === "worker_unavailable");
  // Insurance: 40% of 5 per process in memory, then denied; each marked degraded.
  const insuredAnswers = [];
  for (let i = 0; i < 4; i++) insuredAnswers.push(await insured.limit("k", { now: T0 }));
  assert.deepEqual(insuredAnswers.map((d) => [d.allowed, d.degraded]), [[true, "unavailable"], [true, "unavailable"], [false, "unavailable"], [false, "unavailable"]]);
  // Refund, reset, export and import have no answer to make up: they throw.
  await assert.rejects(open.refund("k"), (e) => e.code === "worker_unavailable");
  await assert.rejects(open.reset("k"), (e) => e.code === "worker_unavailable");
  assert.ok(errors.length >= 6 && errors.every((e) => e instanceof WorkerUnavailableError));
  // Bad input is still refused as bad input during an outage.
  await assert.rejects(open.limit("k", { now: T0, cost: 0 }), (e) => e.code === "invalid_cost");

  // A Worker that never answers: the timeout makes it an outage too (nothing here is timed).
  const silent = await silentServer();
  try {
    const hung = make(silent.url, "closed", { timeoutMs: 200 });
    const d = await hung.limit("k", { now: T0 });
    assert.equal(d.allowed, false);
    assert.equal(d.degraded, "unavailable");
    // Never reached: no policy known, so the limits given are the figures.
    assert.equal(d.limit, 5);
  } finally {
    await silent.close();
  }
});

test("several keys: the Worker decides limit([k1, k2]) as memory does, all or nothing", async () => {
  const store = new WorkerStore({ url: s.url, policy: "pair", timeoutMs: PATIENT });
  const worker = new RateLimiter({ store });
  const memory = new RateLimiter({ name: "total", algorithm: "fixed-window", quota: "6/h" });
  const [a, b, c] = ["sev:a", "sev:b", "sev:c"];
  const trace = [[a, b, 2], [a, c, 3], [b, c, 1], [a, b, 1], [a, c, 1], [b, c, 4], [c, a, 1]];
  for (const [k1, k2, cost] of trace) {
    const got = await worker.limit([k1, k2], { now: T0, cost });
    const want = memory.limit([k1, k2], { now: T0, cost });
    const { estimate: _e, ...decision } = got;
    assert.deepEqual(decision, want, `limit([${k1}, ${k2}]) cost ${cost}`);
    assert.deepEqual(worker.headers(got, { now: T0 }), memory.headers(want, { now: T0 }));
  }
  const peeked = await worker.peek([a, b], { now: T0 });
  const { estimate: _p, ...peekDecision } = peeked;
  assert.deepEqual(peekDecision, memory.peek([a, b], { now: T0 }));
  await worker.refund([a, c], { now: T0, cost: 2 });
  memory.refund([a, c], { now: T0, cost: 2 });
  for (const k of [a, b, c]) assert.deepEqual(await worker.export(k), memory.export(k), `${k}'s state`);
});

test("two-key hits from concurrent clients on overlapping keys: every key admits exactly its limit, none charged for a denial", async () => {
  const LIMIT = 6;
  const users = ["u0", "u1", "u2", "u3"].map((u) => `race:${u}`);
  const orgs = ["o0", "o1"].map((o) => `race:${o}`);
  // Eight clients, each its own store and limiter, as separate processes would be.
  const clients = Array.from({ length: 8 }, () => new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "pair", timeoutMs: PATIENT, blockedCache: false }) }));
  const admitted = new Map([...users, ...orgs].map((k) => [k, 0]));
  let denied = 0;
  let n = 0;
  await Promise.all(
    clients.map(async (limiter, c) => {
      for (let i = 0; i < 10; i++) {
        const j = c * 10 + i;
        const keys = [users[j % users.length], orgs[Math.floor(j / users.length) % orgs.length]];
        const d = await limiter.limit(keys, { now: T0 });
        assert.equal(d.degraded, undefined, JSON.stringify(d));
        n++;
        if (d.allowed) for (const k of keys) admitted.set(k, admitted.get(k) + 1);
        else denied++;
      }
    }),
  );
  assert.equal(n, 80);
  // The orgs bind (two orgs of 6 against four users of 6): each admits exactly its limit.
  for (const o of orgs) assert.equal(admitted.get(o), LIMIT, `${o} admitted ${admitted.get(o)}`);
  assert.equal(denied, 80 - 2 * LIMIT);
  // What each key was charged, read back from the Worker, is what it admitted: no key counted
  // without the other, none charged for a denied hit, none beyond its limit.
  const reader = new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "pair", timeoutMs: PATIENT }) });
  // The state each key holds is, byte for byte, memory's after exactly its admitted hits.
  const memory = new RateLimiter({ name: "total", algorithm: "fixed-window", quota: "6/h" });
  for (const k of [...users, ...orgs]) {
    assert.ok(admitted.get(k) <= LIMIT, `${k} admitted ${admitted.get(k)}`);
    for (let i = 0; i < admitted.get(k); i++) assert.equal(memory.limit(k, { now: T0 }).allowed, true);
    assert.deepEqual(await reader.export(k), memory.export(k), `${k}: charged other than its ${admitted.get(k)} admitted hits`);
  }
});

test("export/import through the Worker: memory's bytes out and in; bad bytes refused as memory refuses them", async () => {
  const options = { limits: [{ name: "burst", algorithm: "token-bucket", quota: "10/s", burst: 4 }, { name: "minute", algorithm: "sliding-log", quota: "7/m" }] };
  const worker = new RateLimiter({ ...options, store: new WorkerStore({ url: s.url, policy: "moved", timeoutMs: PATIENT }) });
  const memory = new RateLimiter(options);
  const key = `moved:${process.pid}`;
  assert.equal(await worker.export(key), null);
  for (let i = 0; i < 3; i++) memory.limit("m", { now: T0 + i });
  await worker.import(key, memory.export("m"));
  assert.deepEqual(await worker.export(key), memory.export("m"), "the Worker holds memory's bytes");
  for (let i = 0; i < 3; i++) {
    const [got, want] = [await worker.limit(key, { now: T0 + 10 + i }), memory.limit("m", { now: T0 + 10 + i })];
    for (const f of FIELDS) assert.equal(got[f], want[f], f);
    // Headers of a one-key decision of two limits: about the limit the figures are (the binding one).
    const [h, m] = [worker.headers(got, { now: T0 + 10 + i }), memory.headers(want, { now: T0 + 10 + i })];
    for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]) assert.equal(h[name], m[name], name);
  }
  const back = new RateLimiter(options);
  back.import("m", await worker.export(key));
  assert.deepEqual(back.export("m"), memory.export("m"), "and back into memory");

  const before = await worker.export(key);
  const other = new RateLimiter({ algorithm: "gcra", quota: "5/s" });
  other.limit("x", { now: T0 });
  for (const bad of [new Uint8Array([1, 2, 3]), other.export("x")]) {
    let want;
    try {
      memory.import("m", bad);
    } catch (e) {
      want = e;
    }
    await assert.rejects(worker.import(key, bad), (e) => e.constructor === want.constructor && e.code === want.code && e.code === "invalid_state" && e.field === "state");
    assert.deepEqual(await worker.export(key), before, "nothing changed");
  }
  await assert.rejects(worker.import(key, "bytes"), TypeError);
  await worker.import(key, null);
  assert.equal(await worker.export(key), null);
});

test("the blocked-key cache: a denied key's next denials are the core's over its state, here, marked estimate", async () => {
  const sent = [];
  const counting = (url, init) => {
    sent.push(`${init.method} ${new URL(url).pathname}`);
    return fetch(url, init);
  };
  const make = (blockedCache) =>
    new RateLimiter({ store: new WorkerStore({ url: s.url, policy: "five", timeoutMs: PATIENT, fetch: counting, blockedCache }) });
  const memory = new RateLimiter({ name: "per-minute", algorithm: "fixed-window", quota: "5/m" });
  const cached = make(60_000);
  const key = `cache:${process.pid}`;
  for (let i = 0; i < 6; i++) await cached.limit(key, { now: T0 + i });
  for (let i = 0; i < 6; i++) memory.limit(key, { now: T0 + i });
  await cached.close(); // the state read after the denial has landed
  const before = sent.length;
  for (const cost of [1, 3]) {
    const d = await cached.limit(key, { now: T0 + 100, cost });
    const want = memory.limit(key, { now: T0 + 100, cost });
    assert.equal(d.estimate, true);
    for (const f of FIELDS) assert.equal(d[f], want[f], f);
  }
  assert.equal(sent.length, before, "answered without a request");
  // A reset here drops the entry at once: the next hit is the Worker's.
  await cached.reset(key);
  const fresh = await cached.limit(key, { now: T0 + 200 });
  assert.equal(fresh.allowed, true);
  assert.equal(fresh.estimate, undefined);

  // blockedCache: false asks the Worker every time.
  const uncached = make(false);
  const other = `${key}:off`;
  await uncached.limit("warm", { now: T0 }); // its first call also asks for the policy
  const start = sent.length;
  for (let i = 0; i < 8; i++) await uncached.limit(other, { now: T0 });
  assert.deepEqual(sent.slice(start), Array(8).fill("POST /v1/limit"), "every hit a request, no state read");
});

/** The multi-key trace's first hits (one to three keys each) replayed through WorkerStore. */
const MULTI_HITS = 300;

test("the multi-key trace through WorkerStore: limit(keys) decides every hit as memory does", async () => {
  const hits = nativeFixture(true)
    .split("\n")
    .filter(Boolean)
    .slice(0, MULTI_HITS)
    .map((line, i) => {
      const [l, key, now, cost] = line.split(",");
      return { i, l: +l, keys: key.split("+"), now: +now, cost: +cost };
    });
  assert.ok(hits.filter((h) => h.keys.length > 1).length > MULTI_HITS / 3, "most hits name several keys");
  const memory = MULTI_LIMITERS.map((o) => new RateLimiter(o));
  const worker = MULTI_LIMITERS.map((_, l) => new RateLimiter({ store: new WorkerStore({ url: s.url, policy: `m${l}`, timeoutMs: PATIENT }) }));
  const mismatches = [];
  let denials = 0;
  // In trace order: the hits share keys, and a key's hits must arrive in order.
  for (const h of hits) {
    const keys = h.keys.map((k) => `multi:${k}`);
    const key = keys.length === 1 ? keys[0] : keys;
    const want = memory[h.l].limit(key, { now: h.now, cost: h.cost });
    const got = await worker[h.l].limit(key, { now: h.now, cost: h.cost });
    if (!got.allowed) denials++;
    const why = differs(got, want) ?? (keys.length > 1 ? (isDeepStrictEqual(got.limits, want.limits) ? null : `limits: ${JSON.stringify(got.limits)}, memory ${JSON.stringify(want.limits)}`) : null);
    if (why !== null) mismatches.push(`hit ${h.i} (${keys.join("+")}): ${why}`);
  }
  assert.deepEqual(mismatches.slice(0, 5), [], `${mismatches.length} of ${hits.length} hits differ`);
  assert.ok(denials > MULTI_HITS / 5, `denials: ${denials}`);
});
