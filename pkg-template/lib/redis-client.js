// A small adapter over the common Node Redis clients, so that the package depends on neither:
// node-redis (v4 and later: `sendCommand(args)`) and ioredis (`call(...args)`). The store
// sends raw commands of strings only (state values are hex text, see redis-value.js), so both
// clients stay on their plain-string path.

/**
 * Wraps `client` (node-redis or ioredis, connected or connecting) as `{ kind, send(args) }`,
 * where `args` is `[command, ...arguments]`, all strings. Throws a `TypeError` for anything
 * else.
 */
export function adaptClient(client) {
  if (client !== null && typeof client === "object") {
    if (typeof client.call === "function" && typeof client.callBuffer === "function") {
      return { kind: "ioredis", send: (args) => client.call(...args) };
    }
    if (typeof client.sendCommand === "function") {
      return { kind: "node-redis", send: (args) => client.sendCommand(args) };
    }
  }
  throw new TypeError(
    "client must be a node-redis client (createClient from \"redis\") or an ioredis client (new Redis()), got " +
      (client === null ? "null" : typeof client),
  );
}
