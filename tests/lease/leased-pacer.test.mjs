// LeasedPacer against the real Worker in workerd (Miniflare), on the real clock, with
// holders in this process: grant on start, the warm-up window, pacing to the held rate,
// release on close, fair shares and a handoff between two holders, abort, pace(fn), and every error.
// Pools are 500/s as 20 partitions of 25/s (window 1 s), one per test.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { LeasedPacer, LeaseError, PacerCostError, PacerQueueFullError } from "tollgate";
import { startWorker, Miniflare, build, TOKEN, CAPACITY, WINDOW_MS, sleep, eventually } from "./worker.mjs";
import { maxInWindow } from "./service.mjs";

let w;
before(async () => {
  w = await startWorker(["basic", "handoff", "starved", "abort", "errors", "pace", "edge"]);
});
after(async () => {
  await w?.stop();
});

const options = (pool, holder, partitions, extra = {}) => ({ url: w.url, pool, holder, partitions, ttlMs: 3000, token: TOKEN, ...extra });

/** Acquires `cost` in a loop until `stop()` or the pacer closes; records each start. */
async function drive(lp, holder, cost, sends, stop) {
  while (!stop()) {
    try {
      sends.push({ holder, start: await lp.acquire(cost), cost });
    } catch (e) {
      if (e instanceof LeaseError && e.code === "closed") return;
      throw e;
    }
  }
}

test("grants on start, counts new partitions one window later, paces to the held rate; close releases", async () => {
  // A TTL that outlasts the sends below (until 2.3 s after the answer) even when the pool
  // answers slowly: the rate used is the first grant's, not a question of how soon a loaded
  // machine's renewals come back (a lease past its usable end rightly sends nothing).
  const ttlMs = 6000;
  const asked = Date.now();
  const lp = new LeasedPacer(options("basic", "solo", 4, { ttlMs }));
  const st = await lp.start();
  const answered = Date.now();
  assert.deepEqual([st.state, st.partitions.length, st.heldRate, st.rate, st.window], ["running", 4, 100, 0, WINDOW_MS]);
  // The lease is measured from the request's send: usable until sent + ttl - margin (a fifth
  // of the TTL, at most 1000 ms).
  assert.ok(st.usableUntil >= asked + ttlMs - 1000 && st.usableUntil <= answered + ttlMs - 1000, JSON.stringify(st));
  const pool = await w.status("basic");
  assert.deepEqual(pool.leases.map((l) => [l.holder, l.partitions.length]), [["solo", 4]]);
  const sends = [];
  await drive(lp, "solo", 5, sends, () => Date.now() > answered + 2300);
  // Nothing before one window after the answer; then 100/s, released 20 per 200 ms grain.
  assert.ok(sends[0].start >= asked + WINDOW_MS, `first start ${sends[0].start - asked} ms after asking`);
  const max = maxInWindow(sends, WINDOW_MS);
  assert.ok(max <= 100, `${max} units in one window at 100/s`);
  assert.ok(max >= 80, `only ${max} units in the busiest window: the held rate went unused`);
  assert.equal(lp.rate, 100);
  assert.deepEqual(await lp.close(), { released: 4 });
  const after = await w.status("basic");
  assert.deepEqual([after.free, after.leases], [20, []]);
  assert.equal(lp.status.state, "closed");
  await assert.rejects(lp.acquire(1), (e) => e instanceof LeaseError && e.code === "closed");
  assert.equal(lp.close(), lp.close(), "close is idempotent");
});

