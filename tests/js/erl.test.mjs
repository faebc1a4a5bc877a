// express-rate-limit v8's documented examples and behaviours, ported: `rateLimit` of the packed
// package in a real Express 5 app on 127.0.0.1, written as an express-rate-limit user writes it.
// Time is Date.now(), which the middleware reads for every decision: the window tests move it
// forward instead of waiting.
import test, { before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import express from "express";
import { install } from "./packed.mjs";

let installed;
let rateLimit;
let ipKeyGenerator;
let ipKey;
before(async () => {
  installed = install();
  ({ rateLimit, ipKeyGenerator, ipKey } = await installed.esm());
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

/** A logger recording what the middleware reports (express-rate-limit's Logger). */
function recorder() {
  const seen = { error: [], warn: [] };
  return { seen, logger: { error: (...a) => seen.error.push(a), warn: (...a) => seen.warn.push(a) } };
}
const codes = (entries) => entries.map((args) => args[0]?.code);

/** express-rate-limit's test server: "/" answers "Hi there!", "/error" a 400. */
function createServer(middleware, setup = () => {}) {
  const app = express();
  app.set("env", "test"); // Express's default error handler then answers 500 without printing the stack
  setup(app);
  app.use(middleware);
  app.all("/", (req, res) => res.send("Hi there!"));
  app.get("/error", (req, res) => res.sendStatus(400));
  return app;
}

/** Listens on 127.0.0.1, gives `request(path, headers)` to `body`, closes. */
async function serving(app, body) {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((ok) => server.once("listening", ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  try {
    return await body(async (path = "/", headers = {}) => {
      const r = await fetch(base + path, { headers });
      return { status: r.status, text: await r.text(), headers: r.headers };
    });
  } finally {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
}

/** Saves the request the limiter saw (mounted after it). */
function saving() {
  const saved = {};
  return { saved, save: (req, res, next) => ((saved.req = req), next()) };
}

test("the README's setup: windowMs and limit, 429 with express-rate-limit's default message past the limit", async () => {
  await serving(createServer(rateLimit({ windowMs: 15 * 60 * 1000, limit: 2 })), async (request) => {
    assert.deepEqual([(await request()).status, (await request()).status], [200, 200]);
    const denied = await request();
    assert.deepEqual([denied.status, denied.text], [429, "Too many requests, please try again later."]);
    assert.match(denied.headers.get("content-type"), /^text\/html/, "Express's res.send of a string");
  });
});

test("no options: express-rate-limit's defaults, 5 requests per 60 s window opened at the client's first hit", async () => {
  const tick = frozenClock();
  const { saved, save } = saving();
  const start = Date.now();
  await serving(createServer([rateLimit(), save]), async (request) => {
    for (let i = 1; i <= 5; i++) {
      assert.equal((await request()).status, 200);
      assert.equal(saved.req.rateLimit.used, i);
      tick(1000);
    }
    const info = saved.req.rateLimit;
    assert.deepEqual([info.limit, info.remaining, info.key], [5, 0, "127.0.0.1"]);
    assert.ok(info.resetTime instanceof Date);
    assert.equal(info.resetTime.getTime(), start + 60_000, "the window opened at the first hit");
    assert.equal(info.current, 5, "`current`, express-rate-limit's older name of used");
    assert.ok(!Object.keys(info).includes("current"), "current stays hidden from iteration, as in express-rate-limit");
    assert.equal((await request()).status, 429);
    tick(start + 60_000 - Date.now() - 1);
    assert.equal((await request()).status, 429, "1 ms before the window's end");
    tick(1);
    assert.equal((await request()).status, 200, "a new window at its end");
  });
});

test("windows repeat: blocked, then let through once the window has passed, again and again", async () => {
  const tick = frozenClock();
  await serving(createServer(rateLimit({ limit: 2, windowMs: 50 })), async (request) => {
    for (let round = 0; round < 3; round++) {
      assert.deepEqual([(await request()).status, (await request()).status, (await request()).status], [200, 200, 429]);
      tick(60);
    }
  });
});

test("max is limit's older name; limit wins when both are given; undefined options take the default", async () => {
  for (const [options, allowed] of [[{ max: 1 }, 1], [{ max: 3, limit: 1 }, 1], [{ limit: undefined, windowMs: undefined }, 5]]) {
    await serving(createServer(rateLimit(options)), async (request) => {
      const statuses = [];
      for (let i = 0; i <= allowed; i++) statuses.push((await request()).status);
      assert.deepEqual(statuses, [...Array(allowed).fill(200), 429], JSON.stringify(options));
    });
  }
});

test("limit 0 blocks every request, with express-rate-limit's warning WRN_ERL_MAX_ZERO", async () => {
  const { seen, logger } = recorder();
  await serving(createServer(rateLimit({ max: 0, logger })), async (request) => {
    assert.equal((await request()).status, 429);
    assert.equal((await request()).status, 429);
  });
  assert.deepEqual(codes(seen.warn), ["WRN_ERL_MAX_ZERO"]);
  const quiet = recorder();
  await serving(createServer(rateLimit({ limit: 0, validate: { limit: false }, logger: quiet.logger })), async (request) => {
    assert.equal((await request()).status, 429);
  });
  assert.deepEqual([quiet.seen.warn, quiet.seen.error], [[], []]);
});

test("message: a string, a JSON value, a function and an async function of (req, res); statusCode", async () => {
  const json = { error: { code: "too-many-requests", message: "Too many requests were attempted in a short span of time." } };
  for (const [message, expected] of [
    ["Enhance your calm", "Enhance your calm"],
    [json, JSON.stringify(json)],
    [(req) => `Too many requests to ${req.path}.`, "Too many requests to /."],
    [async () => "Too many requests.", "Too many requests."],
  ]) {
    await serving(createServer(rateLimit({ limit: 1, message, statusCode: 420 })), async (request) => {
      assert.equal((await request()).text, "Hi there!");
      const denied = await request();
      assert.deepEqual([denied.status, denied.text], [420, expected]);
    });
  }
});

test("handler(req, res, next, options): express-rate-limit's options (defaults filled in), and the decision on req.rateLimit", async () => {
  const seen = [];
  const mw = rateLimit({
    limit: 1,
    windowMs: 30_000,
    handler(req, res, next, options) {
      seen.push([options.statusCode, options.limit, options.windowMs, options.message, req.rateLimit.used, req.rateLimit.remaining]);
      res.status(options.statusCode).send("Enhance your calm");
    },
  });
  await serving(createServer(mw), async (request) => {
    assert.equal((await request()).status, 200);
    const denied = await request();
    assert.deepEqual([denied.status, denied.text], [429, "Enhance your calm"]);
  });
  assert.deepEqual(seen, [[429, 1, 30_000, "Too many requests, please try again later.", 2, 0]]);
});

test("errors thrown by handler, skip, keyGenerator or limit reach Express's error handler through next()", async () => {
  const boom = () => {
    throw new Error("420: Enhance your calm");
  };
  for (const options of [{ limit: 1, handler: boom }, { skip: boom }, { keyGenerator: boom }, { limit: async () => boom() }]) {
    let caught = null;
    const app = createServer(rateLimit(options));
    app.use((err, req, res, next) => {
      caught = err.message;
      res.status(500).send(err.message);
    });
    await serving(app, async (request) => {
      const statuses = [(await request()).status, (await request()).status];
      assert.equal(statuses.at(-1), 500, Object.keys(options).join());
    });
    assert.equal(caught, "420: Enhance your calm");
  }
});

test("keyGenerator, skip (sync or async) and limit as a function of the request", async () => {
  const mw = rateLimit({
    limit: (req) => (req.query.tier === "gold" ? 3 : 1),
    keyGenerator: (req) => String(req.query.key),
    skip: async (req) => req.query.health === "1",
  });
  await serving(createServer(mw), async (request) => {
    assert.equal((await request("/?key=1")).status, 200);
    assert.equal((await request("/?key=1")).status, 429);
    assert.equal((await request("/?key=2")).status, 200, "another key");
    for (let i = 0; i < 3; i++) assert.equal((await request("/?key=1&health=1")).status, 200, "skipped");
    for (let i = 0; i < 3; i++) assert.equal((await request("/?key=3&tier=gold")).status, 200);
    const denied = await request("/?key=3&tier=gold");
    assert.deepEqual([denied.status, denied.headers.get("x-ratelimit-limit")], [429, "3"]);
    // One count per client whatever its limit, as in express-rate-limit's store: 1 hit as
    // basic, then 2 more as gold (3 in all), then neither basic nor gold lets it through.
    assert.equal((await request("/?key=4")).status, 200);
    assert.deepEqual([(await request("/?key=4&tier=gold")).status, (await request("/?key=4&tier=gold")).status], [200, 200]);
    assert.deepEqual([(await request("/?key=4&tier=gold")).status, (await request("/?key=4")).status], [429, 429]);
  });
});

test("req.rateLimit: limit, used, remaining, resetTime (a Date) and key, under requestPropertyName; two limiters apart", async () => {
  const { saved, save } = saving();
  const app = createServer([
    rateLimit({ limit: 2, requestPropertyName: "rateLimitKey", keyGenerator: (req) => String(req.query.key) }),
    rateLimit({ limit: 5, requestPropertyName: "rateLimitGlobal", keyGenerator: () => "global" }),
    save,
  ]);
  await serving(app, async (request) => {
    await request("/?key=1");
    assert.equal(saved.req.rateLimit, undefined);
    assert.deepEqual(
      [saved.req.rateLimitKey.limit, saved.req.rateLimitKey.used, saved.req.rateLimitKey.remaining, saved.req.rateLimitKey.key],
      [2, 1, 1, "1"],
    );
    assert.ok(saved.req.rateLimitKey.resetTime instanceof Date);
    assert.deepEqual([saved.req.rateLimitGlobal.limit, saved.req.rateLimitGlobal.remaining], [5, 4]);
    await request("/?key=2");
    assert.deepEqual([saved.req.rateLimitKey.remaining, saved.req.rateLimitGlobal.remaining], [1, 3]);
    await request("/?key=1");
    assert.deepEqual([saved.req.rateLimitKey.remaining, saved.req.rateLimitGlobal.remaining], [0, 2]);
  });
});

test("skipFailedRequests, skipSuccessfulRequests and an async requestWasSuccessful give hits back", async () => {
  const settled = () => new Promise((ok) => setTimeout(ok, 20));
  const failed = rateLimit({ limit: 1, skipFailedRequests: true });
  await serving(createServer(failed), async (request) => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await request("/error")).status, 400, "failed requests do not count");
      await settled();
    }
    assert.equal((await request()).status, 200);
    await settled();
    assert.equal((await request()).status, 429);
  });
  const succeeded = rateLimit({ limit: 1, skipSuccessfulRequests: true, requestWasSuccessful: async (req, res) => res.statusCode === 200 });
  await serving(createServer(succeeded), async (request) => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await request()).status, 200);
      await settled();
    }
    assert.equal((await request("/error")).status, 400);
    await settled();
    assert.equal((await request()).status, 429);
  });
});

