// Nothing decided during an outage lands later (docs/redis.md, "After an outage"): both
// clients with their defaults, which keep an offline queue (node-redis queues commands while
// disconnected, ioredis too and also sends again those unanswered when the connection
// dropped). Redis is killed, hits are decided by the failure mode meanwhile (admitted, as
// `skipOnError` and `failure: "open"` do, or denied by "closed"), Redis restarts empty: none
// of those hits may reach it once the clients reconnect and flush their queues.
//
// ioredis gives up on queued commands after `maxRetriesPerRequest` (20) reconnection attempts:
// with attempts every 50 ms an outage of a second or more would empty its queues before the
// restart, and a hit could land only when the machine was too busy to make those attempts. So
// its attempts here are 500 ms apart, and the test checks that the outage's commands are still
// queued when Redis restarts: the case is held every run, not by chance.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "redis";
import { Redis } from "ioredis";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, reconnected } from "./clients.mjs";

/**
 * A client of `kind` with the library's defaults (only where to connect, and how soon to
 * reconnect: node-redis every 50 ms; ioredis every 500 ms, so that it still holds the outage's
 * commands when Redis is back).
 */
async function defaultClient(kind, port) {
  if (kind === "node-redis") {
    const client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: () => 50 } });
    client.on("error", () => {});
    await client.connect();
    return { client, close: () => client.destroy() };
  }
  const client = new Redis({ host: "127.0.0.1", port, retryStrategy: () => 500 });
  client.on("error", () => {});
  await new Promise((resolve) => client.once("ready", resolve));
  return { client, close: () => client.disconnect() };
}

const send = (client, args) => ("call" in client ? client.call(...args) : client.sendCommand(args));

for (const kind of CLIENTS) {
  for (const failure of ["open", "closed"]) {
    test(`hits decided while Redis is down never land after its restart, ${kind}'s defaults, failure "${failure}"`, { timeout: 60_000 }, async (t) => {
      const server = await RedisServer.start();
      t.after(() => server.stop());
      const { client, close } = await defaultClient(kind, server.port);
      t.after(close);
      const config = { algorithm: "fixed-window", limit: 100, window: "1h" };
      const limiter = new RateLimiter({ ...config, store: new RedisStore(client, { prefix: "outage:", failure, timeoutMs: 200 }) });
      assert.equal((await limiter.limit("before")).degraded, undefined);
      await server.kill();
      const during = [];
      // One at a time and several at once (one batched command), on keys old and new.
      for (let i = 0; i < 3; i++) during.push(await limiter.limit(`k${i}`, { cost: 2 }));
      during.push(...(await Promise.all(["k0", "k3", "k4", "before"].map((k) => limiter.limit(k)))));
      during.push(await limiter.limit(["k5", "k6"]));
      for (const d of during) {
        assert.equal(d.degraded, "unavailable");
        assert.equal(d.allowed, failure === "open");
      }
      if (kind === "ioredis") {
        // ioredis's queues: commands sent while it was reconnecting, and commands written
        // before it saw the connection drop, which it sends again on reconnect.
        const queued = client.offlineQueue.length + (client.prevCommandQueue?.length ?? 0);
        assert.ok(queued > 0, "the outage's commands are still in ioredis's queues at the restart");
      }
      await server.start();
      await reconnected(kind, client);
      // The clients flush their queues on reconnect; give any late write time to land.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual((await send(client, ["KEYS", "*"])).map(String), [], "a hit of the outage reached Redis");
      // Exact again, from fresh.
      const d = await limiter.limit("k0");
      assert.deepEqual([d.degraded, d.allowed, d.remaining], [undefined, true, config.limit - 1]);
    });
  }
}
