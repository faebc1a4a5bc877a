// `tollgate/fastify` of the packed package in real Fastify 5 apps (fastify, a pinned
// devDependency): @fastify/rate-limit v11's README examples, ported as its users write them,
// then what tollgate adds beside them (its algorithms, several limits, controls, cost) and
// what it refuses. Requests go through `fastify.inject` (Fastify's own request injection:
// the full lifecycle, hooks and error handler, without a socket). Time is Date.now(), which
// the plugin reads for every decision: window tests move it forward instead of waiting.
import test, { before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import Fastify from "fastify";
import { install } from "./packed.mjs";

let installed;
let rateLimit;
before(async () => {
  installed = install();
  rateLimit = (await installed.esm("/fastify")).default;
});
after(() => installed.remove());

const realNow = Date.now;
afterEach(() => {
  Date.now = realNow;
});
/** Freezes Date.now() at the current time; returns a function moving it forward by `ms`. */
function frozenClock() {
  let now = realNow();
  Date.now = () => now;
  return (ms) => {
    now += ms;
  };
}

/** An app with the plugin registered with `options`; `setup(fastify)` adds routes. */
async function app(options, setup = (f) => f.get("/", async () => "hello!")) {
  const fastify = Fastify();
  await fastify.register(rateLimit, options);
  await setup(fastify);
  await fastify.ready();
  return fastify;
}

const statuses = async (fastify, n, request = "/") => {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await fastify.inject(request)).statusCode);
  return out;
};

test("README, usage: max per timeWindow '1 minute', the headers, then 429 with @fastify/rate-limit's JSON error", async () => {
  frozenClock(); // the minute counts from the first hit: a second between the hits shows in Retry-After
  const fastify = await app({ max: 2, timeWindow: "1 minute" });
  const first = await fastify.inject("/");
  assert.equal(first.statusCode, 200);
  assert.deepEqual(
    ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"].map((h) => first.headers[h]),
    ["2", "1", "60"],
  );
  assert.equal(first.headers["retry-after"], undefined);
  await fastify.inject("/");
  const denied = await fastify.inject("/");
  assert.equal(denied.statusCode, 429);
  assert.deepEqual(denied.json(), { statusCode: 429, error: "Too Many Requests", message: "Rate limit exceeded, retry in 1 minute" });
  assert.deepEqual([denied.headers["x-ratelimit-remaining"], denied.headers["retry-after"]], ["0", "60"]);
});

test("README: the default max is 1000 per minute, and a new window opens a minute after a key's first hit", async () => {
  const tick = frozenClock();
  const fastify = await app({});
  assert.equal((await fastify.inject("/")).headers["x-ratelimit-limit"], "1000");
  tick(30_000);
  assert.equal((await fastify.inject("/")).headers["x-ratelimit-reset"], "30");
  tick(30_000);
  assert.equal((await fastify.inject("/")).headers["x-ratelimit-remaining"], "999");
});

test("README: a custom error handler rewrites the 429", async () => {
  const fastify = Fastify();
  await fastify.register(rateLimit, { max: 1, timeWindow: 1000 });
  fastify.setErrorHandler(function (error, request, reply) {
    if (error.statusCode === 429) {
      reply.code(429);
      error.message = "You hit the rate limit! Slow down please!";
    }
    reply.send(error);
  });
  fastify.get("/", async () => "hello!");
  await fastify.inject("/");
  const denied = await fastify.inject("/");
  assert.equal(denied.statusCode, 429);
  assert.equal(denied.json().message, "You hit the rate limit! Slow down please!");
});

test("README: 404s rate limited through fastify.rateLimit() as the not-found handler's preHandler, with its own options", async () => {
  const fastify = Fastify();
  await fastify.register(rateLimit, { global: true, max: 2, timeWindow: 1000 });
  fastify.setNotFoundHandler({ preHandler: fastify.rateLimit({ max: 4, timeWindow: 500 }) }, function (request, reply) {
    reply.code(404).send({ hello: "world" });
  });
  assert.deepEqual(await statuses(fastify, 5, "/nothing-here"), [404, 404, 404, 404, 429]);
});