test("fair share, then handoff: two holders that want everything split it; when one closes, the other takes all, a window later", async () => {
  const a = new LeasedPacer(options("handoff", "a", 20));
  const b = new LeasedPacer(options("handoff", "b", 20));
  assert.equal((await a.start()).heldRate, CAPACITY);
  assert.equal((await b.start()).heldRate, 0, "the pool is a's for now: b waits and asks again");
  const sends = [];
  let bDone = false;
  const runA = drive(a, "a", 25, sends, () => false);
  const runB = drive(b, "b", 25, sends, () => bDone);
  // b's demand is on record: at its next renewal a keeps its fair share, 10 of 20, and b
  // takes the other 10 at its next ask.
  // (Each step is one renewal or ask, a second apart; the bound only stops a test that never gets there.)
  const until = Date.now() + 15_000;
  while (!(a.status.partitions.length === 10 && b.status.partitions.length === 10) && Date.now() < until) await sleep(50);
  assert.deepEqual([a.status.heldRate, b.status.heldRate], [CAPACITY / 2, CAPACITY / 2], "both hold their fair share");
  while (!sends.some((s) => s.holder === "b")) await sleep(50);
  assert.deepEqual(await a.close(), { released: 10 });
  const closedAt = Date.now();
  await runA;
  // b's next renewal (a third of the TTL) takes the other 10; it counts them a window later.
  while (!sends.some((s) => s.holder === "b" && s.start > closedAt + WINDOW_MS + 1400)) await sleep(50);
  bDone = true;
  await runB;
  const max = maxInWindow(sends, WINDOW_MS);
  assert.ok(max <= CAPACITY, `${max} units in one window, capacity ${CAPACITY}`);
  assert.ok(sends.filter((s) => s.holder === "a").length >= 10, "a sent at its rate before closing");
  assert.equal(b.status.heldRate, CAPACITY);
  assert.deepEqual(await b.close(), { released: 20 });
  console.log(`# fair share then handoff: busiest window ${max}/${CAPACITY} units`);
});

test("a starved holder far from the pool keeps its demand on record: it gets its share, and the near holder does not flap", async () => {
  // The pool remembers a request for half its TTL. b (TTL 3 s) is 400 ms each way from the
  // Worker, a (TTL 600 ms) is near and renews every 200 ms. A hog holds all 20 partitions
  // for 2 s, so both start with nothing. Were b's asks timed from each answer (a round trip
  // plus its backoff of up to 1 s: ~1.8 s), its demand would lapse for ~0.3 s of every
  // cycle, a would take back the 10 it had given up, and b would never get a partition.
  const slow = (ms) => async (url, init) => {
    await sleep(ms);
    const r = await fetch(url, init);
    await sleep(ms);
    return r;
  };
  await w.grant("starved", "hog", 20, 2000);
  const a = new LeasedPacer(options("starved", "a", 20, { ttlMs: 600 }));
  const b = new LeasedPacer(options("starved", "b", 20, { fetch: slow(400) }));
  await a.start();
  await b.start();
  const samples = [];
  const until = Date.now() + 6500;
  while (Date.now() < until) {
    samples.push([a.status.partitions.length, b.status.partitions.length]);
    await sleep(50);
  }
  await Promise.all([a.close(), b.close()]);
  const first = samples.findIndex(([, held]) => held === 10);
  assert.ok(first >= 0, `b never held its share: (a, b) held ${JSON.stringify(samples.filter((_, i) => i % 10 === 0))}`);
  const after = samples.slice(first);
  assert.ok(after.every(([ha, hb]) => ha === 10 && hb === 10), `after b got its share: ${JSON.stringify(after)}`);
});

test("asks while holding nothing are timed send to send, on empty answers and on transient errors (virtual clock, fake pool)", async () => {
  // The same rule as above without a Worker: with an 800 ms round trip, the gap between two
  // asks stays under half the TTL (the pool's memory of a demand), after empty answers and
  // after 503s alike.
  for (const answer of ["empty", "503"]) {
    const TTL = 3000, RTT = 800;
    let now = 1_700_000_000_000;
    const sends = [];
    const fetch = async (url, init) => {
      if (init.method === "POST") sends.push(now);
      now += RTT;
      return answer === "empty"
        ? Response.json({ partitions: [], rate: 0, window: 1000, ttlMs: TTL, free: 0 })
        : Response.json({ error: { code: "unavailable", message: "try later" } }, { status: 503 });
    };
    const clock = {
      now: () => now,
      sleep: async (ms, signal) => {
        if (signal?.aborted) throw signal.reason;
        now += ms;
        await new Promise((r) => setImmediate(r));
      },
    };
    const lp = new LeasedPacer({ url: "http://pool.test", pool: "p", holder: "far", partitions: 20, ttlMs: TTL, fetch, ...clock });
    lp.start().catch(() => {}); // on 503s it keeps asking and does not settle
    while (sends.length < 10) await new Promise((r) => setImmediate(r));
    await lp.close().catch((e) => assert.equal(answer, "503", e.message)); // its release meets a 503 too
    const gaps = sends.slice(1).map((t, i) => t - sends[i]);
    assert.ok(Math.max(...gaps) < TTL / 2, `${answer}: gaps between asks ${gaps.join(", ")} ms, the pool forgets a demand after ${TTL / 2}`);
  }
});

