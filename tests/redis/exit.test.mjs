// Processes exit (issue 43, item 7): after `fastify.close()`, `server.close()` and the clients'
// `quit()`, nothing of tollgate's (a timer, an interval, a socket) keeps the event loop alive.
// exit-app.mjs uses the store every way it can and then only shuts down; it must end on its own.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RedisServer } from "./redis-server.mjs";

const app = fileURLToPath(new URL("./exit-app.mjs", import.meta.url));

let server;
before(async () => {
  server = await RedisServer.start();
});
after(() => server.stop());

test("a service closed and its clients quit ends on its own, with nothing of tollgate's alive", async () => {
  const child = spawn(process.execPath, [app, String(server.port)], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c) => (out += c));
  child.stderr.setEncoding("utf8").on("data", (c) => (out += c));
  let closedAt = null;
  child.stdout.on("data", () => {
    if (closedAt === null && out.includes("closed")) closedAt = Date.now();
  });
  // Killed if still running 20 s after it started (it closes within a few seconds).
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code, signal] = await new Promise((resolve) => child.once("exit", (c, s) => resolve([c, s])));
  clearTimeout(timer);
  assert.equal(signal, null, `still running 20 s after it started (closed ${closedAt === null ? "never" : "at " + closedAt}): something keeps the event loop alive\n${out}`);
  assert.equal(code, 0, out);
  assert.match(out, /closed/);
  // Once closed, it ends within a second (not at the end of a window, a sync period or a timeout).
  assert.ok(Date.now() - closedAt < 1000, `ended ${Date.now() - closedAt} ms after closing`);
});
