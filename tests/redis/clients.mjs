// Both common Node clients, connected to a test server, so every test can run with each.
import { createClient } from "redis";
import { Redis } from "ioredis";

export const CLIENTS = ["node-redis", "ioredis"];

/**
 * A connected client of `kind`; reconnects quickly (tests restart the server) and fails
 * commands at once while disconnected rather than queueing them (the setting docs/redis.md
 * recommends: a queued write would land after its caller was answered).
 */
export async function connect(kind, port) {
  if (kind === "node-redis") {
    const client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: () => 50 }, disableOfflineQueue: true });
    client.on("error", () => {}); // reconnects are expected in the restart tests
    await client.connect();
    return { client, close: () => client.destroy?.() ?? client.disconnect() };
  }
  const client = new Redis({ host: "127.0.0.1", port, retryStrategy: () => 50, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  client.on("error", () => {});
  await new Promise((resolve, reject) => {
    client.once("ready", resolve);
    client.once("end", () => reject(new Error("ioredis could not connect")));
  });
  return { client, close: () => client.disconnect() };
}

/** Resolves once `client` answers PING again (after a restart), within `ms`. */
export async function reconnected(kind, client, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      await (kind === "ioredis" ? client.call("PING") : client.sendCommand(["PING"]));
      return;
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