test("abort: waiting for a lease that does not come, behind another waiter, or already aborted", async () => {
  await w.grant("abort", "hog", 20, 60_000); // someone else holds the whole pool
  const lp = new LeasedPacer(options("abort", "waits", 2, { maxQueue: 2 }));
  assert.equal((await lp.start()).heldRate, 0);
  await assert.rejects(lp.acquire(1, { signal: AbortSignal.timeout(300) }), { name: "TimeoutError" });
  assert.equal(lp.queued, 0);
  const ctl = new AbortController();
  const first = lp.acquire(1);
  const second = lp.acquire(1, { signal: ctl.signal });
  await assert.rejects(lp.acquire(1), PacerQueueFullError);
  ctl.abort(new Error("not needed"));
  await assert.rejects(second, /not needed/);
  assert.equal(lp.queued, 1, "the head still waits");
  await assert.rejects(lp.acquire(1, { signal: AbortSignal.abort() }), { name: "AbortError" });
  // Closing rejects the head; the pool never granted anything, so nothing is released.
  const closing = lp.close();
  await assert.rejects(first, (e) => e instanceof LeaseError && e.code === "closed");
  assert.deepEqual(await closing, { released: 0 });
  assert.deepEqual((await w.status("abort")).leases.map((l) => l.holder), ["hog"]);
});

test("pace(fn) calls fn under the lease and a 429's Retry-After pushes the schedule back", async () => {
  const lp = new LeasedPacer(options("pace", "pacer", 20));
  const calls = [];
  const call = lp.pace(
    async (n) => {
      calls.push([n, Date.now()]);
      return n === 1 ? new Response("slow down", { status: 429, headers: { "Retry-After": "1" } }) : new Response("ok");
    },
    { cost: (n) => n },
  );
  assert.equal((await call(1)).status, 429);
  assert.equal((await call(2)).status, 200);
  assert.ok(calls[1][1] - calls[0][1] >= 990, `the second call came ${calls[1][1] - calls[0][1]} ms after the 429`);
  await assert.rejects(call(101), PacerCostError, "500/s in 200 ms grains releases at most 100");
  await lp.close();
});

test("errors: the Worker's refusals are LeaseErrors with its code; bad costs and options name the field", async () => {
  const refused = [
    [{ pool: "nope" }, "unknown_pool", 404],
    [{ token: "wrong" }, "unauthorized", 401],
    [{ partitions: 21 }, "invalid_partitions", 400],
    [{ ttlMs: 120_000 }, "invalid_ttl", 400],
  ];
  for (const [o, code, status] of refused) {
    const lp = new LeasedPacer({ ...options("errors", "e", 1), ...o });
    const err = await lp.start().catch((e) => e);
    assert.ok(err instanceof LeaseError, String(err));
    assert.deepEqual([err.code, err.status, err.transient, lp.status.state], [code, status, false, "failed"]);
    await assert.rejects(lp.acquire(1), (e) => e === err, "acquire rejects with the same error");
    assert.deepEqual(await lp.close(), { released: 0 });
  }
  // Unreachable: not an answer, so it keeps asking (transient) and a close cannot release.
  const down = new LeasedPacer({ ...options("errors", "e", 1), url: "http://127.0.0.1:9" });
  const pending = down.acquire(1);
  await eventually("the refused connection", () => down.status.lastError);
  assert.deepEqual([down.status.lastError?.code, down.status.lastError?.transient, down.status.state], ["network", true, "running"]);
  const closing = down.close();
  await assert.rejects(pending, (e) => e.code === "closed");
  await assert.rejects(closing, (e) => e instanceof LeaseError && e.code === "network");
  // A cost that can never fit the held rate (1 partition: 25/s, 5 per 200 ms grain).
  const one = new LeasedPacer(options("errors", "one", 1));
  await one.start();
  const err = await one.acquire(6).catch((e) => e);
  assert.ok(err instanceof PacerCostError && err instanceof RangeError, String(err));
  assert.deepEqual([err.cost, err.maxCost, err.code], [6, 5, "pacer_cost_exceeds_capacity"]);
  assert.match(err.message, /cost 6 can never be paced at the held rate \(25 per 1000 ms\)/);
  await assert.rejects(one.acquire(0), { name: "RangeError", message: /cost .* 0/ });
  await assert.rejects(one.acquire("1"), { name: "TypeError", message: /cost must be a number/ });
  assert.deepEqual(await one.close(), { released: 1 });
  // Options: TypeError/RangeError naming the field and the value; nothing is sent.
  const base = { url: "http://127.0.0.1:9", pool: "p", holder: "h", partitions: 1, ttlMs: 3000 };
  const cases = [
    [undefined, TypeError, /options must be an object/],
    [{ ...base, url: undefined }, TypeError, /url must be .* got undefined/],
    [{ ...base, url: "limits.example.com" }, TypeError, /url must be an absolute http\(s\) URL .*limits\.example\.com/],
    [{ ...base, url: "ftp://x" }, TypeError, /url must be http or https/],
    [{ ...base, pool: 5 }, TypeError, /pool must be a string, got number 5/],
    [{ ...base, holder: "" }, RangeError, /holder must not be empty/],
    [{ ...base, holder: "é".repeat(65) }, RangeError, /holder must be at most 128 bytes .* 130 bytes/],
    [{ ...base, partitions: 0 }, RangeError, /partitions must be a whole number of at least 1, got 0/],
    [{ ...base, partitions: "4" }, TypeError, /partitions must be a number, got "4"/],
    [{ ...base, ttlMs: 2.5 }, RangeError, /ttlMs must be a whole number of at least 3, got 2\.5/],
    [{ ...base, renewMargin: 2000 }, RangeError, /renewMargin must be at most half of ttlMs \(1500\), got 2000/],
    [{ ...base, token: "" }, RangeError, /token must not be empty/],
    [{ ...base, grain: "soon" }, TypeError, /grain/],
    [{ ...base, maxQueue: -1 }, RangeError, /maxQueue .* -1/],
    [{ ...base, fetch: "x" }, TypeError, /fetch must be a function/],
    [{ ...base, now: 1 }, TypeError, /now must be a function/],
  ];
  for (const [o, type, message] of cases) {
    assert.throws(() => new LeasedPacer(o), (e) => e instanceof type && message.test(e.message), `${JSON.stringify(o)}: ${message}`);
  }
  // The CommonJS entry has it too.
  const cjs = createRequire(import.meta.url)("tollgate");
  assert.equal(new cjs.LeasedPacer(base).status.state, "idle");
  assert.throws(() => new cjs.LeasedPacer({ ...base, partitions: 0 }), RangeError);
});

