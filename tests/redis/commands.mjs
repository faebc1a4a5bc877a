// Raw commands to the test server through either client, and its command counts: what the
// Redis tests read to count script calls.

/** `client` (node-redis or ioredis) as `{ send(args) }`, `args` all strings. */
export const raw = (client) => ({ send: (args) => ("call" in client ? client.call(...args) : client.sendCommand(args)) });

/** EVALSHA calls Redis has run so far (INFO commandstats). */
export async function evalshas(r) {
  const info = String(await r.send(["INFO", "commandstats"]));
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}
