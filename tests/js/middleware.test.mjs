// `rateLimit` (HTTP middleware) in a real Express 5 app and a plain `node:http` server on
// 127.0.0.1, driven by real requests; and `ipKey`, the default key's IPv6 prefixing.
import test from "node:test";
import assert from "node:assert/strict";
import express from "express";
import { rateLimit, ipKey, RateLimiter } from "../../pkg/dist/lib/index.js";
import { serving } from "./serving.mjs";

/** An Express app behind the middleware, answering `req.rateLimit.remaining`, or `status`. */
function app(middleware, { status = 200, trustProxy = false } = {}) {
  const a = express();
  if (trustProxy) a.set("trust proxy", 1); // one proxy in front: the X-Forwarded-For the tests send
  a.use(middleware);
  a.get("/", (req, res) => res.status(status).json({ remaining: req.rateLimit?.remaining ?? null }));
  return a;
}

const get = (url, headers = {}) => fetch(url, { headers });
// Quotas long enough that no refill happens during a test, however slow the machine.
const threePerHour = { algorithm: "gcra", quota: "3/1h" };

test("Express: allowed requests go on with req.rateLimit; the denied one is a 429 with Retry-After and express-rate-limit's message", async () => {
  await serving(app(rateLimit(threePerHour)), async (url) => {
    const ok = [];
    for (let i = 0; i < 3; i++) {
      const r = await get(url);
      assert.equal(r.status, 200);
      ok.push((await r.json()).remaining);
      assert.match(r.headers.get("ratelimit"), /^"default";r=\d;t=\d+$/);
      assert.equal(r.headers.get("ratelimit-policy"), '"default";q=3;w=3600');
      assert.equal(r.headers.get("x-ratelimit-limit"), "3");
      assert.equal(r.headers.get("retry-after"), null);
    }
    assert.deepEqual(ok, [2, 1, 0]);
    const denied = await get(url);
    assert.equal(denied.status, 429);
    assert.equal(denied.headers.get("content-type"), "text/html; charset=utf-8", "Express's res.send of a string");
    const wait = Number(denied.headers.get("retry-after"));
    assert.ok(wait > 1000 && wait <= 1200, `Retry-After ${wait}`);
    assert.equal(await denied.text(), "Too many requests, please try again later.");
    assert.equal(denied.headers.get("x-ratelimit-remaining"), "0");
  });
});

test("standardHeaders and legacyHeaders, as express-rate-limit names them; Retry-After on every denial", async () => {
  const names = (r) => [...r.headers.keys()].filter((n) => /ratelimit|retry-after/.test(n)).sort();
  const legacy = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];
  for (const [options, allowed, denied] of [
    [{ legacyHeaders: false }, ["ratelimit", "ratelimit-policy"], ["ratelimit", "ratelimit-policy", "retry-after"]],
    [{ standardHeaders: "draft-7", legacyHeaders: false }, ["ratelimit", "ratelimit-policy"], ["ratelimit", "ratelimit-policy", "retry-after"]],
    [{ standardHeaders: true, legacyHeaders: false }, ["ratelimit-limit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset"], ["ratelimit-limit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset", "retry-after"]],
    [{ standardHeaders: false }, legacy, ["retry-after", ...legacy]],
    [{ standardHeaders: false, legacyHeaders: false }, [], ["retry-after"]],
  ]) {
    await serving(app(rateLimit({ algorithm: "fixed-window", quota: "1/1h", ...options })), async (url) => {
      assert.deepEqual(names(await get(url)), allowed, JSON.stringify(options));
      assert.deepEqual(names(await get(url)), denied, JSON.stringify(options));
    });
  }
});

test("partitionKey sends the key hashed as pk, never as it is", async () => {
  await serving(app(rateLimit({ algorithm: "fixed-window", quota: "1/1h", partitionKey: true, key: () => "user:alice" })), async (url) => {
    const policy = (await get(url)).headers.get("ratelimit-policy");
    assert.match(policy, /^"default";q=1;w=3600;pk=:[A-Za-z0-9+/]{11}=:$/);
    assert.ok(!policy.includes("alice"));
  });
});