test("README, options on the endpoint: global false, per-route limits, an unlimited route, a groupId (each route counts apart, as @fastify/rate-limit's)", async () => {
  const fastify = await app({ global: false, max: 3000, allowList: ["192.168.0.10"] }, (f) => {
    f.get("/", { config: { rateLimit: { max: 3, timeWindow: "1 minute" } } }, async () => "root");
    f.get("/public", async () => "public");
    f.get("/otp/send", { config: { rateLimit: { max: 3, timeWindow: "1 minute", groupId: "OTP" } } }, async () => "send");
    f.get("/otp/resend", { config: { rateLimit: { max: 3, timeWindow: "1 minute", groupId: "OTP" } } }, async () => "resend");
  });
  assert.deepEqual(await statuses(fastify, 4), [200, 200, 200, 429]);
  assert.deepEqual(await statuses(fastify, 5, "/public"), [200, 200, 200, 200, 200]);
  assert.equal((await fastify.inject("/public")).headers["x-ratelimit-limit"], undefined);
  const otp = [];
  for (const path of ["/otp/send", "/otp/resend", "/otp/send", "/otp/resend"]) otp.push((await fastify.inject(path)).statusCode);
  assert.deepEqual(otp, [200, 200, 200, 200], "each route of the group counts apart");
  assert.deepEqual(await statuses(fastify, 2, "/otp/send"), [200, 429]);
  assert.equal((await fastify.inject("/otp/resend")).statusCode, 200, "the other route of the group still has its own");
});

test("README: a route disables the global limit with config.rateLimit false, another overrides max", async () => {
  const fastify = await app({ max: 2, timeWindow: "1 minute" }, (f) => {
    f.get("/", async () => "limited");
    f.get("/public", { config: { rateLimit: false } }, async () => "public");
    f.get("/private", { config: { rateLimit: { max: 1 } } }, async () => "private");
  });
  assert.deepEqual(await statuses(fastify, 3), [200, 200, 429]);
  assert.deepEqual(await statuses(fastify, 3, "/public"), [200, 200, 200]);
  assert.deepEqual(await statuses(fastify, 2, "/private"), [200, 429]);
});

test("README, manual rate limit: createRateLimit() answers isAllowed, isExceeded and the figures; { increment: false } peeks", async () => {
  const tick = frozenClock();
  const fastify = await app({ global: false, max: 5, timeWindow: "1 minute" }, (f) => {
    const checkRateLimit = f.createRateLimit({ max: 2, timeWindow: "1 minute" });
    let failures = 0;
    f.post("/login", async (request, reply) => {
      const status = await checkRateLimit(request, { increment: false });
      if (status.isExceeded || status.remaining === 0) return reply.code(429).send({ error: "Too many attempts" });
      const success = request.body?.password === "right";
      if (!success) {
        failures++;
        await checkRateLimit(request);
        return reply.code(401).send({ error: "Invalid credentials" });
      }
      return { ok: true, failures };
    });
    f.get("/peek", async (request) => checkRateLimit(request, { increment: false }));
  });
  const login = (password) => fastify.inject({ method: "POST", url: "/login", payload: { password } });
  assert.deepEqual((await fastify.inject("/peek")).json(), {
    isAllowed: false, key: "127.0.0.1", max: 2, timeWindow: 60_000, remaining: 2, ttl: 0, ttlInSeconds: 0, isExceeded: false, isBanned: false,
  });
  assert.equal((await login("right")).statusCode, 200, "a success counts nothing");
  assert.equal((await login("wrong")).statusCode, 401);
  tick(1000);
  assert.deepEqual((await fastify.inject("/peek")).json(), {
    isAllowed: false, key: "127.0.0.1", max: 2, timeWindow: 60_000, remaining: 1, ttl: 59_000, ttlInSeconds: 59, isExceeded: false, isBanned: false,
  });
  assert.equal((await login("wrong")).statusCode, 401);
  assert.equal((await login("right")).statusCode, 429, "two failures: locked out for the rest of the minute");
  tick(60_000);
  assert.equal((await login("right")).statusCode, 200);
});

test("README: keyGenerator and a max function of the request and its key", async () => {
  const fastify = await app({
    keyGenerator(request) {
      return request.headers["service-key"];
    },
    max: async (request, key) => (key === "pro" ? 3 : 2),
    timeWindow: 1000,
  });
  const as = (key) => ({ url: "/", headers: { "service-key": key } });
  assert.deepEqual(await statuses(fastify, 4, as("pro")), [200, 200, 200, 429]);
  assert.deepEqual(await statuses(fastify, 3, as("basic")), [200, 200, 429]);
});

