// `rateLimitFetch`, the fetch-API twin of `rateLimit`, with Node's own Request and Response (the
// same classes Deno, Bun and workerd have; workerd.test.mjs runs it inside workerd too), and in a
// real Hono app (hono 4, a devDependency of these tests), as the npm README shows.
import test from "node:test";
import assert from "node:assert/strict";
import { rateLimitFetch, RateLimiter } from "../../pkg/dist/lib/index.js";

// Quotas long enough that no refill happens during a test, however slow the machine.
const threePerHour = { algorithm: "gcra", quota: "3/1h" };
const byHeader = (request) => request.headers.get("x-client") ?? "anonymous";
const from = (client) => new Request("http://example.test/", { headers: { "x-client": client } });
const ok = () => new Response("ok");

test("allowed requests reach the handler with the rate-limit headers; the denied one is a 429 JSON error it never sees", async () => {
  let seen = 0;
  const handler = rateLimitFetch({ ...threePerHour, key: byHeader })(() => {
    seen++;
    return ok();
  });
  const remaining = [];
  for (let i = 0; i < 3; i++) {
    const r = await handler(from("a"));
    assert.equal(r.status, 200);
    assert.equal(await r.text(), "ok");
    assert.equal(r.headers.get("X-RateLimit-Limit"), "3");
    assert.match(r.headers.get("RateLimit"), /;r=\d+;t=\d+$/);
    remaining.push(Number(r.headers.get("X-RateLimit-Remaining")));
  }
  assert.deepEqual(remaining, [2, 1, 0]);
  const denied = await handler(from("a"));
  assert.equal(denied.status, 429);
  assert.equal(seen, 3);
  assert.equal(denied.headers.get("Content-Type"), "application/json");
  const retry = Number(denied.headers.get("Retry-After"));
  assert.ok(retry > 0 && retry <= 1200, `Retry-After ${retry}`);
  assert.equal((await denied.json()).error.code, "rate_limited");
  // Another key has its own quota.
  assert.equal((await handler(from("b"))).status, 200);
});

test("the handler's other arguments (env, ctx; Deno's info; Bun's server) reach key, cost, skip, handler and the wrapped handler", async () => {
  const calls = [];
  const wrap = rateLimitFetch({
    algorithm: "fixed-window",
    quota: "5/1h",
    key: (request, env) => { calls.push(["key", env.tenant]); return `${env.tenant}:${byHeader(request)}`; },
    cost: (request, env, ctx) => { calls.push(["cost", ctx.id]); return 3; },
    skip: (request, env) => { calls.push(["skip", env.tenant]); return false; },
    handler: (request, decision, env, ctx) => {
      calls.push(["handler", env.tenant, ctx.id, decision.allowed]);
      return new Response("over quota", { status: 503 });
    },
  });
  const handler = wrap((request, env, ctx) => { calls.push(["inner", env.tenant, ctx.id]); return ok(); });
  const env = { tenant: "t1" };
  const ctx = { id: 7 };
  assert.equal((await handler(from("a"), env, ctx)).status, 200);
  const second = await handler(from("a"), env, ctx); // 3 + 3 > 5
  assert.equal(second.status, 503);
  assert.ok(second.headers.get("Retry-After"), "a handler's denial carries the headers too");
  assert.deepEqual(calls, [
    ["skip", "t1"], ["key", "t1"], ["cost", 7], ["inner", "t1", 7],
    ["skip", "t1"], ["key", "t1"], ["cost", 7], ["handler", "t1", 7, false],
  ]);
  assert.equal(wrap.limiter.peek("t1:a", { cost: 2 }).allowed, true, "only the allowed request was counted (2 of 5 left)");
  assert.equal(wrap.limiter.peek("t1:a", { cost: 3 }).allowed, false);
});

test("a Response with immutable headers (as fetch() returns) gets the headers on a copy, body and status kept", async () => {
  const handler = rateLimitFetch({ ...threePerHour, key: byHeader })(() => Response.redirect("http://example.test/next", 302));
  const r = await handler(from("a"));
  assert.equal(r.status, 302);
  assert.equal(r.headers.get("Location"), "http://example.test/next");
  assert.equal(r.headers.get("X-RateLimit-Remaining"), "2");
});

test("standardHeaders/legacyHeaders: draft-10 only, legacy only, or none (Retry-After still on a denial); message as text", async () => {
  const modes = { "draft-10": { legacyHeaders: false }, legacy: { standardHeaders: false }, false: { standardHeaders: false, legacyHeaders: false } };
  const names = async (mode) => {
    const handler = rateLimitFetch({ algorithm: "gcra", quota: "1/1h", key: byHeader, ...modes[mode], message: "slow down" })(ok);
    const allowed = await handler(from("a"));
    const denied = await handler(from("a"));
    assert.equal(denied.headers.get("Content-Type"), "text/plain; charset=utf-8");
    assert.equal(await denied.text(), "slow down");
    const rate = (r) => [...r.headers.keys()].filter((n) => /ratelimit|retry-after/i.test(n)).sort();
    return [rate(allowed), rate(denied)];
  };
  assert.deepEqual(await names("draft-10"), [["ratelimit", "ratelimit-policy"], ["ratelimit", "ratelimit-policy", "retry-after"]]);
  assert.deepEqual(await names("legacy"), [
    ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"],
    ["retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"],
  ]);
  assert.deepEqual(await names(false), [[], ["retry-after"]]);
});

