// Waiting in line across processes (docs/concurrency.md "Waiting in line"): Node processes
// wait for one key's concurrency slots over one redis-server and one valkey-server, the line
// kept by the core in the key's state. Admission follows ticket order, never more than the
// limit in flight (an "upstream" in this process counts what is inside), a killed waiter
// stops blocking the line after its claim window, a full line refuses at once, and `maxWait`
// refuses in time.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { connect } from "./clients.mjs";

const WAITER = fileURLToPath(new URL("./waiter.mjs", import.meta.url));
const VALKEY = fileURLToPath(new URL("../../target/valkey/bin/valkey-server", import.meta.url));
if (!existsSync(VALKEY)) throw new Error(`${VALKEY} is missing: scripts/setup.sh redis installs it`);
/** tollgate::concurrency::queue::CLAIM_WINDOW. */
const CLAIM_WINDOW_MS = 5000;

const servers = {};
let upstream;
/** What the upstream saw: in flight now, the most at once, and who came in, in order. */
const seen = { now: 0, max: 0, order: [] };

before(async () => {
  [servers.redis, servers.valkey] = await Promise.all([RedisServer.start(), RedisServer.start([], undefined, VALKEY)]);
  upstream = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    seen.now++;
    seen.max = Math.max(seen.max, seen.now);
    seen.order.push(Number(url.searchParams.get("who")));
    // Counted out when the answer is written: before the waiter can release.
    setTimeout(() => {
      seen.now--;
      res.end("done");
    }, Number(url.searchParams.get("ms")));
  });
  await new Promise((resolve) => upstream.listen(0, "127.0.0.1", resolve));
});
after(() => Promise.all([servers.redis?.stop(), servers.valkey?.stop(), new Promise((r) => upstream?.close(r))]));

function reset() {
  seen.now = 0;
  seen.max = 0;
  seen.order = [];
}

