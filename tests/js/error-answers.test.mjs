// No answer carries internals: when a store (or a limiter over one) fails, no body or header of
// any middleware (Express, node:http, Fastify, Hono, fetch) holds the store key, the client's
// address or a stack, even where the framework or the user's error handler shows the error it
// gets (Express in development shows `err.stack`; a naive handler prints it). Every error answer
// these tests get is recorded (target/test-logs/error-answers.jsonl), and the last test greps
// the record for a store key prefix and for any IP address.
import test, { after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { resolve } from "node:path";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { install, here } from "./packed.mjs";

const installed = install();
after(() => installed.remove());
const { rateLimit, rateLimitFetch } = await installed.esm();
const { default: fastifyRateLimit } = await installed.esm("/fastify");
const { rateLimiter } = await installed.esm("/hono");

const PREFIX = "tollgate:v1:";
const CLIENT = "203.0.113.7";
/** A store failure whose message, as a careless store writes it, names the key and the client. */
const failure = (key) => Object.assign(new Error(`state at ${PREFIX}${key} (client ${CLIENT}) cannot be read`), { code: "redis_state_invalid" });
/** A limiter over such a store: every decision fails. */
const failing = { limit: async (key) => Promise.reject(failure(key)), peek: async (key) => Promise.reject(failure(key)), headers: () => ({}), refund: async () => {}, reset: async () => {} };

const recorded = [];
/** Records an error answer and asserts it shows nothing internal. */
function check(where, status, headers, body) {
  recorded.push({ where, status, headers, body });
  const all = `${JSON.stringify(headers)}\n${body}`;
  assert.ok(status >= 400, `${where}: ${status}`);
  for (const secret of [PREFIX, CLIENT, "127.0.0.1", "user-42"]) assert.ok(!all.includes(secret), `${where} shows ${secret}: ${all}`);
  assert.doesNotMatch(all, /\n\s+at /, `${where} shows a stack: ${all}`);
}

async function serve(handler, body) {
  const server = createServer(handler).listen(0, "127.0.0.1");
  await new Promise((ok) => server.once("listening", ok));
  try {
    return await body(`http://127.0.0.1:${server.address().port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
}

const answer = async (r) => ({ status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() });

test("Express in development (its error page shows err.stack): a store's failure shows no key, address or stack", async () => {
  for (const options of [{ limiter: failing }, { limiter: failing, keyGenerator: () => "user-42" }]) {
    const app = express();
    app.set("env", "development");
    app.use(rateLimit(options));
    app.get("/", (req, res) => res.send("ok"));
    await serve(app, async (base) => {
      const r = await answer(await fetch(base));
      assert.equal(r.status, 500);
      check("express", r.status, r.headers, r.body);
    });
  }
});

test("node:http with a handler that prints the error's stack: nothing internal", async () => {
  const mw = rateLimit({ limiter: failing, keyGenerator: () => "user-42" });
  const handler = (req, res) => mw(req, res, (err) => {
    res.statusCode = err ? 500 : 200;
    res.end(err ? `${err.message}\n${err.stack}\n${err.code}` : "ok");
  });
  await serve(handler, async (base) => {
    const r = await answer(await fetch(base));
    check("node:http", r.status, r.headers, r.body);
  });
});

test("Fastify (its error handler answers the error's message): a @fastify/rate-limit store's failure and a bad state show nothing internal", async () => {
  class BrokenStore {
    incr(key, cb) {
      cb(failure(key));
    }
    child() {
      return this;
    }
  }
  for (const options of [{ store: BrokenStore }, { store: BrokenStore, keyGenerator: () => "user-42" }]) {
    const fastify = Fastify();
    await fastify.register(fastifyRateLimit, { max: 2, ...options });
    fastify.get("/", async () => "ok");
    const r = await fastify.inject({ url: "/", remoteAddress: CLIENT });
    assert.equal(r.statusCode, 500);
    check("fastify", r.statusCode, r.headers, r.payload);
    await fastify.close();
  }
});

test("Hono (an onError that prints the error's stack): nothing internal", async () => {
  const app = new Hono();
  app.onError((err, c) => c.text(`${err.message}\n${err.stack}`, 500));
  app.use(rateLimiter({ limiter: failing, keyGenerator: () => "user-42" }));
  app.get("/", (c) => c.text("ok"));
  const r = await answer(await app.request("/"));
  check("hono", r.status, r.headers, r.body);
});

test("fetch (a runtime that answers a thrown error with its stack): nothing internal", async () => {
  const wrapped = rateLimitFetch({ key: () => "user-42", limiter: failing })(() => new Response("ok"));
  const runtime = async (request) => {
    try {
      return await wrapped(request);
    } catch (err) {
      return new Response(`${err.message}\n${err.stack}`, { status: 500 });
    }
  };
  const r = await answer(await runtime(new Request("http://x.test/")));
  check("fetch", r.status, r.headers, r.body);
});

test("the recorded error answers hold no store key prefix and no IP address", () => {
  const dir = resolve(here, "../../target/test-logs");
  mkdirSync(dir, { recursive: true });
  const file = resolve(dir, "error-answers.jsonl");
  writeFileSync(file, recorded.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const text = readFileSync(file, "utf8");
  assert.ok(recorded.length >= 6, `${recorded.length} answers recorded`);
  assert.ok(!text.includes(PREFIX) && !text.includes("fastify-rate-limit-"), "a store key prefix");
  assert.doesNotMatch(text, /\b\d{1,3}(?:\.\d{1,3}){3}\b/, "an IPv4 address");
  assert.doesNotMatch(text, /\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,7}\b/i, "an IPv6 address");
});
