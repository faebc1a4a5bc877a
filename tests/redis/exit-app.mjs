// A service that uses the Redis store every way it can, then shuts down as a server does:
// `fastify.close()`, `server.close()`, each client's `quit()`. Nothing else: the process must
// then end on its own (tests/redis/exit.test.mjs waits for it). `node exit-app.mjs <port>`.
import http from "node:http";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { createClient } from "redis";
import { Redis } from "ioredis";
import { RateLimiter, RedisStore } from "tollgate";
import rateLimit from "tollgate/fastify";

const Fastify = createRequire(fileURLToPath(new URL("../js/package.json", import.meta.url)))("fastify");
const port = Number(process.argv[2]);

const ioredis = new Redis({ host: "127.0.0.1", port });
const nodeRedis = createClient({ socket: { host: "127.0.0.1", port } });
await nodeRedis.connect();

// tollgate/fastify over ioredis (as @fastify/rate-limit takes it), with a penalty.
const fastify = Fastify();
await fastify.register(rateLimit, { max: 2, timeWindow: 1000, redis: ioredis, continueExceeding: true });
fastify.get("/", async () => "ok");
for (let i = 0; i < 4; i++) await fastify.inject("/");

// A node:http server deciding over RedisStores of every mode: exact (Redis's clock,
// insurance), synced, and several keys at once.
const exact = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1s", store: new RedisStore(nodeRedis, { clock: "redis", failure: "insurance", insurance: 0.5 }) });
const synced = new RateLimiter({ algorithm: "sliding-window", limit: 5, window: "1s", store: new RedisStore(nodeRedis, { syncRate: 20 }) });
const server = http.createServer(async (req, res) => {
  const d = await exact.limit(["a", "b"]);
  await synced.limit("a");
  res.writeHead(d.allowed ? 200 : 429).end();
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
for (let i = 0; i < 5; i++) {
  await new Promise((resolve, reject) => http.get(`http://127.0.0.1:${server.address().port}/`, (r) => r.resume().on("end", resolve)).on("error", reject));
}
await Promise.all(Array.from({ length: 20 }, (_, i) => exact.limit(`k${i}`, { cost: 2 })));

await fastify.close();
await new Promise((resolve) => server.close(resolve));
await synced.close();
await ioredis.quit();
await nodeRedis.quit();
console.log("closed");
