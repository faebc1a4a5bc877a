// A concurrency limit behind each middleware (docs/concurrency.md): `rateLimit` in Express and
// plain node:http, tollgate/fastify in Fastify, tollgate/hono and `rateLimitFetch` served by
// @hono/node-server, all on 127.0.0.1 with real requests. A slow handler, 20 requests at once,
// 4 slots: never more than 4 inside the handler, the rest denied 429 with the core's
// Retry-After; requests whose clients go away give their slots back, and so do streamed
// answers, read to the end or cancelled; no slot is left held when the traffic is over.
import test from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { rateLimit, rateLimitFetch } from "../../pkg/dist/lib/index.js";
import fastifyRateLimit from "../../pkg/dist/lib/fastify.js";
import { listenFetch, listenNode, until } from "./concurrency-servers.mjs";
import { rateLimiter as honoRateLimiter } from "../../pkg/dist/lib/hono.js";

const SLOTS = 4;
const CONCURRENCY = { algorithm: "concurrency", limit: SLOTS, leaseTtl: "1h" };

/** What the handlers share: how many are inside, the most ever inside, and the gate they wait on. */
function room() {
  const r = { inside: 0, most: 0, entered: 0 };
  r.reset = () => {
    let open;
    r.gate = { promise: new Promise((ok) => (open = ok)) };
    r.gate.resolve = open;
  };
  r.reset();
  r.open = () => r.gate.resolve();
  /** Runs inside the handler: waits for the gate or the client's leaving (`gone`, a promise). */
  r.hold = async (gone) => {
    r.inside++;
    r.entered++;
    r.most = Math.max(r.most, r.inside);
    try {
      await Promise.race([r.gate.promise, gone]);
    } finally {
      r.inside--;
    }
  };
  return r;
}

const aborted = (signal) => new Promise((ok) => (signal.aborted ? ok() : signal.addEventListener("abort", ok, { once: true })));
const closed = (res) => new Promise((ok) => (res.destroyed ? ok() : res.once("close", ok)));

/** A body that sends "first" then "second" when `more` resolves, or is cancelled. */
function streamed(more) {
  let step = 0;
  return new ReadableStream({
    async pull(controller) {
      if (step++ === 0) return controller.enqueue(new TextEncoder().encode("first"));
      await more;
      controller.enqueue(new TextEncoder().encode("second"));
      controller.close();
    },
  });
}

/** Each server: `start(r)` listens with the middleware in front of a handler holding in `r`; resolves to `{ url, close }`. */
const SERVERS = {
  async express(r) {
    const app = express();
    app.use(rateLimit({ ...CONCURRENCY, keyGenerator: () => "k" }));
    app.get("/", async (req, res) => {
      await r.hold(closed(res));
      if (!res.destroyed) res.send("ok");
    });
    app.get("/stream", async (req, res) => {
      res.write("first");
      await Promise.race([r.gate.promise, closed(res)]);
      res.end("second");
    });
    return listenNode((handler) => app(...handler));
  },
  async "node:http"(r) {
    const limit = rateLimit({ ...CONCURRENCY, keyGenerator: () => "k" });
    return listenNode(([req, res]) =>
      limit(req, res, async () => {
        if (req.url === "/stream") {
          res.write("first");
          await Promise.race([r.gate.promise, closed(res)]);
          res.end("second");
          return;
        }
        await r.hold(closed(res));
        if (!res.destroyed) res.end("ok");
      }),
    );
  },
  async fastify(r) {
    const fastify = Fastify();
    await fastify.register(fastifyRateLimit, { ...CONCURRENCY, keyGenerator: () => "k" });
    fastify.get("/", async (request, reply) => {
      await r.hold(closed(reply.raw));
      return "ok";
    });
    fastify.get("/stream", (request, reply) => {
      reply.send(streamed(r.gate.promise));
    });
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    return { url: `http://127.0.0.1:${fastify.server.address().port}`, close: () => fastify.close() };
  },
  async hono(r) {
    const app = new Hono();
    app.use(honoRateLimiter({ ...CONCURRENCY, keyGenerator: () => "k" }));
    app.get("/", async (c) => {
      await r.hold(aborted(c.req.raw.signal));
      return c.text("ok");
    });
    app.get("/stream", (c) => new Response(streamed(r.gate.promise)));
    return listenFetch(app.fetch);
  },
  async rateLimitFetch(r) {
    const wrap = rateLimitFetch({ ...CONCURRENCY, key: () => "k" });
    return listenFetch(
      wrap(async (request) => {
        if (new URL(request.url).pathname === "/stream") return new Response(streamed(r.gate.promise));
        await r.hold(aborted(request.signal));
        return new Response("ok");
      }),
    );
  },
};

