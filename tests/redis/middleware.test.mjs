// `rateLimit` (HTTP middleware) over a RedisStore: two servers, standing for two Node
// processes, behind one limit; failed requests given back through the store.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { rateLimit, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

/** A node:http server on 127.0.0.1 answering `status` behind `mw`; returns its URL and a stop. */
async function listen(mw, status = 200) {
  const http = createServer((req, res) =>
    mw(req, res, (err) => {
      res.statusCode = err ? 500 : status;
      res.end(err ? String(err.message) : "ok");
    }),
  );
  await new Promise((ok) => http.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${http.address().port}`,
    stop: () => {
      http.closeAllConnections();
      return new Promise((ok) => http.close(ok));
    },
  };
}

for (const kind of CLIENTS) {
  test(`two servers with their own middleware share one limit through Redis (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const options = { algorithm: "sliding-window", quota: "4/1h", store: new RedisStore(client, { prefix: `mw:${kind}:` }) };
    const a = await listen(rateLimit(options));
    const b = await listen(rateLimit(options));
    t.after(() => Promise.all([a.stop(), b.stop()]));
    const statuses = [];
    for (const url of [a.url, b.url, a.url, b.url, a.url, b.url]) {
      const r = await fetch(url);
      statuses.push(r.status);
      if (r.status === 429) assert.ok(Number(r.headers.get("retry-after")) > 0);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  });

  test(`skipFailedRequests gives hits back through the store (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const mw = rateLimit({
      algorithm: "fixed-window", quota: "2/1h", key: () => "k", skipFailedRequests: true,
      store: new RedisStore(client, { prefix: `mw-refund:${kind}:` }),
    });
    const failing = await listen(mw, 502);
    t.after(failing.stop);
    const given = async () => {
      const now = Date.now();
      return (await mw.limiter.peek("k", { now })).remaining === (await mw.limiter.peek("fresh", { now })).remaining;
    };
    for (let i = 0; i < 4; i++) {
      assert.equal((await fetch(failing.url)).status, 502, `request ${i}: the failed ones before it were given back`);
      // The refund is a script call after the answer: wait for it (bounded in polls).
      let polls = 0;
      while (!(await given())) {
        assert.ok(++polls < 1000, "the failed request was never given back");
        await new Promise((ok) => setTimeout(ok, 10));
      }
    }
    const now = Date.now();
    assert.equal((await mw.limiter.peek("k", { now })).remaining, (await mw.limiter.peek("fresh", { now })).remaining);
  });
}