test("skipFailedRequests gives back the hits of error answers and of handlers that throw (whose error goes on)", async () => {
  const wrap = rateLimitFetch({ ...threePerHour, key: byHeader, skipFailedRequests: true });
  let answer = 500;
  const handler = wrap(() => {
    if (answer === "throw") throw new Error("boom");
    return new Response(null, { status: answer });
  });
  for (let i = 0; i < 5; i++) assert.equal((await handler(from("a"))).status, 500);
  answer = "throw";
  await assert.rejects(handler(from("a")), /boom/);
  assert.equal(wrap.limiter.peek("a", { cost: 3 }).allowed, true, "no failed request counted");
  answer = 201;
  for (let i = 0; i < 3; i++) assert.equal((await handler(from("a"))).status, 201);
  assert.equal((await handler(from("a"))).status, 429);
});

test("skipSuccessfulRequests with requestWasSuccessful counts only what it calls a failure", async () => {
  const wrap = rateLimitFetch({
    algorithm: "gcra",
    quota: "2/1h",
    key: byHeader,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (request, response) => response.headers.get("x-login") === "ok",
  });
  const handler = wrap((request) => new Response(null, { headers: { "x-login": request.headers.get("x-try") } }));
  const attempt = (result) => handler(new Request("http://example.test/login", { headers: { "x-client": "a", "x-try": result } }));
  for (let i = 0; i < 10; i++) assert.equal((await attempt("ok")).status, 200);
  assert.equal((await attempt("bad")).status, 200);
  assert.equal((await attempt("bad")).status, 200);
  assert.equal((await attempt("ok")).status, 429, "two failures spent the quota");
});

test("skip lets requests through uncounted; an existing limiter and several keys work", async () => {
  const limiter = new RateLimiter({ limits: [{ name: "user", algorithm: "gcra", quota: "2/1h" }] });
  const handler = rateLimitFetch({
    limiter,
    key: (request) => [`user:${byHeader(request)}`],
    skip: (request) => new URL(request.url).pathname === "/health",
  })(ok);
  for (let i = 0; i < 5; i++) assert.equal((await handler(new Request("http://example.test/health"))).status, 200);
  assert.equal(limiter.size, 0, "skipped requests are not counted");
  assert.equal((await handler(from("a"))).status, 200);
  assert.equal((await handler(from("a"))).status, 200);
  assert.equal((await handler(from("a"))).status, 429);
});

test("bad options throw when the wrapper is made; bad answers and keys throw per request and count nothing", async () => {
  assert.throws(() => rateLimitFetch(threePerHour), /key\(request, \.\.\.rest\) is required/);
  assert.throws(() => rateLimitFetch({ ...threePerHour, key: byHeader, windowMs: 60_000 }), /windowMs is express-rate-limit's option/);
  assert.throws(() => rateLimitFetch({ ...threePerHour, key: byHeader, ipv6Subnet: 48 }), /ipv6Subnet is not an option/);
  assert.throws(() => rateLimitFetch({ ...threePerHour, key: byHeader, statusCode: 200 }), RangeError);
  assert.throws(() => rateLimitFetch({ ...threePerHour, key: byHeader })("not a function"), TypeError);
  const wrap = rateLimitFetch({ ...threePerHour, key: byHeader });
  await assert.rejects(wrap(() => "text")(from("a")), /must answer a Response, got string/);
  await assert.rejects(wrap(ok)(from("")), RangeError);
  assert.equal(wrap.limiter.size, 1, "only the request whose handler answered badly was counted");
});

test("in Hono, as the README shows: c.res is the wrapped answer, a denial never reaches the route", async () => {
  const { Hono } = await import("hono");
  const limited = rateLimitFetch({ algorithm: "gcra", quota: "2/1h", key: byHeader });
  const app = new Hono();
  let routed = 0;
  app.use(async (c, next) => {
    c.res = await limited(async () => { await next(); return c.res; })(c.req.raw);
  });
  app.get("/", (c) => {
    routed++;
    c.header("x-route", "yes");
    return c.json({ hello: "world" });
  });
  const answers = [];
  for (let i = 0; i < 3; i++) {
    const r = await app.fetch(from("a"));
    answers.push([r.status, r.headers.get("X-RateLimit-Remaining"), r.headers.get("x-route"), await r.json()]);
  }
  assert.deepEqual(answers.slice(0, 2), [[200, "1", "yes", { hello: "world" }], [200, "0", "yes", { hello: "world" }]]);
  assert.equal(answers[2][0], 429);
  assert.equal(answers[2][3].error.code, "rate_limited");
  assert.equal(routed, 2);
});
