// `tollgate/hono` from the packed tarball against real Hono (hono 4) served by
// @hono/node-server on 127.0.0.1: hono-rate-limiter 0.5's own middleware, header and
// WebSocket tests (src/__tests__/*.spec.ts, its MockStore and routes) ported to node:test, its
// README's examples, the npm README's Hono example (examples/hono/node.mjs) run as written,
// tollgate's own options beside them, and the CommonJS entry.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, symlinkSync, copyFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { createAdaptorServer } from "@hono/node-server";
import { createNodeWebSocket } from "@hono/node-ws";
import WebSocket from "ws";
import { install, here } from "./packed.mjs";

let pkg, hono, tollgate;
before(async () => {
  pkg = install();
  mkdirSync(join(pkg.project, "node_modules/@hono"), { recursive: true });
  for (const m of ["hono", "@hono/node-server"]) symlinkSync(resolve(here, "node_modules", m), join(pkg.project, "node_modules", m));
  hono = await pkg.esm("/hono");
  tollgate = await pkg.esm();
});
after(() => pkg?.remove());

// hono-rate-limiter's helpers: every request has the same key; its test app's routes.
const keyGenerator = () => "key";
function createServer(middleware) {
  const app = new Hono();
  app.use(...(Array.isArray(middleware) ? middleware : [middleware]));
  app.get("/", (c) => c.text("Hi there!"));
  app.get("/error", (c) => c.text("Error!", { status: 400 }));
  app.post("/crash", () => {
    throw new HTTPException(400, { message: "Oops!" });
  });
  return app;
}

/** Serves `app` through @hono/node-server on a free 127.0.0.1 port; `get(path)` answers `{ status, headers, text }`. */
async function served(app, use) {
  const server = createAdaptorServer(app);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const get = async (path = "/", init = {}) => {
    const r = await fetch(base + path, init);
    return { status: r.status, headers: r.headers, text: await r.text() };
  };
  try {
    return await use(get, base, server);
  } finally {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  }
}

const statuses = async (get, n, path = "/") => {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await get(path)).status);
  return out;
};

/** Date.now frozen at a value `tick(ms)` moves (hono-rate-limiter's tests use fake timers). */
function frozenClock() {
  const real = Date.now;
  let now = real();
  Date.now = () => now;
  return { tick: (ms) => (now += ms), restore: () => (Date.now = real) };
}

/** hono-rate-limiter's MockStore: an express-rate-limit style Store recording its calls. */
class MockStore {
  initWasCalled = false;
  incrementWasCalled = false;
  decrementWasCalled = false;
  resetKeyWasCalled = false;
  getWasCalled = false;
  counter = 0;
  init() {
    this.initWasCalled = true;
  }
  async get() {
    this.getWasCalled = true;
    return { totalHits: this.counter, resetTime: undefined };
  }
  async increment() {
    this.counter += 1;
    this.incrementWasCalled = true;
    return { totalHits: this.counter, resetTime: undefined };
  }
  async decrement() {
    this.counter -= 1;
    this.decrementWasCalled = true;
  }
  async resetKey() {
    this.resetKeyWasCalled = true;
  }
}

test("middleware: does not modify the options object; calls a store's init before any request", () => {
  const options = { keyGenerator };
  hono.rateLimiter(options);
  assert.deepEqual(options, { keyGenerator });
  const store = new MockStore();
  hono.rateLimiter({ keyGenerator, store });
  assert.equal(store.initWasCalled, true);
});

test("middleware: lets the first request through, refuses once the key reached the limit; limit 0 blocks all", async () => {
  await served(createServer(hono.rateLimiter({ keyGenerator, limit: 1 })), async (get) => {
    const r = await get();
    assert.deepEqual([r.status, r.text], [200, "Hi there!"]);
  });
  await served(createServer(hono.rateLimiter({ keyGenerator, limit: 2 })), async (get) => {
    assert.deepEqual(await statuses(get, 3), [200, 200, 429]);
  });
  await served(createServer(hono.rateLimiter({ keyGenerator, limit: 0 })), async (get) => {
    assert.deepEqual(await statuses(get, 1), [429]);
  });
});

