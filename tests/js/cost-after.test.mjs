// The middlewares' cost known after the answer (`estimatedCost`, `actualCost`): a request reserves
// its estimate on the way in and its reservation is settled with the actual cost once its
// answer is done, streamed answers at their end, in real Express, with Node's fetch Request
// and Response (rateLimitFetch), and in real Hono (tollgate/hono) and Fastify (tollgate/fastify) apps.
import test from "node:test";
import assert from "node:assert/strict";
import express from "express";
import { Hono } from "hono";
import Fastify from "fastify";
import { rateLimit, rateLimitFetch } from "../../pkg/dist/lib/index.js";
import { rateLimiter } from "../../pkg/dist/lib/hono.js";
import fastifyRateLimit from "../../pkg/dist/lib/fastify.js";
import { serving } from "./serving.mjs";

// A window far longer than any test, from each key's first hit: the counts are exact.
const HOUR = { algorithm: "fixed-window", align: "first-hit", limit: 1000, window: "1h" };
const tick = () => new Promise((r) => setTimeout(r, 5));

/** Polls `read()` until it gives `expected` (a settlement lands once the answer is done), then asserts it. */
async function eventually(read, expected) {
  let got;
  for (let i = 0; i < 200; i += 1) {
    got = await read();
    if (got === expected) return;
    await tick();
  }
  assert.equal(got, expected);
}

/** What is left of the key's limit: the next hit of cost 1 would leave this many and one. */
const left = async (limiter, key) => (await limiter.peek(key, { cost: 1 })).remaining + 1;

test("options: estimatedCost and actualCost come together, and not beside cost or the skip options", () => {
  const actualCost = () => 1;
  for (const make of [(o) => rateLimit({ ...HOUR, ...o }), (o) => rateLimitFetch({ ...HOUR, key: () => "k", ...o })]) {
    assert.throws(() => make({ estimatedCost: 5 }), { code: "missing_field", field: "actualCost" });
    assert.throws(() => make({ actualCost }), { code: "missing_field", field: "estimatedCost" });
    assert.throws(() => make({ estimatedCost: "5", actualCost }), { code: "invalid_type", field: "estimatedCost" });
    assert.throws(() => make({ estimatedCost: 5, actualCost: 3 }), { code: "invalid_type", field: "actualCost" });
    assert.throws(() => make({ estimatedCost: 5, actualCost, cost: () => 2 }), { code: "conflicting_fields", field: "cost" });
    assert.throws(() => make({ estimatedCost: 5, actualCost, skipFailedRequests: true }), { code: "conflicting_fields", field: "skipFailedRequests" });
  }
  assert.throws(() => rateLimiter({ ...HOUR, keyGenerator: () => "k", estimatedCost: 5 }), { code: "missing_field", field: "actualCost" });
});

test("Express: the estimate is held while the answer streams, the actual cost once it finished", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const seen = [];
  const mw = rateLimit({
    ...HOUR,
    legacyHeaders: true,
    key: (req) => req.get("x-key"),
    estimatedCost: (req) => Number(req.get("x-estimate")),
    actualCost: (req, res) => {
      seen.push(res.writableFinished);
      return res.locals.tokens;
    },
  });
  const app = express();
  app.use(mw);
  app.get("/", async (req, res) => {
    res.write("first ");
    await gate;
    res.locals.tokens = 40;
    res.end("last");
  });
  await serving(app, async (url) => {
    const r = await fetch(url, { headers: { "x-key": "e", "x-estimate": "300" } });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-ratelimit-remaining"), "700");
    const reader = r.body.getReader();
    await reader.read();
    // Mid-stream: the estimate is charged.
    assert.equal(await left(mw.limiter, "e"), 700);
    release();
    while (!(await reader.read()).done);
    await eventually(() => left(mw.limiter, "e"), 960);
    assert.deepEqual(seen, [true]);
  });
});

