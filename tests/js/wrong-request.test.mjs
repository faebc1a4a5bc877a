// One answer to a wrong request at every HTTP adapter of the packed package: a cost that is
// not one (0, negative, a fraction, NaN, not a number) or that no limit can ever hold is the
// client's mistake, answered as the Worker answers it: 400 and {"error":{"code":"invalid_cost",
// "message","field":"cost"}}, never a 500, an HTML error page or a stack trace; nothing is
// counted. tests/js/fastify.test.mjs holds tollgate/fastify to the same.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import express from "express";
import { install } from "./packed.mjs";

let installed;
let tollgate;
before(async () => {
  installed = install();
  tollgate = await installed.esm();
});
after(() => installed.remove());

/** Costs a request may name (`?cost=`), each wrong for a bucket of 10. */
const WRONG = ["0", "-1", "NaN", "1.5", "eleven", "11"];
const costOf = (url) => {
  const raw = new URL(url, "http://x").searchParams.get("cost");
  return raw === "eleven" ? raw : Number(raw ?? 1);
};

async function assertMistake(status, type, text, cost) {
  assert.equal(status, 400, `cost ${cost}: ${text}`);
  assert.match(type, /^application\/json/, `cost ${cost}`);
  const { error } = JSON.parse(text);
  assert.deepEqual([error.code, error.field], ["invalid_cost", "cost"], `cost ${cost}`);
  assert.equal(typeof error.message, "string");
  assert.doesNotMatch(text, /at .*\.(js|mjs):\d+/, "no stack trace");
}

test("rateLimit (Express): a wrong cost is a 400 JSON invalid_cost, not Express's 500 error page", async () => {
  const app = express();
  app.set("env", "test");
  app.use(tollgate.rateLimit({ algorithm: "token-bucket", quota: "10/1h", cost: (req) => costOf(req.url) }));
  app.get("/", (req, res) => res.send("ok"));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((ok) => server.once("listening", ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    for (const cost of WRONG) {
      const r = await fetch(`${base}/?cost=${cost}`);
      await assertMistake(r.status, r.headers.get("content-type") ?? "", await r.text(), cost);
    }
    const ok = await fetch(`${base}/?cost=10`);
    assert.deepEqual([ok.status, ok.headers.get("x-ratelimit-remaining")], [200, "0"], "the wrong requests took nothing");
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
});

test("rateLimitFetch: a wrong cost is a 400 JSON invalid_cost, not a bare 500", async () => {
  const handler = tollgate.rateLimitFetch({ algorithm: "token-bucket", quota: "10/1h", key: () => "k", cost: (request) => costOf(request.url) })(() => new Response("ok"));
  for (const cost of WRONG) {
    const r = await handler(new Request(`http://x/?cost=${cost}`));
    await assertMistake(r.status, r.headers.get("content-type") ?? "", await r.text(), cost);
  }
  const ok = await handler(new Request("http://x/?cost=10"));
  assert.deepEqual([ok.status, ok.headers.get("x-ratelimit-remaining")], [200, "0"]);
});

test("an unknown option's error names the likely one, at every adapter", () => {
  const { rateLimit, rateLimitFetch } = tollgate;
  assert.throws(() => rateLimit({ windowMS: 60_000, limit: 5 }), { code: "unknown_field", field: "windowMS", message: /did you mean windowMs\?$/ });
  assert.throws(() => rateLimitFetch({ algorithm: "gcra", quota: "1/s", key: () => "k", skipFaildRequests: true }), { code: "unknown_field", message: /did you mean skipFailedRequests\?$/ });
  assert.throws(() => new tollgate.RedisStore({}, { prefx: "rl:" }), { code: "unknown_field", message: /did you mean prefix\?$/ });
  assert.throws(() => rateLimit({ windowMs: 60_000, limit: 5, zzz: 1 }), (e) => e.code === "unknown_field" && !/did you mean/.test(e.message), "no guess when nothing is near");
});
