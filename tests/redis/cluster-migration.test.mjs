// Keys that move to another node mid-run decide on: on a real Redis Cluster of three masters
// (tests/redis/redis-cluster.mjs), the slot of a busy key is migrated between hits as an
// operator resharding does it (CLUSTER SETSLOT IMPORTING on the target, MIGRATING on the
// source, MIGRATE of the slot's keys, then SETSLOT NODE everywhere). Between those steps the
// cluster answers ASK (a key already moved while its slot is migrating) and then MOVED (the
// slot's new owner); node-redis's cluster client (and ioredis's) follows both, and every
// decision is the in-memory decision of the same hits: the moved state is the key's state.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createCluster } from "redis";
import { Cluster } from "ioredis";
import { RateLimiter, RedisStore } from "tollgate";
import { RedisCluster } from "./redis-cluster.mjs";

const { keySlot } = await import(new URL("./node_modules/tollgate/dist/lib/stores/redis/redis-client.js", import.meta.url));
const run = promisify(execFile);

let cluster;
before(async () => {
  cluster = await RedisCluster.start(3);
});
after(() => cluster?.stop());

/** One command to one node by redis-cli; its answer's text, trimmed. */
async function cli(port, ...args) {
  const { stdout } = await run("redis-cli", ["-p", String(port), ...args.map(String)]);
  return stdout.trim();
}

/** The node (of `cluster.nodes`) that serves `slot`, each asked for its own slots (CLUSTER NODES, "myself"). */
async function ownerOf(slot) {
  for (const n of cluster.nodes) {
    const me = (await cli(n.port, "CLUSTER", "NODES")).split("\n").find((l) => l.includes("myself"));
    // Fields 9 on: slot ranges ("0-5460", "42"), and "[slot->-id]" for a slot migrating.
    for (const r of me.split(" ").slice(8)) {
      if (r.startsWith("[")) continue;
      const [lo, hi = lo] = r.split("-").map(Number);
      if (slot >= lo && slot <= hi) return n;
    }
  }
  throw new Error(`no node serves slot ${slot}`);
}

async function connect(kind) {
  if (kind === "node-redis") {
    const client = createCluster({ rootNodes: cluster.rootNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    client.on("error", () => {});
    await client.connect();
    return { client, close: () => client.destroy?.() ?? client.disconnect() };
  }
  const client = new Cluster(cluster.rootNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  client.on("error", () => {});
  await new Promise((resolve, reject) => {
    client.once("ready", resolve);
    client.once("end", () => reject(new Error("ioredis could not connect to the cluster")));
  });
  return { client, close: () => client.disconnect() };
}

for (const kind of ["node-redis", "ioredis"]) {
  test(`a busy key whose slot migrates mid-run (ASK, then MOVED) decides as in memory (${kind})`, async (t) => {
    const { client, close } = await connect(kind);
    t.after(close);
    const prefix = `mig:${kind}:`;
    const options = { limits: [{ name: "burst", algorithm: "gcra", quota: "5/m", burst: 4 }, { name: "hour", algorithm: "sliding-window", limit: 40, window: "1h" }] };
    // Patient: a redirect and the client's rediscovery of the slots take round trips, which a
    // loaded machine may stretch past the default timeout (busy is not an outage).
    const stored = new RateLimiter({ ...options, store: new RedisStore(client, { prefix, failure: "throw", timeoutMs: 10_000 }) });
    const memory = new RateLimiter(options);
    const busy = "user:busy";
    const other = "user:other";
    const slot = keySlot(stored._key(busy));
    assert.notEqual(keySlot(stored._key(other)), slot);

    let now = 1_700_000_000_000;
    let real = Date.now();
    let hits = 0;
    let denials = 0;
    /** `n` hits, the busy key and another in turn, each compared with memory's decision. */
    const hit = async (n, phase) => {
      for (let i = 0; i < n; i++) {
        const t0 = Date.now();
        now += 3000 + (t0 - real);
        real = t0;
        for (const key of [busy, busy, other]) {
          const [a, b] = [await stored.limit(key, { now }), memory.limit(key, { now })];
          hits++;
          if (!b.allowed) denials++;
          assert.deepEqual(
            [a.allowed, a.remaining, a.resetAt, a.retryAfter, a.blockedBy, a.degraded],
            [b.allowed, b.remaining, b.resetAt, b.retryAfter, b.blockedBy, undefined],
            `${key}, ${phase}, hit ${i}`,
          );
        }
      }
    };

    await hit(8, "before the migration");
    const source = await ownerOf(slot);
    const target = cluster.nodes.find((n) => n !== source);
    const [sourceId, targetId] = [await cli(source.port, "CLUSTER", "MYID"), await cli(target.port, "CLUSTER", "MYID")];
    assert.equal(await cli(target.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId), "OK");
    assert.equal(await cli(source.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetId), "OK");
    await hit(4, "slot migrating, key still on its source");

    const keys = (await cli(source.port, "CLUSTER", "GETKEYSINSLOT", slot, 100)).split("\n").filter(Boolean);
    assert.ok(keys.includes(stored._key(busy)), `the busy key is in its slot: ${keys}`);
    assert.equal(await cli(source.port, "MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", ...keys), "OK");
    assert.match(await cli(source.port, "EXISTS", stored._key(busy)), new RegExp(`^ASK ${slot} 127.0.0.1:${target.port}$`), "moved off the source, which now answers ASK");
    await hit(4, "key moved, slot still migrating (ASK)");

    for (const n of cluster.nodes) assert.equal(await cli(n.port, "CLUSTER", "SETSLOT", slot, "NODE", targetId), "OK");
    await hit(6, "slot owned by its new node (MOVED)");
    assert.equal((await ownerOf(slot)).port, target.port);
    assert.equal(await cli(target.port, "EXISTS", stored._key(busy)), "1", "the state lives on the new node");
    assert.ok(denials > 0 && denials < hits, `the run has denials and admissions: ${denials} of ${hits}`);
  });
}