test("middleware: (eventually) accepts a blocked key again, repeatedly", async () => {
  const clock = frozenClock();
  try {
    await served(createServer(hono.rateLimiter({ keyGenerator, limit: 2, windowMs: 50 })), async (get) => {
      assert.deepEqual(await statuses(get, 3), [200, 200, 429]);
      clock.tick(60);
      assert.deepEqual(await statuses(get, 3), [200, 200, 429]);
      clock.tick(60);
      assert.deepEqual(await statuses(get, 1), [200]);
    });
  } finally {
    clock.restore();
  }
});

test("middleware: message (text, JSON, a function, an async function), statusCode and handler", async () => {
  const denial = async (options) =>
    served(createServer(hono.rateLimiter({ keyGenerator, limit: 1, ...options })), async (get) => {
      assert.equal((await get()).status, 200);
      return get();
    });
  const text = await denial({ message: "Enhance your calm" });
  assert.deepEqual([text.status, text.text], [429, "Enhance your calm"]);
  const message = { error: { code: "too-many-requests", message: "Too many requests were attempted in a short span of time." } };
  const json = await denial({ message });
  assert.deepEqual([json.status, JSON.parse(json.text)], [429, message]);
  assert.match(json.headers.get("content-type"), /application\/json/);
  assert.equal((await denial({ message: () => "Too many requests." })).text, "Too many requests.");
  assert.equal((await denial({ message: async () => "Too many requests." })).text, "Too many requests.");
  assert.equal((await denial({ statusCode: 420 })).status, 420);
  const handled = await denial({
    handler(c) {
      c.status(420);
      return c.text("Enhance your calm");
    },
  });
  assert.deepEqual([handled.status, handled.text], [420, "Enhance your calm"]);
  const byDefault = await denial({});
  assert.deepEqual([byDefault.status, byDefault.text], [429, "Too many requests, please try again later."]);
});

test("middleware: custom keyGenerator, skip (sync and async), limit as a function (sync and async)", async () => {
  const byQuery = hono.rateLimiter({ limit: 2, keyGenerator: (c) => c.req.query("key") ?? "" });
  await served(createServer(byQuery), async (get) => {
    const seq = [];
    for (const k of [1, 1, 2, 1, 2, 2]) seq.push((await get(`/?key=${k}`)).status);
    assert.deepEqual(seq, [200, 200, 200, 429, 200, 429]);
  });
  for (const skip of [() => true, async () => true]) {
    await served(createServer(hono.rateLimiter({ keyGenerator, limit: 2, skip })), async (get) => {
      assert.deepEqual(await statuses(get, 3), [200, 200, 200]);
    });
  }
  for (const limit of [() => 2, async () => 2]) {
    await served(createServer(hono.rateLimiter({ keyGenerator, limit })), async (get) => {
      assert.deepEqual(await statuses(get, 3), [200, 200, 429]);
    });
  }
});