test("resetKey and getKey on the middleware", async () => {
  const mw = rateLimit({ limit: 1 });
  await serving(createServer(mw), async (request) => {
    assert.equal(await mw.getKey("127.0.0.1"), undefined);
    assert.equal((await request()).status, 200);
    const info = await mw.getKey("127.0.0.1");
    assert.equal(info.totalHits, 1);
    assert.ok(info.resetTime instanceof Date);
    assert.equal((await request()).status, 429);
    await mw.resetKey("127.0.0.1");
    assert.equal((await request()).status, 200);
  });
});

test("ipKeyGenerator and ipv6Subnet: IPv6 clients by their /56 (or the subnet given, or a function's)", async () => {
  assert.equal(ipKeyGenerator("2001:db8:1234:5678::1"), "2001:db8:1234:5600::/56");
  assert.equal(ipKeyGenerator("2001:db8:1234:5678::1", 64), "2001:db8:1234:5678::/64");
  assert.equal(ipKeyGenerator("::ffff:192.0.2.1"), "192.0.2.1");
  assert.equal(ipKeyGenerator("192.0.2.1"), "192.0.2.1");
  assert.equal(ipKeyGenerator("1.2.3.4:5678"), "1.2.3.4:5678", "not an address: as it is, like express-rate-limit");
  for (const ipv6Subnet of [48, (req) => (req.headers["x-isp"] === "big" ? 48 : 64)]) {
    const { logger, seen } = recorder();
    const mw = rateLimit({ limit: 1, ipv6Subnet, logger });
    await serving(createServer(mw, (app) => app.set("trust proxy", 1)), async (request) => {
      const from = async (ip) => (await request("/", { "x-forwarded-for": ip, "x-isp": "big" })).status;
      assert.equal(await from("2001:db8:1234:5678::1"), 200);
      assert.equal(await from("2001:db8:1234:ffff::2"), 429, "the same /48");
      assert.equal(await from("2001:db8:1235::1"), 200, "another /48");
    });
    assert.deepEqual(seen.error, []);
  }
});

