// Calendar windows through Redis: the store passes the spec ("2/month" at offset "-2h") to
// the core, and a key's month resets at the real boundary, whichever client holds the state.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

const at = (iso) => Date.parse(iso);

for (const kind of CLIENTS) {
  test(`a month at UTC+2 resets at 22:00 UTC on its last day (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const limiter = new RateLimiter({
      algorithm: "fixed-window",
      quota: "2/month",
      offset: "-2h",
      store: new RedisStore(client, { prefix: `calendar:${kind}:` }),
    });
    for (const [now, reset] of [
      ["2024-02-10T12:00:00Z", "2024-02-29T22:00:00Z"],
      ["2024-02-29T22:00:00Z", "2024-03-31T22:00:00Z"],
    ]) {
      const key = `k${now}`;
      for (let i = 0; i < 2; i++) assert.equal((await limiter.limit(key, { now: at(now) })).resetAt, at(reset));
      const denied = await limiter.limit(key, { now: at(now) });
      assert.equal(denied.allowed, false);
      assert.equal(denied.retryAfter, at(reset) - at(now));
    }
  });
}
