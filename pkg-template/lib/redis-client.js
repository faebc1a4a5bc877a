// A small adapter over the common Node Redis clients, so that the package depends on neither:
// node-redis (v4 and later: `sendCommand(args)`; its cluster: `sendCommand(firstKey,
// isReadonly, args)`) and ioredis (`call(...args)`, a `Redis` or a `Cluster`). The store sends
// raw commands of strings only (state values are hex text, see redis-value.js), so every
// client stays on its plain-string path.
import { fail } from "./options.js";

/**
 * Wraps `client` (node-redis or ioredis, connected or connecting, a single server or a
 * cluster) as `{ kind, cluster, send(args) }`, where `args` is `[command, ...arguments]`, all
 * strings. On a cluster, each command goes to the node of its key (the first key of a script
 * call; keys of one command must share a hash slot, see `keySlot`). Throws a `TypeError` for
 * anything else (code `invalid_type`, field `client`).
 */
export function adaptClient(client) {
  if (client !== null && typeof client === "object") {
    if (typeof client.call === "function" && typeof client.callBuffer === "function") {
      // ioredis routes a Cluster's commands by their keys itself (EVALSHA's by its numkeys).
      return { kind: "ioredis", cluster: client.isCluster === true, send: (args) => client.call(...args) };
    }
    if (typeof client.sendCommand === "function") {
      if ("masters" in client) {
        return { kind: "node-redis", cluster: true, send: (args) => client.sendCommand(routingKey(args), false, args) };
      }
      return { kind: "node-redis", cluster: false, send: (args) => client.sendCommand(args) };
    }
  }
  throw fail("client", client, 'a node-redis client (createClient or createCluster from "redis") or an ioredis client (new Redis() or new Cluster())');
}

/** The key a node-redis cluster routes `args` by (`undefined`: any node will do). */
function routingKey(args) {
  const command = args[0].toUpperCase();
  if (command === "EVALSHA" || command === "EVAL") return Number(args[2]) > 0 ? args[3] : undefined;
  if (command === "SCRIPT" || command === "TIME" || command === "PING") return undefined;
  return args[1];
}

/**
 * Redis Cluster's hash slot of `key` (CRC16/XMODEM of its UTF-8 bytes, or of the part inside
 * the first `{...}` when that is not empty, modulo 16384), as `CLUSTER KEYSLOT` answers: the
 * keys of one command must share it. Written out rather than a dependency (the package has
 * none); tests/redis/cluster.test.mjs holds it to the server's answer.
 */
export function keySlot(key) {
  const bytes = new TextEncoder().encode(key);
  let from = 0;
  let to = bytes.length;
  const open = bytes.indexOf(0x7b); // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) [from, to] = [open + 1, close];
  }
  let crc = 0;
  for (let i = from; i < to; i++) {
    crc ^= bytes[i] << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