test("a custom keyGenerator: one that uses req.ip without ipKeyGenerator is reported (ERR_ERL_KEY_GEN_IPV6), one with it is not", () => {
  const bad = recorder();
  rateLimit({ keyGenerator: (req) => req.ip, logger: bad.logger });
  assert.deepEqual(codes(bad.seen.error), ["ERR_ERL_KEY_GEN_IPV6"]);
  const good = recorder();
  rateLimit({ keyGenerator: (req) => req.headers["x-user"] ?? ipKeyGenerator(req.ip), logger: good.logger });
  assert.deepEqual(good.seen.error, []);
  const both = recorder();
  rateLimit({ keyGenerator: () => "k", ipv6Subnet: 48, logger: both.logger });
  assert.deepEqual(codes(both.seen.error), ["ERR_ERL_IPV6SUBNET_OR_KEYGENERATOR"]);
});

test("validations: express-rate-limit's codes, each once, through logger (console.error by default); validate turns them off", async () => {
  const { logger, seen } = recorder();
  const mw = rateLimit({ limit: 10, logger, ipv6Subnet: 48.5 });
  await serving(createServer(mw, (app) => app.set("trust proxy", true)), async (request) => {
    await request();
    await request();
  });
  assert.deepEqual(codes(seen.error), ["ERR_ERL_IPV6_SUBNET", "ERR_ERL_PERMISSIVE_TRUST_PROXY"]);
  assert.match(seen.error[0][0].message, /See https:\/\/express-rate-limit\.github\.io\/ERR_ERL_IPV6_SUBNET\//);

  const xff = recorder();
  await serving(createServer(rateLimit({ logger: xff.logger })), async (request) => {
    await request("/", { "x-forwarded-for": "192.0.2.1" });
  });
  assert.deepEqual(codes(xff.seen.error), ["ERR_ERL_UNEXPECTED_X_FORWARDED_FOR"]);

  const off = recorder();
  await serving(createServer(rateLimit({ logger: off.logger, validate: false })), async (request) => {
    await request("/", { "x-forwarded-for": "192.0.2.1" });
  });
  const some = recorder();
  rateLimit({ logger: some.logger, validate: { xForwardedForHeader: false, nonsense: true } });
  assert.deepEqual([off.seen.error, codes(some.seen.error)], [[], ["ERR_ERL_UNKNOWN_VALIDATION"]]);

  const printed = [];
  const consoleError = console.error;
  console.error = (...args) => printed.push(args);
  try {
    rateLimit({ ipv6Subnet: 8 });
  } finally {
    console.error = consoleError;
  }
  assert.deepEqual(printed.map(([e]) => e.code), ["ERR_ERL_IPV6_SUBNET"]);

  const old = recorder();
  rateLimit({ onLimitReached: () => {}, draft_polli_ratelimit_headers: true, logger: old.logger });
  assert.deepEqual(codes(old.seen.warn).sort(), ["WRN_ERL_DEPRECATED_DRAFT_POLLI_HEADERS", "WRN_ERL_DEPRECATED_ON_LIMIT_REACHED"]);
});

test("a request counted twice in one shared store is reported (ERR_ERL_DOUBLE_COUNT); a limiter made in a request handler too", async () => {
  // Two instances of an external store (no localKeys) share their data, as two RedisStores do.
  const { logger, seen } = recorder();
  const first = rateLimit({ logger, store: new MockStore() });
  const second = rateLimit({ logger, store: new MockStore() });
  await serving(createServer([first, second]), async (request) => {
    assert.equal((await request()).status, 200);
  });
  assert.deepEqual(codes(seen.error), ["ERR_ERL_DOUBLE_COUNT"]);
  const apart = recorder();
  const memory = [rateLimit({ logger: apart.logger }), rateLimit({ logger: apart.logger })];
  await serving(createServer(memory), async (request) => assert.equal((await request()).status, 200));
  assert.deepEqual(apart.seen.error, [], "two in-memory limiters count apart");
  const late = recorder();
  const app = express();
  app.get("/", (req, res) => {
    rateLimit({ logger: late.logger });
    res.send("made");
  });
  await serving(app, async (request) => assert.equal((await request()).text, "made"));
  assert.deepEqual(codes(late.seen.error), ["ERR_ERL_CREATED_IN_REQUEST_HANDLER"]);
});

/** express-rate-limit's test store: counts in a field, records what was called. */
class MockStore {
  counter = 0;
  calls = [];
  init(options) {
    this.calls.push("init");
    this.options = options;
  }
  async get(key) {
    this.calls.push("get");
    return { totalHits: this.counter, resetTime: undefined };
  }
  async increment(key) {
    this.calls.push(`increment ${key}`);
    this.counter += 1;
    return { totalHits: this.counter, resetTime: new Date(Date.now() + this.options.windowMs) };
  }
  async decrement(key) {
    this.calls.push(`decrement ${key}`);
    this.counter -= 1;
  }
  async resetKey(key) {
    this.calls.push(`resetKey ${key}`);
  }
}

test("an express-rate-limit Store: init with the options, increment per request, its total decides; resetKey, getKey", async () => {
  const store = new MockStore();
  const mw = rateLimit({ limit: 2, windowMs: 10_000, store });
  assert.deepEqual(store.calls, ["init"], "init before any request");
  assert.deepEqual([store.options.limit, store.options.windowMs, store.options.statusCode], [2, 10_000, 429]);
  const { saved, save } = saving();
  await serving(createServer([mw, save]), async (request) => {
    assert.equal((await request()).status, 200);
    assert.deepEqual([saved.req.rateLimit.used, saved.req.rateLimit.remaining], [1, 1]);
    assert.equal((await request()).status, 200);
    const denied = await request();
    assert.deepEqual([denied.status, denied.headers.get("x-ratelimit-remaining")], [429, "0"]);
  });
  assert.deepEqual((await mw.getKey("127.0.0.1")).totalHits, 3);
  mw.resetKey("127.0.0.1");
  assert.deepEqual(store.calls.slice(1), [...Array(3).fill("increment 127.0.0.1"), "get", "resetKey 127.0.0.1"]);
  const options = rateLimit({ store: new MockStore(), max: 7 });
  void options;
});

test("an express-rate-limit Store: defaults passed to init; skipFailedRequests decrements, a denied hit included", async () => {
  const defaults = new MockStore();
  rateLimit({ store: defaults, limit: undefined });
  assert.deepEqual([defaults.options.limit, defaults.options.windowMs, defaults.options.message], [5, 60_000, "Too many requests, please try again later."]);
  const store = new MockStore();
  await serving(createServer(rateLimit({ limit: 1, store, skipFailedRequests: true })), async (request) => {
    assert.equal((await request()).status, 200);
    assert.equal((await request()).status, 429);
    await new Promise((ok) => setTimeout(ok, 20));
  });
  assert.deepEqual(store.calls.slice(1), ["increment 127.0.0.1", "increment 127.0.0.1", "decrement 127.0.0.1"]);
});

test("a legacy express-rate-limit store (incr with a callback) works; a store without the methods is refused", async () => {
  const legacy = {
    counter: 0,
    incr(key, callback) {
      this.counter += 1;
      callback(undefined, this.counter, undefined);
    },
    decrement() {},
    resetKey() {},
  };
  await serving(createServer(rateLimit({ limit: 1, store: legacy })), async (request) => {
    assert.deepEqual([(await request()).status, (await request()).status], [200, 429]);
  });
  assert.throws(() => rateLimit({ store: { invalid: true } }), /store/);
  assert.throws(() => rateLimit({ store: { ...new MockStore(), increment: async () => ({}), decrement() {}, resetKey() {}, init: "no" } }), /store/);
});

test("a store's errors: 500 by default, the request let through with passOnStoreError (logged)", async () => {
  class Broken extends MockStore {
    async increment() {
      throw new Error("Mock error");
    }
  }
  await serving(createServer(rateLimit({ store: new Broken() })), async (request) => {
    assert.equal((await request()).status, 500);
  });
  const { logger, seen } = recorder();
  await serving(createServer(rateLimit({ store: new Broken(), passOnStoreError: true, logger })), async (request) => {
    assert.equal((await request()).status, 200);
  });
  assert.equal(seen.error.length, 1);
  assert.ok(seen.error[0][0] instanceof Error);
  assert.match(seen.error[0][1], /allowing/);
});

test("one store instance in two limiters is reported (ERR_ERL_STORE_REUSE); a store's init errors are logged", async () => {
  const { logger, seen } = recorder();
  const store = new MockStore();
  rateLimit({ store, logger });
  rateLimit({ store, logger });
  assert.deepEqual(codes(seen.error), ["ERR_ERL_STORE_REUSE"]);
  const failing = recorder();
  rateLimit({ store: Object.assign(new MockStore(), { init: () => Promise.reject(new Error("Async init error")) }), logger: failing.logger });
  await new Promise((ok) => setImmediate(ok));
  assert.match(failing.seen.error[0][1], /async error during store initialization/);
});

test("tollgate's own names keep working and mix with express-rate-limit's", async () => {
  const { saved, save } = saving();
  const mw = rateLimit({ algorithm: "sliding-window", limit: 2, windowMs: 60_000, key: () => "k" });
  await serving(createServer([mw, save]), async (request) => {
    assert.deepEqual([(await request()).status, (await request()).status, (await request()).status], [200, 200, 429]);
    assert.equal(saved.req.rateLimit.limits[0].name, "default", "a limit named by tollgate's default");
  });
  const fixed = rateLimit({ quota: "3/1h", algorithm: "gcra", keyGenerator: () => "k" });
  assert.equal(fixed.limiter.policy.names[0], "default");
});

test("options that cannot mean the same: a startup error naming them and the tollgate way", () => {
  for (const [options, text] of [
    [{ windowMs: 1000, window: "1s" }, /give window or windowMs .*not both/],
    [{ keyGenerator: () => "a", key: () => "b" }, /give key or keyGenerator/],
    [{ identifier: "a", name: "b" }, /give name or identifier/],
    [{ store: new MockStore(), algorithm: "gcra", limit: 1, windowMs: 1000 }, /algorithm does not apply to an express-rate-limit Store.*RedisStore/],
    [{ store: new MockStore(), cost: () => 2 }, /cost/],
    [{ limit: () => 1, quota: "1/s", algorithm: "gcra" }, /a limit function needs limit and window, not quota/],
    [{ logger: { error: "no" } }, /logger must be an object/],
    [{ skipFaildRequests: true }, /skipFaildRequests is not an option/],
  ]) {
    assert.throws(() => rateLimit(options), text, JSON.stringify(options));
  }
});

// --- Header options (standardHeaders, legacyHeaders): the "headers" engineer's options. -------
// These cases need them in the middleware; until that work is merged they are skipped (the
// check below), and they run by themselves once it is.
const headerOptionsMerged = () => {
  try {
    rateLimit({ standardHeaders: "draft-8", legacyHeaders: false, validate: false });
    return true;
  } catch {
    return false;
  }
};

test("headers: the README's setup (draft-8, no legacy headers) and express-rate-limit's other modes", async (t) => {
  if (!headerOptionsMerged()) return t.skip("standardHeaders/legacyHeaders are not in this build's middleware yet");
  const names = (r) => [...r.headers.keys()].filter((n) => /ratelimit|retry-after/i.test(n)).sort();
  const mw = rateLimit({ windowMs: 15 * 60 * 1000, limit: 2, standardHeaders: "draft-8", legacyHeaders: false });
  await serving(createServer(mw), async (request) => {
    const ok = await request();
    assert.deepEqual(names(ok), ["ratelimit", "ratelimit-policy"]);
    assert.match(ok.headers.get("ratelimit-policy"), /^"2-in-15min"; q=2; w=900; pk=:[A-Za-z0-9+/]{16}:$/);
    assert.match(ok.headers.get("ratelimit"), /^"2-in-15min"; r=1; t=\d+$/);
    await request();
    const denied = await request();
    assert.equal(denied.status, 429);
    assert.ok(Number(denied.headers.get("retry-after")) > 0);
  });
  for (const [options, expected] of [
    [{ standardHeaders: "draft-6", legacyHeaders: false }, ["ratelimit-limit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset"]],
    [{ standardHeaders: "draft-7", legacyHeaders: false }, ["ratelimit", "ratelimit-policy"]],
    [{ standardHeaders: false, legacyHeaders: true }, ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]],
    [{ standardHeaders: false, legacyHeaders: false }, []],
  ]) {
    await serving(createServer(rateLimit({ limit: 1, ...options })), async (request) => {
      assert.deepEqual(names(await request()), expected, JSON.stringify(options));
      assert.equal((await request()).status, 429);
    });
  }
});