test("headers: remaining hits without Retry-After; draft-6 (the default, and true), draft-7; Retry-After on a denial", async () => {
  await served(createServer(hono.rateLimiter({ keyGenerator, limit: async () => 2 })), async (get) => {
    const r = await get();
    assert.equal(r.headers.get("ratelimit-limit"), "2");
    assert.equal(r.headers.get("ratelimit-remaining"), "1");
    assert.equal(r.headers.get("retry-after"), null);
    assert.equal(r.headers.get("x-ratelimit-limit"), null, "no legacy headers, as hono-rate-limiter");
  });
  await served(createServer(hono.rateLimiter({ keyGenerator, windowMs: 60_000, limit: 5, standardHeaders: true })), async (get) => {
    const h = (await get()).headers;
    assert.deepEqual(
      ["ratelimit-policy", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((n) => h.get(n)),
      ["5;w=60", "5", "4", "60"],
    );
  });
  await served(createServer(hono.rateLimiter({ keyGenerator, windowMs: 60_000, limit: 5, standardHeaders: "draft-7" })), async (get) => {
    const h = (await get()).headers;
    assert.equal(h.get("ratelimit-policy"), "5;w=60");
    assert.equal(h.get("ratelimit"), "limit=5, remaining=4, reset=60");
  });
  // The clock stands still between the two hits: a second between them would show in Retry-After.
  const clock = frozenClock();
  try {
    await served(createServer(hono.rateLimiter({ keyGenerator, windowMs: 60_000, limit: 1 })), async (get) => {
      assert.equal((await get()).status, 200);
      const denied = await get();
      assert.deepEqual([denied.status, denied.headers.get("retry-after")], [429, "60"]);
    });
  } finally {
    clock.restore();
  }
  await served(createServer(hono.rateLimiter({ keyGenerator, limit: 1, standardHeaders: false })), async (get) => {
    await get();
    const denied = await get();
    assert.equal(denied.status, 429);
    assert.deepEqual([...denied.headers.keys()].filter((n) => /ratelimit|retry-after/.test(n)), []);
  });
});

test("store: increment, resetKey and getKey through c.get(\"rateLimitStore\")", async () => {
  const store = new MockStore();
  let got;
  const app = createServer([
    hono.rateLimiter({ keyGenerator, store }),
    async (c, next) => {
      await c.get("rateLimitStore").resetKey("key");
      got = await c.get("rateLimitStore").getKey("key");
      await next();
    },
  ]);
  await served(app, async (get) => assert.equal((await get()).status, 200));
  assert.equal(store.incrementWasCalled, true);
  assert.equal(store.resetKeyWasCalled, true);
  assert.equal(store.getWasCalled, true);
  assert.equal(typeof got.totalHits, "number");
});

test("store: skipSuccessfulRequests and skipFailedRequests give hits back as requestWasSuccessful judges", async () => {
  const decremented = async (options, path, init) => {
    const store = new MockStore();
    await served(createServer(hono.rateLimiter({ keyGenerator, store, ...options })), (get) => get(path, init));
    return store.decrementWasCalled;
  };
  const successful = { skipSuccessfulRequests: true };
  assert.equal(await decremented(successful, "/"), true);
  assert.equal(await decremented(successful, "/error"), false);
  const status200 = { ...successful, requestWasSuccessful: (c) => c.res.status === 200 };
  assert.equal(await decremented(status200, "/"), true);
  assert.equal(await decremented(status200, "/error"), false);
  const byQuery = { ...successful, requestWasSuccessful: (c) => c.req.query("success") === "1" };
  assert.equal(await decremented(byQuery, "/?success=1"), true);
  assert.equal(await decremented(byQuery, "/?success=0"), false);
  const failed = { skipFailedRequests: true };
  assert.equal(await decremented(failed, "/error"), true);
  assert.equal(await decremented(failed, "/"), false);
  assert.equal(await decremented({ ...failed, requestWasSuccessful: async () => false }, "/"), true);
  assert.equal(await decremented(failed, "/crash", { method: "POST" }), true, "an HTTPException is a failed request");
});

test("errors of handler and skip go to Hono's onError", async () => {
  for (const options of [
    { limit: 1, handler: () => { throw new Error("420: Enhance your calm"); } },
    { limit: 1, skip: () => { throw new Error("420: Enhance your calm"); } },
  ]) {
    let caught = false;
    const app = createServer(hono.rateLimiter({ keyGenerator, store: new MockStore(), ...options })).onError((e, c) => {
      caught = true;
      return c.text(e.message, 500);
    });
    await served(app, async (get) => {
      const seq = await statuses(get, options.handler ? 2 : 1);
      assert.deepEqual(seq, options.handler ? [200, 500] : [500]);
    });
    assert.equal(caught, true);
  }
});

test("c.get(\"rateLimit\") holds limit, used, remaining and resetTime, under requestPropertyName if given", async () => {
  for (const property of [undefined, "rateLimitInfo"]) {
    let saved;
    const app = createServer([
      hono.rateLimiter({ keyGenerator, requestPropertyName: property }),
      async (c, next) => {
        saved = c.get(property ?? "rateLimit");
        await next();
      },
    ]);
    await served(app, async (get) => {
      await get();
      assert.deepEqual([saved.limit, saved.used, saved.remaining, saved.resetTime instanceof Date], [5, 1, 4, true]);
      await get();
      assert.deepEqual([saved.limit, saved.used, saved.remaining], [5, 2, 3]);
    });
  }
});

test("two limiters with different requestPropertyNames operate independently", async () => {
  let getter;
  const app = createServer([
    async (c, next) => {
      getter = (name) => c.get(name);
      await next();
    },
    hono.rateLimiter({
      limit: 2,
      requestPropertyName: "rateLimitKey",
      keyGenerator: (c) => c.req.query("key") ?? "",
      handler(c) {
        c.status(420);
        return c.text("Enhance your calm");
      },
    }),
    hono.rateLimiter({
      limit: 5,
      requestPropertyName: "rateLimitGlobal",
      keyGenerator: () => "global",
      handler(c) {
        c.status(429);
        return c.text("Too many requests");
      },
    }),
  ]);
  await served(app, async (get) => {
    const step = async (key, status, keyLeft, globalLeft) => {
      const r = await get(`/?key=${key}`);
      assert.equal(r.status, status);
      assert.equal(getter("rateLimitKey").remaining, keyLeft);
      if (globalLeft !== undefined) assert.equal(getter("rateLimitGlobal").remaining, globalLeft);
    };
    await step(1, 200, 1, 4);
    assert.equal(getter("rateLimit"), undefined);
    assert.equal(getter("rateLimitKey").limit, 2);
    assert.equal(getter("rateLimitGlobal").limit, 5);
    await step(2, 200, 1, 3);
    await step(1, 200, 0, 2);
    await step(2, 200, 0, 1);
    const denied = await get("/?key=1");
    assert.deepEqual([denied.status, denied.text], [420, "Enhance your calm"]);
    await step(3, 200, 1, 0);
    const global = await get("/?key=3");
    assert.deepEqual([global.status, global.text], [429, "Too many requests"]);
    assert.equal(getter("rateLimitKey").remaining, 0);
    assert.equal(getter("rateLimitGlobal").remaining, 0);
  });
});

test("tollgate's options beside hono-rate-limiter's: an algorithm and quota, cost, several limits, other header drafts", async () => {
  const gcra = hono.rateLimiter({ algorithm: "gcra", quota: "2/1h", keyGenerator, cost: (c) => Number(c.req.query("cost") ?? 1) });
  await served(createServer(gcra), async (get) => {
    const first = await get("/?cost=2");
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("ratelimit-remaining"), "0", "hono-rate-limiter's draft-6 headers whatever decides");
    assert.equal(first.headers.get("x-ratelimit-remaining"), null);
    assert.equal((await get()).status, 429);
  });
  assert.equal(gcra.limiter.peek("key").remaining, 0);
  const two = hono.rateLimiter({
    keyGenerator,
    limits: [{ name: "burst", algorithm: "fixed-window", quota: "3/1m" }, { name: "hour", algorithm: "sliding-window", quota: "2/1h" }],
    standardHeaders: "draft-10",
    legacyHeaders: true,
  });
  await served(createServer(two), async (get) => {
    const first = await get();
    assert.equal(first.headers.get("ratelimit"), '"hour";r=1;t=0, "burst";r=2;t=0');
    assert.equal(first.headers.get("x-ratelimit-remaining"), "1");
    assert.deepEqual(await statuses(get, 2), [200, 429]);
  });
});