test("in workerd (the package's workerd entry), a LeasedPacer grants, paces and releases", async () => {
  // A Worker of the user's own, in a second workerd, holding a lease of the real Worker, bundled
  // as wrangler does: the "workerd" condition picks the package's loaders for its "#wasm"
  // imports, the .wasm files left external (workerd imports them as compiled modules), in a
  // folder of its own with the installed package's .wasm files one level up, where the loaders'
  // ../*.wasm find them.
  const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "node_modules/tollgate/dist");
  const root = mkdtempSync(path.join(tmpdir(), "tollgate-lease-workerd-"));
  for (const f of readdirSync(dist).filter((f) => f.endsWith(".wasm"))) copyFileSync(path.join(dist, f), path.join(root, f));
  const outfile = path.join(root, "worker/edge.js");
  await build({
    stdin: {
      contents: `
      import { LeasedPacer } from "tollgate";
      export default {
        async fetch(request, env) {
          const lp = new LeasedPacer({ url: env.URL, pool: "edge", holder: "edge-1", partitions: 2, ttlMs: 3000, token: env.TOKEN });
          const st = await lp.start();
          const start = await lp.acquire(5);
          const { released } = await lp.close();
          return Response.json({ heldRate: st.heldRate, waited: start - st.usableUntil + 3000 - 600, released });
        },
      };`,
      resolveDir: path.dirname(fileURLToPath(import.meta.url)),
      loader: "js",
    },
    bundle: true, format: "esm", platform: "neutral", conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"], external: ["*.wasm"], outfile, logLevel: "warning",
  });
  const mf = new Miniflare({
    modules: true,
    modulesRoot: root,
    scriptPath: outfile,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    bindings: { URL: w.url, TOKEN },
    compatibilityDate: "2026-04-01",
  });
  try {
    const res = await mf.dispatchFetch("http://localhost/");
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.heldRate, 50);
    assert.equal(body.released, 2);
    assert.ok(body.waited >= WINDOW_MS, `the first start came ${body.waited} ms after the grant was asked`);
  } finally {
    await mf.dispose();
    rmSync(root, { recursive: true, force: true });
  }
});