// --- Cases of express-rate-limit's own test suite (test/library) that tollgate first failed. ---

/** The rate-limit header names of an answer, sorted. */
const headerNames = (r) => [...r.headers.keys()].filter((n) => /ratelimit|retry-after/i.test(n)).sort();
const LEGACY = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

test("header defaults: options written for express-rate-limit get its defaults (legacy only), tollgate's own limit options draft-10 and legacy", async () => {
  for (const [options, expected] of [
    [{}, LEGACY],
    [{ windowMs: 60_000, limit: 1 }, LEGACY],
    [{ limit: 1, standardHeaders: true }, [...LEGACY, "ratelimit-limit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset"].sort()],
    [{ algorithm: "fixed-window", limit: 1, window: "1m" }, [...LEGACY, "ratelimit", "ratelimit-policy"].sort()],
    [{ algorithm: "gcra", quota: "1/m" }, [...LEGACY, "ratelimit", "ratelimit-policy"].sort()],
  ]) {
    await serving(createServer(rateLimit({ ...options, validate: false })), async (request) => {
      assert.deepEqual(headerNames(await request()), expected, JSON.stringify(options));
    });
  }
});

test("Retry-After: on a denial while any header is on; with every header off, none in express-rate-limit's mode, still sent in tollgate's", async () => {
  const cases = [
    [{ windowMs: 60_000, limit: 1 }, [...LEGACY, "retry-after"].sort()],
    [{ windowMs: 60_000, limit: 1, standardHeaders: "draft-7", legacyHeaders: false }, ["ratelimit", "ratelimit-policy", "retry-after"]],
    [{ windowMs: 60_000, limit: 1, standardHeaders: false, legacyHeaders: false }, []],
    [{ algorithm: "fixed-window", limit: 1, window: "1m", standardHeaders: false, legacyHeaders: false }, ["retry-after"]],
  ];
  for (const [options, expected] of cases) {
    await serving(createServer(rateLimit(options)), async (request) => {
      assert.equal((await request()).status, 200);
      const denied = await request();
      assert.equal(denied.status, 429);
      assert.deepEqual(headerNames(denied), expected, JSON.stringify(options));
      // express-rate-limit's window opens at the first hit: a full minute to wait.
      if (expected.includes("retry-after")) {
        const wait = Number(denied.headers.get("retry-after"));
        assert.ok(options.algorithm === undefined ? wait === 60 : wait > 0 && wait <= 60, String(wait));
      }
    });
  }
});

