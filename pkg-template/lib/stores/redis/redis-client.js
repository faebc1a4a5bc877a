// A small adapter over the common Node Redis clients, so that the package depends on neither:
// node-redis (v4 and later: `sendCommand(args)`; its cluster: `sendCommand(firstKey,
// isReadonly, args)`) and ioredis (`call(...args)`, a `Redis` or a `Cluster`). The store sends
// raw commands of strings only (state values are hex text, see redis-value.js), so every
// client stays on its plain-string path.
//
// Every command carries its deadline, `ms` after it was sent (ioredis's queued commands: `ms` of
// this process's own time, as the caller's timeout counts). One still in the client's
// offline queue then (sent while Redis was gone, or unanswered when the connection dropped and
// queued to be sent again on reconnect: both clients' defaults) is dropped, never sent late. By
// then its decision was answered by the failure mode, so a write that landed after a restart
// would count a hit its caller was told was not counted (docs/redis.md, "After an outage").
import { fail } from "../../contract/options.js";
import { RedisUnavailableError } from "./redis-errors.js";
import { Deadline } from "../deadline.js";

/** A monotonic clock in ms. */
const clock = () => performance.now();

/**
 * Wraps `client` (node-redis or ioredis, connected or connecting, a single server or a
 * cluster) as `{ kind, cluster, send(args) }`, where `args` is `[command, ...arguments]`,
 * all strings, dropped if still unsent `ms` after it was sent. On a cluster, each command goes to the node of its key (the first key of a script
 * call; keys of one command must share a hash slot, see `keySlot`). Throws a `TypeError` for
 * anything else (code `invalid_type`, field `client`).
 */
export function adaptClient(client, ms = 500) {
  if (client !== null && typeof client === "object") {
    if (typeof client.call === "function" && typeof client.callBuffer === "function") {
      // ioredis routes a Cluster's commands by their keys itself (EVALSHA's by its numkeys).
      return { kind: "ioredis", cluster: client.isCluster === true, send: ioredisSend(client, ms) };
    }
    if (typeof client.sendCommand === "function") {
      // node-redis drops a command from its queue when its signal aborts (v4 reads `signal`):
      // after `ms` of this process's own time, as the caller's timeout counts it (deadline.js),
      // so that a command queued while the client connects is not dropped because the process
      // was held meanwhile.
      const cluster = "masters" in client;
      const send = (args) => {
        const controller = new AbortController();
        const deadline = new Deadline(ms, () => controller.abort(dropped(ms)));
        const options = { abortSignal: controller.signal, signal: controller.signal };
        const reply = cluster ? client.sendCommand(routingKey(args), false, args, options) : client.sendCommand(args, options);
        const done = () => deadline.clear();
        reply.then(done, done);
        return reply;
      };
      return { kind: "node-redis", cluster, send };
    }
  }
  throw fail("client", client, 'a node-redis client (createClient or createCluster from "redis") or an ioredis client (new Redis() or new Cluster())');
}

/**
 * ioredis's `send`: each command as the client's own `Command` class (what `call` makes, with
 * its `keyPrefix` and string replies) carrying its deadline. ioredis writes a command to the
 * socket as it is sent when connected. One it queues instead (the client is connecting or
 * reconnecting) may be written only while its caller still waits: for `ms` of this process's
 * own time, counted as the caller's timeout counts it (deadline.js: a process held meanwhile is
 * not an outage); then it is rejected, and written as a `PING` if ioredis writes it later. One
 * written and then sent again after the connection dropped is written again only within `ms`
 * of its first write. A `PING` is written in its place as ioredis's own scripts swap `EVALSHA`
 * for `EVAL` at that moment. A client without the class (a Cluster) sends through `call`.
 */
function ioredisSend(client, ms) {
  const Command = client.isCluster === true ? undefined : commandClass(client);
  if (typeof Command !== "function" || typeof client.sendCommand !== "function") {
    return (args) => client.call(...args);
  }
  class DeadlineCommand extends Command {
    toWritable(socket) {
      if (this.expired || (this.writtenAt !== undefined && clock() > this.writtenAt + ms)) {
        const reject = this.reject;
        this.resolve = () => reject(dropped(ms));
        this.name = "ping";
        this.args = [];
      } else {
        this.writtenAt ??= clock();
      }
      this.waiting?.clear();
      this.waiting = null;
      return super.toWritable(socket);
    }
  }
  return (args) => {
    const command = new DeadlineCommand(args[0], args.slice(1), { keyPrefix: client.options?.keyPrefix, replyEncoding: "utf8" });
    const reply = client.sendCommand(command);
    if (command.writtenAt === undefined) {
      // Queued: its time runs only while this process can run, as its caller's does.
      command.waiting = new Deadline(ms, () => {
        command.waiting = null;
        command.expired = true;
        command.reject(dropped(ms));
      });
    }
    return reply;
  };
}

const MADE = Symbol("made");

/**
 * ioredis's `Command` class, as `call` makes its commands. Not `client.constructor.Command`:
 * ioredis mixes EventEmitter's prototype into its client classes, `constructor` included, so
 * an instance's `constructor` is EventEmitter (and every command went through `call`, without
 * a deadline). So one command is made by `call` and caught before it is sent (the client's
 * `sendCommand`, shadowed for that one synchronous call), and its class taken: an `INFO`,
 * which ioredis never auto-pipelines, so `call` hands it to `sendCommand` at once.
 */
function commandClass(client) {
  if (typeof client.sendCommand !== "function" || typeof client.call !== "function") return undefined;
  const own = Object.prototype.hasOwnProperty.call(client, "sendCommand");
  const send = client.sendCommand;
  let made;
  client.sendCommand = (command) => {
    made = command;
    throw MADE;
  };
  try {
    client.call("info");
  } catch (e) {
    if (e !== MADE) throw e;
  } finally {
    if (own) client.sendCommand = send;
    else delete client.sendCommand;
  }
  const Command = made?.constructor;
  return typeof Command === "function" && typeof Command.prototype.toWritable === "function" ? Command : undefined;
}

/** A command past its deadline, never sent. */
function dropped(ms) {
  return new RedisUnavailableError(`a command was dropped: not sent within ${ms} ms of its call`);
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