test("README: errorResponseBuilder's object is the answer; its context says max, ttl and the wait in words", async () => {
  const fastify = await app({
    max: 1,
    timeWindow: 5000,
    errorResponseBuilder(request, context) {
      return { statusCode: 429, error: "Too Many Requests", message: `I only allow ${context.max} requests per ${context.after} to this Website. Try again soon.`, expiresIn: context.ttl };
    },
  });
  await fastify.inject("/");
  const denied = await fastify.inject("/");
  assert.equal(denied.statusCode, 429);
  assert.match(denied.json().message, /^I only allow 1 requests per 5 seconds to this Website/);
  assert.ok(denied.json().expiresIn > 0 && denied.json().expiresIn <= 5000);
});

test("README: a dynamic allowList, onExceeding/onExceeded, and ban (429 then 403, onBanReach)", async () => {
  const seen = [];
  const fastify = await app({
    max: 1,
    ban: 1,
    timeWindow: "1 minute",
    allowList: (request) => request.headers["x-app-client-id"] === "internal-usage",
    onExceeding: (req, key) => seen.push(`exceeding ${key}`),
    onExceeded: (req, key) => seen.push(`exceeded ${key}`),
    onBanReach: (req, key) => seen.push(`ban ${key}`),
  });
  assert.deepEqual(await statuses(fastify, 3, { url: "/", headers: { "x-app-client-id": "internal-usage" } }), [200, 200, 200]);
  assert.deepEqual(seen, [], "allow-listed requests are not limited at all");
  assert.deepEqual(await statuses(fastify, 4), [200, 429, 403, 403]);
  assert.deepEqual(seen, ["exceeding 127.0.0.1", "exceeded 127.0.0.1", "exceeded 127.0.0.1", "ban 127.0.0.1", "exceeded 127.0.0.1", "ban 127.0.0.1"]);
});

test("README: hook 'preHandler' limits by what an earlier preHandler set (the user)", async () => {
  const fastify = Fastify();
  await fastify.register(rateLimit, { max: 1, timeWindow: "1 minute", hook: "preHandler", keyGenerator: (request) => request.userId || request.ip });
  fastify.decorateRequest("userId", "");
  fastify.addHook("preHandler", async function (request) {
    const { userId } = request.query;
    if (userId) request.userId = userId;
  });
  fastify.get("/", async () => "hello!");
  assert.deepEqual(await statuses(fastify, 2, "/?userId=ann"), [200, 429]);
  assert.deepEqual(await statuses(fastify, 1, "/?userId=bob"), [200]);
});

test("README: a custom store counts; its child gets each route's options", async () => {
  const children = [];
  function CustomStore(options) {
    this.options = options;
    this.current = 0;
  }
  CustomStore.prototype.incr = function (key, cb, timeWindow, max) {
    this.current++;
    cb(null, { current: this.current, ttl: timeWindow - this.current * 1000 });
  };
  CustomStore.prototype.child = function (routeOptions) {
    children.push(routeOptions.max);
    return new CustomStore({ ...this.options, ...routeOptions });
  };
  const fastify = await app({ max: 2, timeWindow: 10_000, store: CustomStore }, (f) => {
    f.get("/", async () => "global");
    f.get("/route", { config: { rateLimit: { max: 1 } } }, async () => "route");
  });
  assert.deepEqual(await statuses(fastify, 3), [200, 200, 429]);
  assert.deepEqual(await statuses(fastify, 2, "/route"), [200, 429]);
  assert.deepEqual(children, [1, 1], "the route and its HEAD route (Fastify's exposeHeadRoutes)");
  assert.equal((await fastify.inject("/")).headers["x-ratelimit-reset"], "6");
});