test("the default key is the client IP: IPv6 clients by their /56, IPv4 clients each on their own", async () => {
  const mw = rateLimit({ ...threePerHour, quota: "1/1h" });
  await serving(app(mw, { trustProxy: true }), async (url) => {
    const from = async (ip) => (await get(url, { "x-forwarded-for": ip })).status;
    assert.equal(await from("2001:db8:1234:5678::1"), 200);
    assert.equal(await from("2001:db8:1234:56ff:abcd::2"), 429, "same /56: the same client");
    assert.equal(await from("2001:db8:1234:5700::1"), 200, "another /56");
    assert.equal(await from("192.0.2.1"), 200);
    assert.equal(await from("::ffff:192.0.2.1"), 429, "an IPv4-mapped address is its IPv4 address");
    assert.equal(await from("192.0.2.2"), 200);
  });
  assert.deepEqual(mw.limiter.keys().sort(), ["192.0.2.1", "192.0.2.2", "2001:db8:1234:5600::/56", "2001:db8:1234:5700::/56"]);
  const whole = rateLimit({ ...threePerHour, quota: "1/1h", ipv6Subnet: false });
  await serving(app(whole, { trustProxy: true }), async (url) => {
    const from = async (ip) => (await get(url, { "x-forwarded-for": ip })).status;
    assert.equal(await from("2001:db8::1"), 200);
    assert.equal(await from("2001:db8::2"), 200, "ipv6Subnet: false keys whole addresses");
  });
});

test("key, cost and skip from the request; a custom message and status", async () => {
  const mw = rateLimit({
    algorithm: "token-bucket", limit: 1, window: "1h", burst: 5,
    key: (req) => `user:${req.headers["x-user"]}`,
    cost: (req) => Number(req.headers["x-cost"] ?? 1),
    skip: async (req) => req.headers["x-health"] === "1",
    statusCode: 503,
    message: (req, res, decision) => `slow down (${decision.remaining} left, ${req.rateLimit.used} used)`,
  });
  await serving(app(mw), async (url) => {
    assert.equal((await get(url, { "x-user": "a", "x-cost": "4" })).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await get(url, { "x-user": "a", "x-health": "1" })).status, 200, "skipped: not counted");
    // 1 unit left: a peek of one more says 0 would remain.
    assert.equal(mw.limiter.peek("user:a").remaining, 0);
    const denied = await get(url, { "x-user": "a", "x-cost": "2" });
    assert.deepEqual([denied.status, denied.headers.get("content-type"), await denied.text()], [503, "text/html; charset=utf-8", "slow down (1 left, 6 used)"]);
    assert.equal((await get(url, { "x-user": "b", "x-cost": "5" })).status, 200, "another key");
    assert.equal(mw.limiter.peek("user:a").remaining, 0, "the denied hit was not counted");
  });
});

test("skipFailedRequests gives failed requests back; skipSuccessfulRequests counts only failures", async () => {
  const settle = () => new Promise((ok) => setTimeout(ok, 20));
  const failing = rateLimit({ ...threePerHour, quota: "2/1h", key: () => "k", skipFailedRequests: true });
  await serving(app(failing, { status: 500 }), async (url) => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await get(url)).status, 500, `request ${i}`);
      await settle();
    }
  });
  const at = { now: Date.now() };
  assert.deepEqual(failing.limiter.peek("k", at), failing.limiter.peek("never-seen", at), "every failed request was given back");
  const succeeding = rateLimit({ ...threePerHour, quota: "2/1h", key: () => "k", skipSuccessfulRequests: true });
  await serving(app(succeeding), async (url) => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await get(url)).status, 200);
      await settle();
    }
  });
  const at2 = { now: Date.now() };
  assert.deepEqual(succeeding.limiter.peek("k", at2), succeeding.limiter.peek("never-seen", at2), "successes were given back");
});