test("option mistakes are refused when the middleware is made, naming the option", () => {
  const refused = (options, code, field) =>
    assert.throws(() => hono.rateLimiter(options), (e) => e.code === code && e.field === field, `${code} ${field}`);
  refused({}, "missing_field", "keyGenerator");
  refused({ keyGenerator, binding: {} }, "unsupported_option", "binding");
  refused({ keyGenerator, limti: 5 }, "unknown_field", "limti");
  refused({ keyGenerator, statusCode: 200 }, "out_of_range", "statusCode");
  refused({ keyGenerator, standardHeaders: "draft-5" }, "invalid_value", "standardHeaders");
  assert.throws(() => hono.webSocketLimiter({ keyGenerator, statusCode: 429 }), (e) => e.field === "statusCode");
});

test("WebSocket: webSocketLimiter closes a connection's socket (1008, message) on the message over its limit", async () => {
  const store = new MockStore();
  hono.webSocketLimiter({ keyGenerator, store });
  assert.equal(store.initWasCalled, true);

  const app = new Hono();
  const { injectWebSocket, upgradeWebSocket } = createNodeWebSocket({ app });
  const limiter = hono.webSocketLimiter({ limit: 2, keyGenerator: (c) => c.req.query("conn"), message: "slow down" });
  const seen = [];
  app.get(
    "/",
    upgradeWebSocket(
      limiter(() => ({
        onMessage(event, ws) {
          seen.push(String(event.data));
          ws.send(`echo ${event.data}`);
        },
      })),
    ),
  );
  await served(app, async (_get, base, server) => {
    injectWebSocket(server);
    const talk = (conn, messages) =>
      new Promise((done, fail) => {
        const ws = new WebSocket(`${base.replace("http", "ws")}/?conn=${conn}`);
        const got = [];
        ws.on("open", () => messages.forEach((m, i) => setTimeout(() => ws.send(m), i * 20)));
        ws.on("message", (m) => got.push(String(m)));
        ws.on("close", (code, reason) => done({ got, code, reason: String(reason) }));
        ws.on("error", fail);
        // A connection under its limit stays open: close it once every echo is back.
        ws.on("message", () => got.length === messages.length && ws.close(1000));
      });
    const over = await talk("a", ["1", "2", "3"]);
    assert.deepEqual(over, { got: ["echo 1", "echo 2"], code: 1008, reason: "slow down" });
    const other = await talk("b", ["x", "y"]);
    assert.deepEqual(other.got, ["echo x", "echo y"], "each connection key has its own count");
    assert.equal(other.code, 1000);
  });
  assert.deepEqual(seen, ["1", "2", "x", "y"]);
});