test("README: enableDraftSpec sends RateLimit-Limit, -Remaining, -Reset and Retry-After", async () => {
  const fastify = await app({ max: 1, timeWindow: 30_000, enableDraftSpec: true });
  const ok = await fastify.inject("/");
  assert.deepEqual(["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "x-ratelimit-limit"].map((h) => ok.headers[h]), ["1", "0", "30", undefined]);
  const denied = await fastify.inject("/");
  assert.deepEqual([denied.headers["ratelimit-reset"], denied.headers["retry-after"]], ["30", "30"]);
});

test("README: addHeaders and addHeadersOnExceeding turn headers off", async () => {
  const fastify = await app({ max: 1, addHeadersOnExceeding: { "x-ratelimit-reset": false }, addHeaders: { "retry-after": false, "x-ratelimit-limit": false } });
  const ok = await fastify.inject("/");
  assert.deepEqual([ok.headers["x-ratelimit-limit"], ok.headers["x-ratelimit-reset"]], ["1", undefined]);
  const denied = await fastify.inject("/");
  assert.deepEqual([denied.headers["retry-after"], denied.headers["x-ratelimit-limit"], denied.headers["x-ratelimit-remaining"]], [undefined, undefined, "0"]);
});

test("ipv6Subnet: IPv6 clients of one /64 share a key by default; normalizeIP is exported", async () => {
  const { normalizeIP } = await installed.esm("/fastify");
  assert.equal(normalizeIP("2001:db8:abcd:12::1"), "2001:db8:abcd:12::");
  const fastify = Fastify({ trustProxy: true });
  await fastify.register(rateLimit, { max: 1 });
  fastify.get("/", async () => "ok");
  const from = (ip) => ({ url: "/", headers: { "x-forwarded-for": ip } });
  assert.equal((await fastify.inject(from("2001:db8:abcd:12::1"))).statusCode, 200);
  assert.equal((await fastify.inject(from("2001:db8:abcd:12::ffff"))).statusCode, 429);
  assert.equal((await fastify.inject(from("2001:db8:abcd:13::1"))).statusCode, 200);
});

test("CommonJS: require('tollgate/fastify') is the plugin, with default, fastifyRateLimit and normalizeIP, as @fastify/rate-limit exports them", async () => {
  const plugin = installed.cjs("/fastify");
  assert.equal(typeof plugin, "function");
  assert.equal(plugin.default, plugin);
  assert.equal(plugin.fastifyRateLimit, plugin);
  assert.equal(plugin.normalizeIP("::ffff:192.0.2.1"), "192.0.2.1");
  const fastify = Fastify();
  await fastify.register(plugin, { max: 1 });
  fastify.get("/", async () => "ok");
  assert.deepEqual(await statuses(fastify, 2), [200, 429]);
});

// --- What tollgate adds beside @fastify/rate-limit's options. ---

test("tollgate's algorithms: a token bucket of 100/s with a burst of 500; its limit is the burst, remaining never above it", async () => {
  const tick = frozenClock();
  const fastify = await app({ algorithm: "token-bucket", limit: 100, window: "1s", burst: 500, enableDraftSpec: true });
  const first = await fastify.inject("/");
  assert.deepEqual([first.headers["ratelimit-limit"], first.headers["ratelimit-remaining"]], ["500", "499"]);
  for (let i = 0; i < 499; i++) await fastify.inject("/");
  const denied = await fastify.inject("/");
  assert.equal(denied.statusCode, 429);
  assert.equal(denied.headers["retry-after"], "1");
  tick(10);
  assert.equal((await fastify.inject("/")).statusCode, 200, "one token back every 10 ms");
});

test("several limits per route and a denyList (403 without counting), under tollgate's names", async () => {
  frozenClock();
  const fastify = await app({}, (f) => {
    f.get("/", { config: { rateLimit: { limits: [{ name: "minute", algorithm: "fixed-window", quota: "2/1m" }, { name: "hour", algorithm: "sliding-window", quota: "3/1h" }] } } }, async () => "ok");
    f.get("/gcra", { config: { rateLimit: { algorithm: "gcra", max: 2, timeWindow: "1 hour" } } }, async () => "ok");
    f.get("/blocked", { config: { rateLimit: { algorithm: "gcra", quota: "10/s", denyList: ["127.0.0.1"] } } }, async () => "never");
  });
  assert.deepEqual(await statuses(fastify, 3), [200, 200, 429]);
  assert.deepEqual(await statuses(fastify, 3, "/gcra"), [200, 200, 429], "max and timeWindow stand for limit and window");
  const blocked = await fastify.inject("/blocked");
  assert.equal(blocked.statusCode, 403);
});

test("cost, a function of the request: a request's units; a cost that is not one is a 400 JSON error naming invalid_cost and cost", async () => {
  const fastify = await app({ algorithm: "token-bucket", quota: "10/1h", cost: (request) => Number(request.query.cost ?? 1) });
  assert.equal((await fastify.inject("/?cost=4")).headers["x-ratelimit-remaining"], "6");
  for (const cost of ["0", "-1", "NaN", "1.5", "11"]) {
    const r = await fastify.inject(`/?cost=${cost}`);
    assert.equal(r.statusCode, 400, cost);
    assert.match(r.headers["content-type"], /^application\/json/);
    const { error } = r.json();
    assert.deepEqual([error.code, error.field], ["invalid_cost", "cost"], cost);
    assert.doesNotMatch(r.payload, /at .*\.js/, "no stack trace");
  }
  assert.equal((await fastify.inject("/?cost=6")).statusCode, 200, "the refused requests took nothing");
});

test("options that cannot mean the same are refused at start-up with tollgate's way; a misspelt one with the likely name", async () => {
  const registering = (options) => app(options);
  // max, timeWindow and ban are validated as tollgate's own (a code and a field), never a silent default.
  for (const [options, code, field] of [
    [{ timeWindow: "banana" }, "invalid_value", "timeWindow"],
    [{ timeWindow: "1 fortnight" }, "invalid_value", "timeWindow"],
    [{ timeWindow: -5 }, "out_of_range", "timeWindow"],
    [{ timeWindow: 1.5 }, "out_of_range", "timeWindow"],
    [{ timeWindow: true }, "invalid_type", "timeWindow"],
    [{ max: -1 }, "out_of_range", "max"],
    [{ max: "ten" }, "invalid_type", "max"],
    [{ ban: -2 }, "out_of_range", "ban"],
    [{ ban: "1" }, "invalid_type", "ban"],
    [{ continueExceeding: "yes" }, "invalid_type", "continueExceeding"],
    [{ continueExceeding: true, exponentialBackoff: true }, "conflicting_fields", "exponentialBackoff"],
  ]) {
    await assert.rejects(registering(options), { code, field }, JSON.stringify(options));
  }
  await assert.rejects(
    app({}, (f) => f.get("/", { config: { rateLimit: { timeWindow: "banana" } } }, async () => "x")),
    { code: "invalid_value", field: "timeWindow" },
    "a route's options at the route's registration",
  );
  await assert.rejects(registering({ timewindow: 1000 }), { code: "unknown_field", field: "timewindow", message: /did you mean timeWindow\?$/ });
  await assert.rejects(registering({ windowMs: 1000 }), { code: "renamed", field: "windowMs", message: /timeWindow/ });
  await assert.rejects(
    app({}, (f) => f.get("/", { config: { rateLimit: { maxx: 1 } } }, async () => "x")),
    { code: "unknown_field", field: "config.rateLimit.maxx", message: /did you mean max\?$/ },
  );
  await assert.rejects(registering({ algorithm: "gcra", quota: "1/s", burst: "5" }), { code: "invalid_type", field: "burst" });
  // The defaults of the two are accepted.
  await (await registering({ continueExceeding: false, exponentialBackoff: false })).close();
});

test("continueExceeding: each denied hit renews the block of timeWindow; a denied hit is counted nowhere", async () => {
  const tick = frozenClock();
  const fastify = await app({ max: 2, timeWindow: 1000, continueExceeding: true });
  assert.deepEqual(await statuses(fastify, 3), [200, 200, 429]);
  for (let i = 0; i < 3; i++) {
    tick(900);
    const d = await fastify.inject("/");
    assert.deepEqual([d.statusCode, d.headers["retry-after"]], [429, "1"], "renewed by the knock");
  }
  tick(1000);
  const back = await fastify.inject("/");
  assert.deepEqual([back.statusCode, back.headers["x-ratelimit-remaining"]], [200, "1"]);
});

test("exponentialBackoff: each denied hit doubles the block, from timeWindow, to maxBlockDuration", async () => {
  const tick = frozenClock();
  const fastify = await app({ max: 1, timeWindow: 1000, exponentialBackoff: true, maxBlockDuration: "4s" });
  assert.equal((await fastify.inject("/")).statusCode, 200);
  const waits = [];
  for (let i = 0; i < 5; i++) {
    const d = await fastify.inject("/");
    assert.equal(d.statusCode, 429);
    waits.push(d.json().message);
  }
  assert.deepEqual(waits, ["1 second", "2 seconds", "4 seconds", "4 seconds", "4 seconds"].map((w) => `Rate limit exceeded, retry in ${w}`));
  tick(4000);
  assert.equal((await fastify.inject("/")).statusCode, 200, "once the block ends, the key starts over");
});

test("onDecision, the decision hook, reports each request the plugin decides: allowed, near-limit, denied", async () => {
  const seen = [];
  const fastify = await app({ algorithm: "fixed-window", limit: 5, window: "1h", onDecision: (r) => seen.push(r) });
  assert.deepEqual(await statuses(fastify, 6), [200, 200, 200, 200, 200, 429]);
  assert.deepEqual(seen.map((r) => r.outcome), ["allowed", "allowed", "allowed", "near-limit", "near-limit", "denied"]);
  assert.ok(seen.every((r) => r.cost === 1 && typeof r.decision.allowed === "boolean"));
  await fastify.close();
});