test("skipFailedRequests: a request whose client went away before the answer counts as failed", async () => {
  const mw = rateLimit({ ...threePerHour, quota: "1/1h", key: () => "k", skipFailedRequests: true });
  let closed;
  const gone = new Promise((ok) => (closed = ok));
  const handler = (req, res) =>
    mw(req, res, () => {
      res.once("close", closed); // never answered: the client aborts first
    });
  await serving(handler, async (url) => {
    const abort = new AbortController();
    const pending = fetch(url, { signal: abort.signal }).catch((e) => e.name);
    while (mw.limiter.size === 0) await new Promise((ok) => setTimeout(ok, 5));
    const now = Date.now();
    assert.equal(mw.limiter.peek("k", { now }).allowed, false, "counted while in flight");
    abort.abort();
    assert.equal(await pending, "AbortError");
    await gone;
    await new Promise((ok) => setTimeout(ok, 20));
    assert.equal(mw.limiter.peek("k", { now: Date.now() }).allowed, true, "given back once the connection closed");
  });
});

test("plain node:http: one middleware in front of a handler; a key function that throws reaches next(err)", async () => {
  const mw = rateLimit({
    limiter: new RateLimiter({ algorithm: "sliding-window", quota: "1/1h" }),
    key: (req) => {
      if (req.url === "/boom") throw new Error("no user");
      return req.url;
    },
  });
  const handler = (req, res) =>
    mw(req, res, (err) => {
      res.statusCode = err ? 500 : 200;
      res.end(err ? `error: ${err.message}` : "ok");
    });
  await serving(handler, async (url) => {
    assert.deepEqual(await Promise.all([get(`${url}/a`), get(`${url}/b`)]).then((rs) => rs.map((r) => r.status)), [200, 200]);
    assert.equal((await get(`${url}/a`)).status, 429);
    const boom = await get(`${url}/boom`);
    assert.deepEqual([boom.status, await boom.text()], [500, "error: no user"]);
  });
});

test("a handler replaces the 429 answer and sees express-rate-limit's options, then the decision", async () => {
  const seen = [];
  const mw = rateLimit({
    ...threePerHour,
    quota: "1/1h",
    handler: (req, res, next, options, decision) => {
      seen.push([options.statusCode, decision.allowed, decision.limit, req.rateLimit === decision]);
      res.status(418).send("teapot");
    },
  });
  await serving(app(mw), async (url) => {
    assert.equal((await get(url)).status, 200);
    const r = await get(url);
    assert.deepEqual([r.status, await r.text()], [418, "teapot"]);
  });
  assert.deepEqual(seen, [[429, false, 1, true]]);
});