/** Starts a waiter process; resolves once it said "start", with its messages to come. */
function spawnWaiter(port, kind, job) {
  const child = fork(WAITER, [String(port), kind, JSON.stringify({ ...job, upstreamPort: upstream.address().port })], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const w = { child, who: job.who, answer: null, exited: new Promise((r) => child.once("exit", r)) };
  w.answered = new Promise((resolve) => {
    child.on("message", (m) => {
      if (m.type === "admitted" || m.type === "refused") {
        w.answer = { ...m, at: performance.now() };
        resolve(w.answer);
      }
    });
    child.once("exit", () => resolve(w.answer));
  });
  return new Promise((resolve) => child.on("message", (m) => m.type === "start" && resolve(w)));
}

/** Resolves once the key's bytes grow past `length` (a waiter's ticket was written). */
async function joined(limiter, key, length) {
  const end = Date.now() + 20_000;
  for (;;) {
    const bytes = await limiter.export(key);
    const n = bytes?.length ?? 0;
    if (n > length) return n;
    assert.ok(Date.now() < end, "the waiter never joined the line");
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function setup(server, kind, limit, prefix) {
  const { client, close } = await connect(kind, server.port);
  const limiter = new RateLimiter({ algorithm: "concurrency", limit, leaseTtl: "10m", store: new RedisStore(client, { prefix, failure: "closed" }) });
  return { limiter, close };
}

for (const [name, kind] of [["redis", "node-redis"], ["valkey", "ioredis"]]) {
  test(`${name}: one slot, five processes in line: admitted in ticket order, a full line refused, a killed waiter stops blocking`, { timeout: 60_000 }, async () => {
    reset();
    const server = servers[name];
    const prefix = `line1:${name}:`;
    const { limiter, close } = await setup(server, kind, 1, prefix);
    const job = { limit: 1, leaseTtlMs: 600_000, prefix, key: "k", maxQueue: 4, maxWaitMs: 120_000, workMs: 150 };
    const held = await limiter.acquire("k");
    assert.ok(held.allowed);
    let length = (await limiter.export("k")).length;
    const waiters = [];
    for (let who = 0; who < 4; who++) {
      waiters.push(await spawnWaiter(server.port, kind, { ...job, who }));
      length = await joined(limiter, "k", length);
    }
    // Export and import carry the line: the bytes round-trip through the in-memory limiter.
    const bytes = await limiter.export("k");
    const memory = new RateLimiter({ algorithm: "concurrency", limit: 1, leaseTtl: "10m" });
    memory.import("k", bytes);
    assert.deepEqual(memory.export("k"), bytes);
    // The line holds maxQueue (4) waiters: a fifth is refused at once.
    const full = await spawnWaiter(server.port, kind, { ...job, who: 4 });
    const refused = await full.answered;
    assert.equal(refused.type, "refused");
    assert.ok(refused.waited < 5_000, `refused after ${refused.waited} ms`);
    // Waiter 1 dies in line; the others keep their order.
    waiters[1].child.kill("SIGKILL");
    await waiters[1].exited;
    const killedAt = performance.now();
    await limiter.release(held.lease);
    const answers = await Promise.all([0, 2, 3].map((i) => waiters[i].answered));
    assert.deepEqual(answers.map((a) => a.type), ["admitted", "admitted", "admitted"]);
    await Promise.all(waiters.map((w) => w.exited));
    assert.deepEqual(seen.order, [0, 2, 3], "admitted in ticket order, the dead waiter skipped");
    assert.equal(seen.max, 1, "never more than the limit in flight");
    // Waiter 2 waited for waiter 1's ticket to end: at most a claim window after its death
    // (plus a poll and the machine's load).
    assert.ok(answers[1].at - killedAt < CLAIM_WINDOW_MS + 1_000, `waiter 2 admitted ${answers[1].at - killedAt} ms after the kill`);
    await full.exited;
    // Every slot and every ticket gone: the key is fresh.
    assert.equal(await limiter.export("k"), null);
    close();
  });

  test(`${name}: three slots, nine processes in line: never more than three inside, none overtakes beyond the free slots`, { timeout: 60_000 }, async () => {
    reset();
    const server = servers[name];
    const prefix = `line3:${name}:`;
    const { limiter, close } = await setup(server, kind, 3, prefix);
    const job = { limit: 3, leaseTtlMs: 600_000, prefix, key: "k", maxQueue: 20, maxWaitMs: 120_000 };
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await limiter.acquire("k"));
    assert.ok(held.every((d) => d.allowed));
    let length = (await limiter.export("k")).length;
    const waiters = [];
    for (let who = 0; who < 9; who++) {
      waiters.push(await spawnWaiter(server.port, kind, { ...job, who, workMs: 40 + ((who * 37) % 160) }));
      length = await joined(limiter, "k", length);
    }
    for (const d of held) await limiter.release(d.lease);
    const answers = await Promise.all(waiters.map((w) => w.answered));
    assert.ok(answers.every((a) => a.type === "admitted"), JSON.stringify(answers));
    assert.ok(seen.max <= 3, `${seen.max} in flight`);
    // When ticket j came in, fewer than 3 tickets ahead of it were still waiting.
    const order = [...answers].sort((a, b) => a.at - b.at).map((a) => a.who);
    order.forEach((j, n) => {
      const waitingAhead = [...Array(j).keys()].filter((i) => !order.slice(0, n).includes(i)).length;
      assert.ok(waitingAhead < 3, `ticket ${j} admitted with ${waitingAhead} ahead still waiting (${order}) ${JSON.stringify(answers)}`);
    });
    await Promise.all(waiters.map((w) => w.exited));
    assert.equal(await limiter.export("k"), null);
    close();
  });

  test(`${name}: maxWait refuses in time`, { timeout: 30_000 }, async () => {
    reset();
    const server = servers[name];
    const prefix = `wait:${name}:`;
    const { limiter, close } = await setup(server, kind, 1, prefix);
    const held = await limiter.acquire("k");
    const w = await spawnWaiter(server.port, kind, { limit: 1, leaseTtlMs: 600_000, prefix, key: "k", maxWaitMs: 600, workMs: 10, who: 0 });
    const a = await w.answered;
    assert.equal(a.type, "refused");
    assert.ok(a.waited >= 600 && a.waited < 600 + 1_000, `refused after ${a.waited} ms`);
    await w.exited;
    // Its ticket left the line: the slot goes to the next hit once released.
    await limiter.release(held.lease);
    assert.ok((await limiter.acquire("k")).allowed);
    close();
  });
}
