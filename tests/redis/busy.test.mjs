// A busy process is not a Redis outage. The process holds its event loop (a synchronous loop,
// as a large JSON.parse or a GC pause does) for twice `timeoutMs` after each call while Redis
// answers at once: every decision is memory's, none degraded, for both clients and for
// `failure` "open", "closed" and "insurance"; the synced store's first read and rounds are not
// lost either. And Redis that really stops answering (SIGSTOP) is still an outage, answered by
// the failure mode within `timeoutMs` plus the slack docs/reliability.md states.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect, reconnected } from "./clients.mjs";
import { createClient } from "redis";
import { Redis } from "ioredis";

/** The store's timeout in the busy tests: Redis on loopback answers in well under a millisecond. */
const T = 100;
const FAILURES = ["open", "closed", "insurance"];
const config = { algorithm: "sliding-log", limit: 3, window: "1m" };
const T0 = 1_700_000_000_000;

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

/** Holds the event loop for `ms`: nothing else in this process runs meanwhile. */
function hold(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/**
 * The timeout rule of docs/reliability.md, run beside a call on this process's own timers, so
 * that the bound on the store's verdict counts what the rule counts, whatever the machine did
 * meanwhile: steps of a quarter of `ms` (at least 5 ms), each counted for its planned length;
 * a step that fired late by more than a step means the process was held, and the count starts
 * again (here from 10 ms earlier already: near that edge, the later of the two verdicts). On a
 * process that runs on time, it resolves `ms` after the call. Resolves with when its count of
 * `ms` ended, in ms after the call.
 */
function ruleBeside(ms) {
  const step = Math.max(ms / 4, 5);
  const begin = performance.now();
  return new Promise((resolve) => {
    let counted = 0;
    const arm = (now, delay) => {
      const due = now + delay;
      setTimeout(() => {
        const at = performance.now();
        if (at - due > step - 10) {
          counted = 0;
          return arm(at, Math.min(step, ms));
        }
        counted += delay;
        const left = ms - counted;
        if (left >= 1) return arm(at, Math.min(step, left));
        resolve(at - begin);
      }, delay);
    };
    arm(begin, Math.min(step, ms));
  });
}

/**
 * Starts `call()`, holds the loop for 2 x T, and resolves to what the call settles with. `when`:
 * "at once" holds before the call's command is even written (the caller's own synchronous
 * work); "in flight" lets one turn pass first, so the command is on its way and Redis's reply
 * arrives while the loop is held.
 */
async function busy(call, when) {
  const p = call();
  if (when === "in flight") await new Promise(setImmediate);
  hold(2 * T);
  return p;
}

/** The store's options for `failure`, with every error the failure mode absorbed kept in `errors`. */
function storeOptions(prefix, failure, errors) {
  return { prefix, failure, timeoutMs: T, onError: (e) => errors.push(e), ...(failure === "insurance" ? { insurance: 0.5 } : {}) };
}

for (const kind of CLIENTS) {
  test(`the first call while the client still connects (its defaults: an offline queue), the loop held 2 x timeoutMs once it is queued: exact, not degraded (${kind})`, { timeout: 60_000 }, async (t) => {
    const client = kind === "ioredis" ? new Redis({ host: "127.0.0.1", port: server.port }) : createClient({ socket: { host: "127.0.0.1", port: server.port } });
    client.on("error", () => {});
    const connecting = kind === "ioredis" ? null : client.connect();
    t.after(async () => {
      await connecting;
      if (kind === "ioredis") client.disconnect();
      else client.destroy();
    });
    const errors = [];
    const redis = new RateLimiter({ ...config, store: new RedisStore(client, storeOptions(`connecting:${kind}:`, "open", errors)) });
    const memory = new RateLimiter(config);
    const p = redis.limit("k", { now: T0 });
    // The call's first command is sent within the tick (the store batches a tick's calls), and
    // queued by the client: one turn of the loop is too short for it to connect and be ready.
    await new Promise(setImmediate);
    if (kind === "ioredis") assert.ok(client.offlineQueue.length > 0, `queued (${client.status})`);
    hold(2 * T);
    assert.deepEqual(await p, memory.limit("k", { now: T0 }));
    assert.deepEqual(errors, []);
  });

  for (const failure of FAILURES) {
    test(`the loop held 2 x timeoutMs after each call: every decision exact, none degraded (${kind}, failure ${failure})`, { timeout: 60_000 }, async (t) => {
      const { client, close } = await connect(kind, server.port);
      t.after(close);
      for (const when of ["at once", "in flight"]) {
        const errors = [];
        const store = new RedisStore(client, storeOptions(`busy:${kind}:${failure}:${when}:`, failure, errors));
        const redis = new RateLimiter({ ...config, store });
        const memory = new RateLimiter(config);
        // One key past its limit (the batched one-key script), a peek and a refund (reads and
        // the guarded calls), two keys at once (the all-or-nothing script).
        const calls = [];
        for (let i = 0; i < 5; i++) calls.push(["limit", "k", { now: T0 + i }]);
        calls.push(["peek", "k", { now: T0 + 5 }], ["refund", "k", { now: T0 + 6 }], ["limit", "k", { now: T0 + 7 }]);
        for (let i = 0; i < 4; i++) calls.push(["limit", ["a", "b"], { now: T0 + 8 + i }]);
        for (const [i, [method, key, options]] of calls.entries()) {
          const got = await busy(() => redis[method](key, options), when);
          const want = memory[method](key, options);
          assert.deepEqual(got, want, `${when}, call ${i}: ${method}(${JSON.stringify(key)})`);
        }
        assert.deepEqual(errors, [], `${when}: the failure mode absorbed errors from a healthy Redis`);
        // And what Redis holds is what memory holds.
        assert.deepEqual(await redis.export("k"), memory.export("k"), `${when}: the state in Redis`);
      }
    });
  }

  test(`the loop held 2 x timeoutMs: the synced store's first read and its rounds are not lost (${kind})`, { timeout: 60_000 }, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const windowed = { algorithm: "fixed-window", limit: 3, window: "1h" };
    for (const when of ["at once", "in flight"]) {
      // Today: the counts pushed expire with their window, on the real clock.
      const now = Date.now();
      const errors = [];
      const options = { ...storeOptions(`busy-sync:${kind}:${when}:`, "open", errors), syncRate: 60_000 };
      // Another process filled the key and pushed its counts.
      const other = new RateLimiter({ ...windowed, store: new RedisStore(client, options) });
      for (let i = 0; i < 3; i++) assert.equal((await other.limit("k", { now })).allowed, true);
      await other.close();
      // This process sees the key for the first time while its loop is held: the merged counts
      // are read, not skipped (which would decide from zero and admit).
      const mine = new RateLimiter({ ...windowed, store: new RedisStore(client, options) });
      const d = await busy(() => mine.limit("k", { now }), when);
      assert.equal(d.allowed, false, `${when}: decided without the other process's counts`);
      assert.equal(d.remaining, 0);
      await busy(() => mine.sync(now), when);
      assert.deepEqual(errors, [], `${when}: a round was taken for an outage`);
      await mine.close();
    }
  });

  for (const failure of FAILURES) {
    test(`Redis stopped (SIGSTOP): the failure mode answers within timeoutMs plus the slack (${kind}, failure ${failure})`, { timeout: 60_000 }, async (t) => {
      const { client, close } = await connect(kind, server.port);
      t.after(close);
      // Longer than the busy tests' T, so that a loaded machine's timers, late by a few tens of
      // ms, rarely restart the count (later than a quarter of it is a held process). When they
      // do, or run late, the rule run beside the call counts it too: the bound follows it.
      const timeoutMs = 600;
      const slack = Math.max(timeoutMs / 4, 5); // docs/reliability.md
      const turn = 20; // the one turn of the event loop the verdict waits for, on an idle loop
      const errors = [];
      const store = new RedisStore(client, { ...storeOptions(`stop:${kind}:${failure}:`, failure, errors), timeoutMs });
      const limiter = new RateLimiter({ ...config, store });
      assert.equal((await limiter.limit("warm")).degraded, undefined);
      server.pause();
      let d;
      let elapsed;
      let held;
      let rule;
      let heldRule;
      try {
        let start = performance.now();
        const ruled = ruleBeside(timeoutMs);
        d = await limiter.limit("k");
        elapsed = performance.now() - start;
        rule = await ruled;
        // Held for twice timeoutMs right after the call: the count starts once the process runs again.
        start = performance.now();
        const heldRuled = ruleBeside(timeoutMs);
        const p = limiter.limit("k2");
        hold(2 * timeoutMs);
        held = await p;
        held.elapsed = performance.now() - start;
        heldRule = await heldRuled;
      } finally {
        server.resume();
      }
      await reconnected(kind, client);
      assert.equal(d.degraded, "unavailable");
      assert.equal(d.allowed, failure !== "closed");
      // The rule's count ended at `rule` (timeoutMs, on a process that ran on time); the verdict
      // comes within the slack and a turn of it.
      assert.ok(elapsed >= timeoutMs - 1, `answered after ${elapsed} ms, before timeoutMs`);
      assert.ok(elapsed <= rule + slack + turn, `answered after ${elapsed} ms, more than ${slack} (+ a turn) after the rule's ${rule.toFixed(1)} ms`);
      assert.equal(held.degraded, "unavailable");
      assert.ok(held.elapsed >= 3 * timeoutMs - 1, `held, answered after ${held.elapsed} ms: the time held was counted`);
      assert.ok(heldRule >= 3 * timeoutMs - 1, `the rule counts from the hold's end: ${heldRule} ms`);
      assert.ok(held.elapsed <= heldRule + slack + turn, `held, answered after ${held.elapsed} ms, more than ${slack} (+ a turn) after the rule's ${heldRule.toFixed(1)} ms`);
      assert.equal(errors.length, 2);
      console.log(`# SIGSTOP (${kind}, ${failure}): answered after ${elapsed.toFixed(1)} ms (timeoutMs ${timeoutMs}, slack ${slack}; the rule's count ended at ${rule.toFixed(1)}); held ${2 * timeoutMs} ms first: ${held.elapsed.toFixed(1)} ms (the rule's: ${heldRule.toFixed(1)})`);
    });
  }
}