test("Express: a client gone mid-answer, and an actualCost that throws or gives nothing, settle at the estimate", async () => {
  const costs = { gone: () => undefined, throws: () => { throw new Error("no usage"); }, nothing: () => undefined, zero: () => 0 };
  const calls = [];
  const mw = rateLimit({
    ...HOUR,
    key: (req) => req.get("x-key"),
    estimatedCost: 100,
    actualCost: (req, res) => {
      calls.push(req.get("x-key"));
      return costs[req.get("x-key")](req, res);
    },
  });
  const app = express();
  app.use(mw);
  app.get("/", (req, res) => {
    if (req.get("x-key") === "gone") {
      res.write("partial");
      return; // never ends: the client goes away
    }
    res.end("ok");
  });
  await serving(app, async (url) => {
    const controller = new AbortController();
    const r = await fetch(url, { headers: { "x-key": "gone" }, signal: controller.signal });
    await r.body.getReader().read();
    controller.abort();
    for (const key of ["throws", "nothing", "zero"]) assert.equal((await fetch(url, { headers: { "x-key": key } })).status, 200);
    await eventually(() => calls.length, 4);
    await eventually(() => left(mw.limiter, "zero"), 1000);
    for (const key of ["gone", "throws", "nothing"]) assert.equal(await left(mw.limiter, key), 900, key);
  });
});

test("Express: a denied request reserves nothing and is never settled", async () => {
  let settled = 0;
  const mw = rateLimit({ algorithm: "fixed-window", align: "first-hit", limit: 100, window: "1h", key: () => "d", estimatedCost: 80, actualCost: () => (settled++, 80) });
  const app = express();
  app.use(mw);
  app.get("/", (req, res) => res.end("ok"));
  await serving(app, async (url) => {
    assert.equal((await fetch(url)).status, 200);
    assert.equal((await fetch(url)).status, 429);
    await eventually(() => settled, 1);
    await tick();
    assert.equal(settled, 1);
    assert.equal(await left(mw.limiter, "d"), 20);
  });
});

/** A server-sent event stream of `words`, then a last event with `usage`, as an OpenAI-compatible API streams. */
function sse(words, total) {
  const enc = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    async pull(c) {
      await tick();
      if (i < words.length) c.enqueue(enc.encode(`data: ${JSON.stringify({ delta: words[i] })}\n\n`));
      else if (i === words.length) c.enqueue(enc.encode(`data: ${JSON.stringify({ usage: { total_tokens: total } })}\n\ndata: [DONE]\n\n`));
      else c.close();
      i += 1;
    },
  });
}

/** `actualCost` of a streamed answer: the usage of its last event. */
async function usageOfStream(response) {
  const text = await response.text();
  const last = text.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6))).findLast((e) => e.usage);
  return last?.usage.total_tokens;
}

test("rateLimitFetch: JSON and streamed answers reach the client whole and settle on their usage; waitUntil keeps the settlement", async () => {
  const pending = [];
  const ctx = { waitUntil: (p) => pending.push(p) };
  const wrap = rateLimitFetch({
    ...HOUR,
    key: (request) => request.headers.get("x-key"),
    estimatedCost: (request) => Number(request.headers.get("x-estimate")),
    actualCost: async (request, response) => (response.headers.get("content-type") === "text/event-stream" ? usageOfStream(response) : (await response.json()).usage.total_tokens),
  });
  const handler = wrap((request) =>
    request.headers.get("x-stream")
      ? new Response(sse(["a", "b", "c"], 30), { headers: { "content-type": "text/event-stream" } })
      : Response.json({ answer: "hi", usage: { total_tokens: 12 } }),
  );
  const at = (key, estimate, stream) => new Request("http://example.test/", { headers: { "x-key": key, "x-estimate": String(estimate), ...(stream ? { "x-stream": "1" } : {}) } });
  const json = await handler(at("j", 200), ctx);
  assert.equal(json.headers.get("x-ratelimit-remaining"), "800");
  assert.deepEqual(await json.json(), { answer: "hi", usage: { total_tokens: 12 } });
  await Promise.all(pending);
  assert.equal(pending.length, 1);
  assert.equal(await left(wrap.limiter, "j"), 988);

  const streamed = await handler(at("s", 500, true), ctx);
  assert.equal(await left(wrap.limiter, "s"), 500);
  const text = await streamed.text();
  assert.match(text, /"delta":"c"/);
  assert.match(text, /data: \[DONE\]/);
  await Promise.all(pending);
  assert.equal(await left(wrap.limiter, "s"), 970);
});