test("the npm README's Hono example (examples/hono/node.mjs) runs as written on @hono/node-server", async () => {
  const example = resolve(here, "../../examples/hono/node.mjs");
  const readme = readFileSync(resolve(here, "../../pkg-template/README.md"), "utf8");
  const body = readFileSync(example, "utf8").split("\n").filter((l) => !l.startsWith("//")).join("\n").trim();
  assert.ok(readme.includes(body.split("\nif (import.meta.url")[0]), "the README shows the example's code");
  copyFileSync(example, join(pkg.project, "node.mjs"));
  const { app } = await import(pathToFileURL(join(pkg.project, "node.mjs")).href);
  await served(app, async (get) => {
    const r = await get();
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { remaining: 99 });
    assert.equal(r.headers.get("ratelimit"), "limit=100, remaining=99, reset=900");
  });
});

test("require(\"tollgate/hono\") works beside require(\"tollgate\")", async () => {
  const { rateLimiter, webSocketLimiter } = pkg.cjs("/hono");
  assert.equal(typeof webSocketLimiter, "function");
  const { RateLimiter } = pkg.cjs();
  const limiter = new RateLimiter({ algorithm: "fixed-window", quota: "1/1m" });
  await served(createServer(rateLimiter({ keyGenerator, limiter })), async (get) => {
    assert.deepEqual(await statuses(get, 2), [200, 429]);
  });
  assert.equal(limiter.peek("key").remaining, 0);
  assert.equal(typeof tollgate.rateLimit, "function");
});
