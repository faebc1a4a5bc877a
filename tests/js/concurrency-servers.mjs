// Servers for the middleware tests of one concurrency limit (concurrency-middleware and
// concurrency-wait): a node:http handler or a fetch handler listening on 127.0.0.1, closed with
// its connections; and a poll of a condition bounded in time.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createAdaptorServer } from "@hono/node-server";

/** `handle([req, res])` served by node:http: `{ url, close }`. */
export async function listenNode(handle) {
  const { createServer } = await import("node:http");
  const server = createServer((...args) => handle(args));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => closeServer(server) };
}

/** A fetch handler served through @hono/node-server: `{ url, close }`. */
export async function listenFetch(fetchHandler) {
  const server = createAdaptorServer({ fetch: fetchHandler });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => closeServer(server) };
}

/** Closes `server` and the connections it still holds. */
export function closeServer(server) {
  server.closeAllConnections();
  return new Promise((ok) => server.close(ok));
}

/** Polls `ready()` each 5 ms for at most 5 s (a loaded machine's slowness, never a result). */
export async function until(ready, what) {
  const end = Date.now() + 5000;
  while (!ready()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 5));
  }
}