test("rateLimitFetch: a client that cancels the stream still settles on the usage the copy reads; a handler that throws settles at the estimate", async () => {
  const wrap = rateLimitFetch({ ...HOUR, key: (request) => request.headers.get("x-key"), estimatedCost: 400, actualCost: (request, response) => usageOfStream(response) });
  const handler = wrap((request) => {
    if (request.headers.get("x-key") === "throws") throw new Error("handler failed");
    return new Response(sse(["a", "b", "c", "d", "e"], 25));
  });
  const r = await handler(new Request("http://example.test/", { headers: { "x-key": "cancel" } }));
  const reader = r.body.getReader();
  await reader.read();
  await reader.cancel();
  await eventually(() => left(wrap.limiter, "cancel"), 975);
  await assert.rejects(handler(new Request("http://example.test/", { headers: { "x-key": "throws" } })), /handler failed/);
  await tick();
  assert.equal(await left(wrap.limiter, "throws"), 600);
});

test("tollgate/hono: a route's answer settles on the usage actualCost reads from its copy", async () => {
  const mw = rateLimiter({
    ...HOUR,
    keyGenerator: (c) => c.req.header("x-key"),
    estimatedCost: (c) => Number(c.req.header("x-estimate")),
    actualCost: async (c, response) => (await response.json()).usage.total_tokens,
  });
  const app = new Hono();
  app.use(mw);
  app.get("/", (c) => c.json({ usage: { total_tokens: 7 } }));
  const r = await app.request("/", { headers: { "x-key": "h", "x-estimate": "90" } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("ratelimit-remaining"), "910");
  assert.deepEqual(await r.json(), { usage: { total_tokens: 7 } });
  await eventually(() => left(mw.limiter, "h"), 993);
});

test("tollgate/fastify: the estimate is reserved in the hook and settled with actualCost once the reply was sent", async () => {
  await assert.rejects(Fastify().register(fastifyRateLimit, { ...HOUR, estimatedCost: 5 }).ready(), { code: "missing_field", field: "actualCost" });
  const app = Fastify();
  await app.register(fastifyRateLimit, {
    ...HOUR,
    keyGenerator: (request) => request.headers["x-key"],
    estimatedCost: (request) => Number(request.headers["x-estimate"]),
    actualCost: (request, reply) => reply.tokens,
    onExceeding: () => {},
  });
  app.decorateReply("tokens", undefined);
  app.get("/", async (request, reply) => {
    reply.tokens = 15;
    return { ok: true };
  });
  app.get("/none", async () => ({ ok: true }));
  const cost = await app.createRateLimit();
  await app.ready();
  const r = await app.inject({ url: "/", headers: { "x-key": "f", "x-estimate": "250" } });
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers["x-ratelimit-remaining"], "750");
  // createRateLimit's checks peek here: what is left of the key once the reply settled.
  await eventually(async () => (await cost({ headers: { "x-key": "f", "x-estimate": "1" }, ip: "x" }, { increment: false })).remaining, 985);
  const none = await app.inject({ url: "/none", headers: { "x-key": "g", "x-estimate": "250" } });
  assert.equal(none.statusCode, 200);
  await tick();
  assert.equal((await cost({ headers: { "x-key": "g", "x-estimate": "1" }, ip: "x" }, { increment: false })).remaining, 750);
  await app.close();
});
