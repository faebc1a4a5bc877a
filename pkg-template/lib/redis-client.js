// A small adapter over the common Node Redis clients, so that the package depends on neither:
// node-redis (v4 and later: `sendCommand(args, options)`) and ioredis (`call`/`callBuffer`).
// The store sends raw commands only; state values travel as bytes both ways.

/** The RESP type code of a bulk string (`$`), for node-redis v5+'s `typeMapping`. */
const BLOB_STRING = 36;

/**
 * Wraps `client` (node-redis or ioredis, already connected or connecting) as
 * `{ kind, send(args), sendBuffers(args) }`, where `args` is `[command, ...arguments]`
 * (strings and `Uint8Array`s). `send` answers with strings, `sendBuffers` with `Buffer`s for
 * bulk strings. Throws a `TypeError` for anything else.
 */
export function adaptClient(client) {
  if (client !== null && typeof client === "object") {
    if (typeof client.callBuffer === "function" && typeof client.call === "function") {
      return {
        kind: "ioredis",
        send: (args) => client.call(...args.map(asArg)),
        sendBuffers: (args) => client.callBuffer(...args.map(asArg)),
      };
    }
    if (typeof client.sendCommand === "function") {
      // v5+ read `typeMapping`, v4 reads `returnBuffers`; each ignores the other. Built here,
      // not at load: `Buffer` is Node's, and this module also loads in browsers.
      const buffers = { typeMapping: { [BLOB_STRING]: Buffer }, returnBuffers: true };
      return {
        kind: "node-redis",
        send: (args) => client.sendCommand(args.map(asArg)),
        sendBuffers: (args) => client.sendCommand(args.map(asArg), buffers),
      };
    }
  }
  throw new TypeError(
    "client must be a node-redis client (createClient from \"redis\") or an ioredis client (new Redis()), got " +
      (client === null ? "null" : typeof client),
  );
}

/** Both clients take strings and Buffers (a plain Uint8Array is not sent as bytes by all). */
function asArg(a) {
  if (typeof a === "string" || Buffer.isBuffer(a)) return a;
  if (a instanceof Uint8Array) return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return String(a);
}
