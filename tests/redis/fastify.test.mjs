// `tollgate/fastify` over Redis: @fastify/rate-limit's `redis` option (an ioredis client, as
// there) and a tollgate `RedisStore` as `store`; two Fastify apps, standing for two Node
// processes, behind one limit. Fastify is the version pinned in tests/js/package.json (these
// tests take it from there rather than pin it twice).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import rateLimit from "tollgate/fastify";
import { RedisStore } from "tollgate";
import { RedisServer } from "./redis-server.mjs";
import { CLIENTS, connect } from "./clients.mjs";

const Fastify = createRequire(fileURLToPath(new URL("../js/package.json", import.meta.url)))("fastify");

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

async function app(options, route = {}) {
  const fastify = Fastify();
  await fastify.register(rateLimit, options);
  fastify.get("/", route, async () => "ok");
  await fastify.ready();
  return fastify;
}

test("redis (an ioredis client, as @fastify/rate-limit takes it): two apps share one count per key, under nameSpace", async (t) => {
  const { client, close } = await connect("ioredis", server.port);
  t.after(close);
  const options = { max: 3, timeWindow: "1 hour", redis: client, nameSpace: "fastify-a-" };
  const [a, b] = [await app(options), await app(options)];
  t.after(() => Promise.all([a.close(), b.close()]));
  const statuses = [];
  for (const f of [a, b, a, b]) statuses.push((await f.inject("/")).statusCode);
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  const keys = await client.keys("fastify-a-*");
  assert.ok(keys.length > 0 && keys.every((k) => k.startsWith("fastify-a-")), keys.join(", "));
  const denied = await a.inject("/");
  assert.deepEqual([denied.headers["x-ratelimit-limit"], denied.headers["x-ratelimit-remaining"]], ["3", "0"]);
});

for (const kind of CLIENTS) {
  test(`store: a tollgate RedisStore with tollgate's algorithms per route (${kind})`, async (t) => {
    const { client, close } = await connect(kind, server.port);
    t.after(close);
    const store = new RedisStore(client, { prefix: `fastify-store:${kind}:` });
    const route = { config: { rateLimit: { algorithm: "gcra", quota: "2/1h" } } };
    const [a, b] = [await app({ store, global: false }, route), await app({ store, global: false }, route)];
    t.after(() => Promise.all([a.close(), b.close()]));
    const statuses = [];
    for (const f of [a, b, a]) statuses.push((await f.inject("/")).statusCode);
    assert.deepEqual(statuses, [200, 200, 429]);
  });
}