test("headers (express-rate-limit before v6): a boolean is legacyHeaders' default and reaches the store's init; refused beside tollgate's limit options", async () => {
  const store = new MockStore();
  rateLimit({ store, headers: false });
  assert.equal(store.options.headers, false);
  for (const [options, expected] of [
    [{ limit: 1, headers: false }, []],
    [{ limit: 1, headers: true }, LEGACY],
    [{ limit: 1, headers: false, legacyHeaders: true }, LEGACY],
    [{ limit: 1, headers: false, standardHeaders: "draft-6" }, ["ratelimit-limit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset"]],
  ]) {
    await serving(createServer(rateLimit(options)), async (request) => {
      assert.deepEqual(headerNames(await request()), expected, JSON.stringify(options));
    });
  }
  assert.throws(() => rateLimit({ algorithm: "gcra", quota: "1/s", headers: false }), /headers is now standardHeaders and legacyHeaders/);
  assert.throws(() => rateLimit({ limit: 1, headers: "both" }), /headers is now standardHeaders and legacyHeaders/);
});

test("an unsupported standardHeaders: reported (ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION) and no standard headers in express-rate-limit's mode; an error in tollgate's", async () => {
  // (null, as undefined, is the default in express-rate-limit: no standard headers.)
  for (const value of ["invalid-draft", "draft-9", 7]) {
    const { logger, seen } = recorder();
    const mw = rateLimit({ windowMs: 2 * 60 * 60 * 1000, limit: 5, standardHeaders: value, logger });
    assert.deepEqual(codes(seen.error), ["ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION"], String(value));
    await serving(createServer(mw), async (request) => {
      const r = await request();
      assert.deepEqual([r.status, r.text], [200, "Hi there!"]);
      assert.deepEqual(headerNames(r), LEGACY);
    });
  }
  const quiet = recorder();
  rateLimit({ standardHeaders: "invalid-draft", validate: { headersDraftVersion: false }, logger: quiet.logger });
  assert.deepEqual(quiet.seen.error, [], "the check can be turned off by its name");
  assert.throws(() => rateLimit({ algorithm: "gcra", quota: "1/s", standardHeaders: "invalid-draft" }), (e) => e instanceof RangeError && /standardHeaders/.test(e.message));
});