/** A request that can be aborted; `answer` resolves to its status and Retry-After (or to "aborted"), `settled` says whether it has. */
function request(url) {
  const controller = new AbortController();
  const r = { settled: false, abort: () => controller.abort() };
  r.answer = fetch(url, { signal: controller.signal })
    .then(
      async (res) => ({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() }),
      () => "aborted",
    )
    .finally(() => (r.settled = true));
  return r;
}

/** A streamed answer's first chunk read, its reader kept; `null` when the request was denied. */
async function startStream(url) {
  const controller = new AbortController();
  const res = await fetch(`${url}/stream`, { signal: controller.signal });
  if (res.status === 429) {
    await res.text();
    return null;
  }
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  assert.equal(new TextDecoder().decode((await reader.read()).value), "first");
  return { reader, abort: () => controller.abort() };
}

/** Waits until every slot is free again: a fresh burst of SLOTS is admitted in full. */
async function allSlotsFree(url, r) {
  r.reset();
  const before = r.entered;
  const burst = Array.from({ length: SLOTS }, () => request(url));
  await until(() => r.inside === SLOTS || r.entered - before === SLOTS, `${SLOTS} fresh requests inside`);
  r.open();
  const answers = await Promise.all(burst.map((b) => b.answer));
  assert.deepEqual(answers.map((a) => a.status), Array(SLOTS).fill(200), "every slot is free once the traffic is over");
}

for (const [name, start] of Object.entries(SERVERS)) {
  test(`${name}: 20 requests at once through 4 slots; never more than 4 inside, aborted requests and streamed answers release`, async () => {
    const r = room();
    const server = await start(r);
    try {
      // 20 at once: 4 are inside the handler, 16 are denied at once with the core's Retry-After.
      const first = Array.from({ length: 20 }, () => request(server.url));
      const denied = [];
      for (const f of first) f.answer.then((a) => a.status === 429 && denied.push(a));
      await until(() => denied.length === 16 && r.inside === SLOTS, "16 denials and 4 inside");
      assert.equal(r.most, SLOTS);
      for (const d of denied) assert.match(d.retryAfter ?? "", /^\d+$/, "a denial says when a slot frees (the nearest lease's expiry)");

      // Two clients go away: their slots come back while the two others still hold theirs.
      const holders = first.filter((f) => !f.settled);
      assert.equal(holders.length, SLOTS, "the admitted requests are still waiting on the handler");
      holders[0].abort();
      holders[1].abort();
      await until(() => r.inside === 2, "the aborted requests' handlers to leave");
      const second = [request(server.url), request(server.url)];
      await until(() => r.inside === SLOTS, "two new requests in the freed slots");
      const third = await request(server.url).answer;
      assert.equal(third.status, 429, "the slots are full again");
      assert.equal(r.most, SLOTS, "never more than 4 inside the handler");

      r.open();
      const done = await Promise.all([holders[2].answer, holders[3].answer, ...second.map((s) => s.answer)]);
      assert.deepEqual(done.map((a) => a.status), [200, 200, 200, 200]);
      assert.equal(r.most, SLOTS);
      await allSlotsFree(server.url, r);

      // A streamed answer holds its slot until its body ends, or until its reader cancels.
      r.reset();
      const streams = [];
      for (let i = 0; i < SLOTS; i++) streams.push(await startStream(server.url));
      assert.ok(streams.every((s) => s !== null), "4 streams admitted");
      assert.equal(await startStream(server.url), null, "4 streams in flight hold the 4 slots");
      streams[0].abort(); // a client that leaves mid-stream
      // Its slot comes back once the server sees it leave: denied requests change nothing meanwhile.
      let replacement = null;
      const end = Date.now() + 5000;
      while (replacement === null) {
        if (Date.now() > end) assert.fail("a cancelled stream's slot never came back");
        replacement = await startStream(server.url);
      }
      streams[0] = replacement;
      r.open();
      for (const { reader } of streams) {
        let text = "";
        for (;;) {
          const { done: ended, value } = await reader.read();
          if (ended) break;
          text += new TextDecoder().decode(value);
        }
        assert.equal(text, "second");
      }
      await allSlotsFree(server.url, r);
    } finally {
      r.open();
      await server.close();
    }
  });
}
