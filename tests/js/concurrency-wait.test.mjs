// Waiting in line behind each middleware (`maxQueue`, `maxWait`, docs/concurrency.md "Waiting
// in line"): `rateLimit` in Express and node:http, tollgate/fastify, tollgate/hono and
// `rateLimitFetch`, on 127.0.0.1 with real requests. Two slots, a line of three: requests
// wait and are let in in the order they came, a fourth waiter is refused 429 at once, a client
// that goes away while in line leaves it, never more than two inside; `maxWait` answers 429 in
// time.
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

const CONCURRENCY = { algorithm: "concurrency", limit: 2, leaseTtl: "1h" };

/** The handlers' room: who came in (in order), who the key function saw, how many inside. */
function room() {
  const r = { inside: 0, most: 0, order: [], arrived: [] };
  let open;
  r.gate = new Promise((ok) => (open = ok));
  r.open = () => open();
  r.hold = async (who) => {
    r.inside++;
    r.most = Math.max(r.most, r.inside);
    r.order.push(who);
    try {
      await r.gate;
    } finally {
      r.inside--;
    }
  };
  r.key = (who) => {
    r.arrived.push(who);
    return "k";
  };
  return r;
}

const SERVERS = {
  async express(r, line) {
    const app = express();
    app.use(rateLimit({ ...CONCURRENCY, ...line, keyGenerator: (req) => r.key(req.query.who) }));
    app.get("/", async (req, res) => {
      await r.hold(req.query.who);
      res.send("ok");
    });
    return listenNode((args) => app(...args));
  },
  async "node:http"(r, line) {
    const limit = rateLimit({ ...CONCURRENCY, ...line, keyGenerator: (req) => r.key(new URL(req.url, "http://x").searchParams.get("who")) });
    return listenNode(([req, res]) =>
      limit(req, res, async () => {
        await r.hold(new URL(req.url, "http://x").searchParams.get("who"));
        res.end("ok");
      }),
    );
  },
  async fastify(r, line) {
    const fastify = Fastify();
    await fastify.register(fastifyRateLimit, { ...CONCURRENCY, ...line, keyGenerator: (request) => r.key(request.query.who) });
    fastify.get("/", async (request) => {
      await r.hold(request.query.who);
      return "ok";
    });
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    return { url: `http://127.0.0.1:${fastify.server.address().port}`, close: () => fastify.close() };
  },
  async hono(r, line) {
    const app = new Hono();
    app.use(honoRateLimiter({ ...CONCURRENCY, ...line, keyGenerator: (c) => r.key(c.req.query("who")) }));
    app.get("/", async (c) => {
      await r.hold(c.req.query("who"));
      return c.text("ok");
    });
    return listenFetch(app.fetch);
  },
  async rateLimitFetch(r, line) {
    const who = (request) => new URL(request.url).searchParams.get("who");
    const wrap = rateLimitFetch({ ...CONCURRENCY, ...line, key: (request) => r.key(who(request)) });
    return listenFetch(
      wrap(async (request) => {
        await r.hold(who(request));
        return new Response("ok");
      }),
    );
  },
};

function request(url, who) {
  const controller = new AbortController();
  const started = performance.now();
  const r = { settled: false, abort: () => controller.abort() };
  r.answer = fetch(`${url}/?who=${who}`, { signal: controller.signal })
    .then(
      async (res) => ({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text(), ms: performance.now() - started }),
      () => "aborted",
    )
    .finally(() => (r.settled = true));
  return r;
}

for (const [name, start] of Object.entries(SERVERS)) {
  test(`${name}: two slots and a line of three; let in in order, a full line refused, a client that left leaves the line`, async () => {
    const r = room();
    const server = await start(r, { maxQueue: 3, maxWait: "10s" });
    try {
      const sent = [];
      // One at a time, each in before the next is sent: the order they came in is known.
      for (const who of ["a", "b", "w0", "w1", "w2"]) {
        sent.push(request(server.url, who));
        await until(() => r.arrived.length === sent.length, `${who} arrived`);
      }
      await until(() => r.inside === 2, "two inside");
      // The line holds three: a fourth waiter is answered 429 at once.
      const full = await request(server.url, "w3").answer;
      assert.equal(full.status, 429);
      assert.ok(Number(full.retryAfter) >= 1);
      // w1 goes away while in line.
      sent[3].abort();
      assert.equal(await sent[3].answer, "aborted");
      await new Promise((ok) => setTimeout(ok, 50));
      r.open();
      const answers = await Promise.all(sent.map((s) => s.answer));
      assert.deepEqual(answers.map((a) => a.status ?? a), [200, 200, 200, "aborted", 200]);
      assert.deepEqual(r.order, ["a", "b", "w0", "w2"], "let in in the order they came; the one that left never");
      assert.ok(r.most <= 2, `${r.most} inside`);
      // Every slot free again.
      const after = await Promise.all(["x", "y"].map((who) => request(server.url, who).answer));
      assert.deepEqual(after.map((a) => a.status), [200, 200]);
    } finally {
      r.open();
      await server.close();
    }
  });

  test(`${name}: maxWait answers 429 in time`, async () => {
    const r = room();
    const server = await start(r, { maxWait: 300 });
    try {
      const held = ["a", "b"].map((who) => request(server.url, who));
      await until(() => r.inside === 2, "two inside");
      const late = await request(server.url, "c").answer;
      assert.equal(late.status, 429);
      assert.ok(late.ms >= 290 && late.ms < 3_000, `answered after ${late.ms} ms`);
      r.open();
      assert.deepEqual((await Promise.all(held.map((h) => h.answer))).map((a) => a.status), [200, 200]);
      assert.deepEqual(r.order, ["a", "b"]);
    } finally {
      r.open();
      await server.close();
    }
  });
}