test("draft-7 over an express-rate-limit Store that gives no resetTime is reported (ERR_ERL_HEADERS_NO_RESET), once", async () => {
  class NoResetStore extends MockStore {
    async increment(key) {
      const { totalHits } = await super.increment(key);
      return { totalHits, resetTime: undefined };
    }
  }
  const { logger, seen } = recorder();
  const mw = rateLimit({ store: new NoResetStore(), limit: 5, standardHeaders: "draft-7", logger });
  await serving(createServer(mw), async (request) => {
    const r = await request();
    assert.equal(r.status, 200);
    assert.match(r.headers.get("ratelimit"), /limit=5, remaining=4, reset=60/);
    await request();
  });
  assert.deepEqual(codes(seen.error), ["ERR_ERL_HEADERS_NO_RESET"]);
});

test("ipKeyGenerator answers as express-rate-limit's: embedded IPv4, CIDR for any subnet (128 too), the address unchanged with false", () => {
  for (const [args, expected] of [
    [["1.2.3.4", 16], "1.2.3.4"],
    [["::ffff:1.2.3.4"], "1.2.3.4"],
    [["::1.2.3.4"], "1.2.3.4"],
    [["::1.2.3.4", 16], "1.2.3.4"],
    [["::1.2.3.4", false], "1.2.3.4"],
    [["::ffff:102:304"], "1.2.3.4"],
    [["::ffff:102:304", false], "1.2.3.4"],
    [["::1"], "::/56"],
    [["::"], "::/56"],
    [["64:ff9b::1.2.3.4"], "64:ff9b::/56"],
    [["2001:db8:1234:5678::1.2.3.4", 64], "2001:db8:1234:5678::/64"],
    [["0123:4567:89ab:cdef:0123:4567:89ab:cdef"], "123:4567:89ab:cd00::/56"],
    [["0123:4567:89ab:cdef:0123:4567:89ab:cdef", 63], "123:4567:89ab:cdee::/63"],
    [["123:ABC::89"], "123:abc::/56"],
    [["0123:4567:89ab:cdef:0123:4567:89ab:cdef", 128], "123:4567:89ab:cdef:123:4567:89ab:cdef/128"],
    [["0123:4567:89ab:cdef:0123:4567:89ab:cdef", false], "0123:4567:89ab:cdef:0123:4567:89ab:cdef"],
  ]) {
    assert.equal(ipKeyGenerator(...args), expected, JSON.stringify(args));
  }
  // Any other IPv6 address: the network ipKey computes, always with its prefix length.
  let seed = 7;
  const rand = (n) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 500; i++) {
    const groups = Array.from({ length: 8 }, () => rand(0x10000).toString(16));
    groups[0] = (0x2000 + rand(0x1000)).toString(16);
    const address = groups.join(":");
    const bits = 1 + rand(128);
    const network = ipKey(address, bits);
    assert.equal(ipKeyGenerator(address, bits), bits === 128 ? `${network}/128` : network, `${address} /${bits}`);
    assert.equal(ipKeyGenerator(address, false), address);
  }
});

