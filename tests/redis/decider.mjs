// One process deciding over a RedisStore, one hit per line: `node decider.mjs <port> <kind>
// <config JSON> <store options JSON>` reads `{ key, now, cost }` lines on stdin and writes each
// decision as a JSON line on stdout; it keeps its store (and so its cached bytes) between hits,
// as a server process does. Ends when stdin ends, its client quit.
import { createInterface } from "node:readline";
import { RateLimiter, RedisStore } from "tollgate";
import { connect } from "./clients.mjs";

const [port, kind, config, storeOptions] = process.argv.slice(2);
const { client } = await connect(kind, Number(port));
const limiter = new RateLimiter({ ...JSON.parse(config), store: new RedisStore(client, JSON.parse(storeOptions)) });
process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  const { key, now, cost } = JSON.parse(line);
  process.stdout.write(JSON.stringify(await limiter.limit(key, { now, cost })) + "\n");
}
await client.quit();