test("bad options throw when the middleware is made, naming the option", () => {
  for (const [options, error, text] of [
    [null, TypeError, /options must be an object/],
    [{ ...threePerHour, headers: "draft-7" }, TypeError, /headers is now standardHeaders and legacyHeaders/],
    [{ ...threePerHour, standardHeaders: "draft-9" }, RangeError, /standardHeaders must be "draft-6", "draft-7", "draft-8", "draft-10", true or false, got "draft-9"/],
    [{ ...threePerHour, legacyHeaders: "false" }, TypeError, /legacyHeaders must be true or false/],
    [{ ...threePerHour, partitionKey: "yes" }, TypeError, /partitionKey must be true or false/],
    [{ ...threePerHour, jitter: 0.5 }, TypeError, /jitter must be true, false or a function/],
    [{ ...threePerHour, statusCode: 200 }, RangeError, /statusCode must be a whole number from 400 to 599, got 200/],
    [{ ...threePerHour, key: "ip" }, TypeError, /key must be a function, got string/],
    [{ ...threePerHour, requestPropertyName: 1 }, TypeError, /requestPropertyName must be a string or false/],
    [{ limiter: new RateLimiter(threePerHour), algorithm: "gcra" }, TypeError, /either limiter or the limiter's options \(algorithm\)/],
    [{ limiter: {} }, TypeError, /limiter must be a RateLimiter/],
    [{ ...threePerHour, skipFailedRequests: "yes" }, TypeError, /skipFailedRequests must be true or false, got "yes"/],
    [{ ...threePerHour, skipFaildRequests: true }, TypeError, /^skipFaildRequests is not an option \(the options are limiter, key, .*, algorithm, .*, store, shadow, allowList, denyList\); did you mean skipFailedRequests\?$/],
    [{ algorithm: "fixed-window", limit: 3, windowMS: 60000 }, TypeError, /^windowMS is not an option \(.*\); did you mean windowMs\?$/],
    [{ algorithm: "fixed-window", limit: 100, windowMs: 60000, window: "1m" }, TypeError, /give window or windowMs \(express-rate-limit's name for it\), not both/],
    [{ algorithm: "leaky-bucket", quota: "1/s" }, TypeError, /algorithm "leaky-bucket" is not a name here; write algorithm "gcra"/],
  ]) {
    assert.throws(() => rateLimit(options), (e) => e instanceof error && text.test(e.message), JSON.stringify(options));
  }
});

test("ipv6Subnet that is no prefix: reported when the middleware is made (ERR_ERL_IPV6_SUBNET), and an IPv6 client's request fails", async () => {
  const errors = [];
  const logger = { error: (e) => errors.push(e.code), warn: () => {} };
  const mw = rateLimit({ ...threePerHour, ipv6Subnet: 0, logger });
  assert.deepEqual(errors, ["ERR_ERL_IPV6_SUBNET"]);
  const handler = (req, res) =>
    mw(req, res, (err) => {
      res.statusCode = err ? 500 : 200;
      res.end(err ? err.message : "ok");
    });
  await serving(handler, async (url) => {
    assert.equal((await get(url)).status, 200, "IPv4 clients need no subnet");
    const v6 = await get(url.replace("127.0.0.1", "[::1]")).catch(() => null);
    if (v6 !== null) assert.deepEqual([v6.status, await v6.text()], [500, "ipv6Subnet must be a whole number from 1 to 128, or false, got 0"]);
  });
});

test("ipKey: IPv4 as is, IPv4-mapped as IPv4, IPv6 as its prefix in RFC 5952 text; anything else throws", () => {
  for (const [address, subnet, key] of [
    ["192.0.2.1", 56, "192.0.2.1"],
    ["::ffff:192.0.2.1", 56, "192.0.2.1"],
    ["::FFFF:c000:0201", 56, "192.0.2.1"],
    ["2001:db8:1234:5678::1", 56, "2001:db8:1234:5600::/56"],
    ["2001:0DB8:1234:56ff:ffff:0:0:1", 56, "2001:db8:1234:5600::/56"],
    ["2001:db8:1234:5678::1", 64, "2001:db8:1234:5678::/64"],
    ["2001:db8:1234:5678::1", 48, "2001:db8:1234::/48"],
    ["2001:db8:1234:5678::1", 57, "2001:db8:1234:5600::/57"],
    ["2001:db8:1234:56ff::1", 57, "2001:db8:1234:5680::/57"],
    ["2001:db8::1", false, "2001:db8::1"],
    ["2001:db8::1", 128, "2001:db8::1"],
    ["fe80::1%eth0", false, "fe80::1"],
    ["2001:db8:0:1:0:0:0:1", false, "2001:db8:0:1::1"],
    ["1:0:0:2:0:0:0:3", false, "1:0:0:2::3"],
    ["2001:db8::1.2.3.4", false, "2001:db8::102:304"],
    ["::", 56, "::/56"],
  ]) {
    assert.equal(ipKey(address, subnet), key, `${address} /${subnet}`);
  }
  for (const bad of ["", "1.2.3", "01.2.3.4", "1.2.3.256", "2001:db8::1::2", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::", "::g", "localhost"]) {
    assert.throws(() => ipKey(bad), /not an IP address/, bad);
  }
  assert.throws(() => ipKey(42), TypeError);
});