test("several limiters on one route: their draft-8 and draft-10 list members add up, in order; draft-7's dictionary is the last one's", async () => {
  const stacked = (extra) => [1, 5, 8].map((limit, i) =>
    rateLimit({ windowMs: [5_000, 60_000, 2 * 86_400_000][i], limit, keyGenerator: () => "foo", ...extra }));
  await serving(createServer(stacked({ standardHeaders: "draft-8" })), async (request) => {
    const r = await request();
    // Exactly as express-rate-limit sends them (its headers-test's "multiple headers ... draft 8").
    assert.equal(r.headers.get("ratelimit-policy"),
      '"1-in-5sec"; q=1; w=5; pk=:MmMyNmI0NmI2OGZm:, "5-in-1min"; q=5; w=60; pk=:MmMyNmI0NmI2OGZm:, "8-in-2days"; q=8; w=172800; pk=:MmMyNmI0NmI2OGZm:');
    assert.equal(r.headers.get("ratelimit"), '"1-in-5sec"; r=0; t=5, "5-in-1min"; r=4; t=60, "8-in-2days"; r=7; t=172800');
  });
  await serving(createServer(stacked({ standardHeaders: "draft-7" })), async (request) => {
    assert.equal((await request()).headers.get("ratelimit"), "limit=8, remaining=7, reset=172800");
  });
  const own = [rateLimit({ algorithm: "gcra", quota: "10/s", name: "burst", key: () => "k" }), rateLimit({ algorithm: "gcra", quota: "100/h", name: "hourly", key: () => "k" })];
  await serving(createServer(own), async (request) => {
    assert.deepEqual((await request()).headers.get("ratelimit-policy").split(", ").map((m) => m.split(";")[0]), ['"burst"', '"hourly"']);
  });
  // express-rate-limit's "correct headers for the standard draft 8" and its `identifier`.
  for (const [identifier, name] of [[undefined, "5-in-2hrs"], ["keep-kalm", "keep-kalm"]]) {
    const mw = rateLimit({ windowMs: 2 * 60 * 60 * 1000, limit: 5, standardHeaders: "draft-8", keyGenerator: () => "foo", identifier });
    await serving(createServer(mw), async (request) => {
      const r = await request();
      assert.equal(r.headers.get("ratelimit-policy"), `"${name}"; q=5; w=7200; pk=:MmMyNmI0NmI2OGZm:`);
      assert.equal(r.headers.get("ratelimit"), `"${name}"; r=4; t=7200`);
    });
  }
  // tollgate's own limit options keep the core's form (RFC 8941 serialisation, no spaces).
  await serving(createServer(rateLimit({ algorithm: "gcra", quota: "10/s", name: "burst", key: () => "k", standardHeaders: "draft-8" })), async (request) => {
    assert.match((await request()).headers.get("ratelimit"), /^"burst";r=9;t=\d+$/);
  });
});

/** express-rate-limit's test stores: modern (promises), legacy (callbacks), backward-compatible (both). */
function erlStores() {
  class Modern {
    counter = 0;
    decrementWasCalled = false;
    async increment() {
      this.counter += 1;
      return { totalHits: this.counter, resetTime: undefined };
    }
    async decrement() {
      this.counter -= 1;
      this.decrementWasCalled = true;
    }
    async resetKey() {
      this.counter = 0;
    }
  }
  class Legacy {
    counter = 0;
    decrementWasCalled = false;
    incr(key, cb) {
      this.counter += 1;
      cb(undefined, this.counter, undefined);
    }
    decrement() {
      this.counter -= 1;
      this.decrementWasCalled = true;
    }
    resetKey() {
      this.counter = 0;
    }
  }
  class Compat extends Modern {
    incr(key, cb) {
      this.counter += 1;
      cb(undefined, this.counter, undefined);
    }
  }
  return [["modern", new Modern()], ["legacy", new Legacy()], ["compat", new Compat()]];
}

test("skipFailedRequests: a response closed before it was sent gives its hit back by the time the middleware is done (express-rate-limit's mocked close, each store kind)", async () => {
  const { EventEmitter } = await import("node:events");
  for (const [name, store] of erlStores()) {
    const middleware = rateLimit({ skipFailedRequests: true, store, validate: false });
    const req = { ip: "127.0.0.1", method: "GET", path: "/", url: "/", headers: {}, app: { get: () => false } };
    const res = Object.assign(new EventEmitter(), { statusCode: 200, writableEnded: false, setHeader() {}, getHeader() {}, end() {} });
    const running = middleware(req, res, () => {});
    res.emit("close");
    await running;
    assert.equal(store.decrementWasCalled, true, name);
  }
});

test("skipFailedRequests: a client that hangs up gives its hit back by the time its request's close is seen (express-rate-limit's server case, each store kind)", async () => {
  const http = await import("node:http");
  for (const [name, store] of erlStores()) {
    const app = createServer(rateLimit({ skipFailedRequests: true, store, validate: false }));
    let received;
    const opened = new Promise((ok) => (received = ok));
    let closed;
    const gone = new Promise((ok) => (closed = ok));
    app.get("/hang-server", (req) => {
      received();
      req.on("close", closed);
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((ok) => server.once("listening", ok));
    let answered = false;
    const hang = http.get(`http://127.0.0.1:${server.address().port}/hang-server`, () => (answered = true));
    hang.on("error", () => {});
    await opened;
    hang.destroy();
    await gone;
    server.close();
    assert.equal(store.decrementWasCalled, true, name);
    assert.equal(answered, false, name);
  }
});

test("headers are not written on a response whose headers were sent (express-rate-limit's headersSent test, through the middleware): every header mode, admitted and denied", async () => {
  for (const options of [{ legacyHeaders: true, standardHeaders: false }, ...["draft-6", "draft-7", "draft-8"].map((d) => ({ standardHeaders: d }))]) {
    const limiter = rateLimit({ windowMs: 60_000, limit: 1, validate: false, handler: () => {}, ...options });
    for (const allowed of [true, false]) {
      const written = [];
      const res = { headersSent: true, statusCode: 200, setHeader: (...a) => written.push(a), getHeader: () => undefined, on() {}, once() {} };
      let passed = false;
      await limiter({ ip: "192.0.2.1", headers: {}, method: "GET", socket: {}, app: { get: () => undefined } }, res, () => (passed = true));
      assert.equal(passed, allowed, JSON.stringify(options));
      assert.deepEqual(written, [], `${JSON.stringify(options)}, ${allowed ? "admitted" : "denied"}`);
    }
  }
});

test("a Store that answers late: the headers are measured from its answer, as express-rate-limit measures them (draft-6 reset 0 for a window ending as it answers)", async () => {
  const tick = frozenClock();
  // Time passes while the store counts, and its window ends the moment it answers.
  const store = {
    hits: 0,
    async increment() {
      tick(1500);
      return { totalHits: ++this.hits, resetTime: new Date(Date.now()) };
    },
    async get() {
      return { totalHits: this.hits, resetTime: new Date(Date.now()) };
    },
    async decrement() {},
    async resetKey() {},
  };
  const app = createServer(rateLimit({ windowMs: 60_000, limit: 5, store, standardHeaders: "draft-6", legacyHeaders: false }));
  await serving(app, async (request) => {
    const r = await request();
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("ratelimit-reset"), "0");
    assert.equal(r.headers.get("ratelimit-remaining"), "4");
  });
});
