// What every target test shares: the folder of the apps, servers started on free 127.0.0.1
// ports with a bounded lifetime (each in its own process group, stopped with all it started),
// and the rate-limited answer each app gives: 200, 200, 200, then 429, with RateLimit headers.
// The apps import "tollgate" as a user would, from tests/targets/node_modules/tollgate: the
// packed tarball extracted there by scripts/test-targets.sh (scripts/pkg-current.sh).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const here = dirname(fileURLToPath(import.meta.url));
export const bin = (name) => join(here, "node_modules/.bin", name);

/**
 * A fresh copy of the app folder `app` under tests/targets/.build/<name> (inside tests/targets,
 * so the copy resolves "tollgate" and the tools from tests/targets/node_modules).
 */
export function appCopy(app, name = app) {
  const dir = join(here, ".build", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  cpSync(join(here, app), dir, { recursive: true });
  return dir;
}

/** A port free on 127.0.0.1 now (the kernel's pick, released for the server to take). */
export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** Runs a command to its end within `timeoutMs`; rejects with its output when it fails. */
export function run(cmd, args, { cwd = here, env = {}, timeoutMs = 600_000 } = {}) {
  return new Promise((ok, fail) => {
    const child = spawnBounded(cmd, args, { cwd, env, lifetimeMs: timeoutMs });
    let out = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (out += b));
    child.on("close", (code, signal) => {
      if (code === 0) ok(out);
      else fail(new Error(`${cmd} ${args.join(" ")} (in ${cwd}) ended with ${signal ?? `exit ${code}`}:\n${out.slice(-6000)}`));
    });
  });
}

/**
 * Spawns `cmd args` in a process group of its own under coreutils' `timeout`, which kills it
 * after `lifetimeMs` even if this test process is gone by then.
 */
function spawnBounded(cmd, args, { cwd, env, lifetimeMs }) {
  const limit = ["-s", "KILL", `${Math.ceil(lifetimeMs / 1000)}s`, cmd, ...args];
  return spawn("timeout", limit, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
}

function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {}
}

/**
 * Starts a server (`cmd args`, which listens on `port` at 127.0.0.1) and waits until it takes
 * a connection (no request: every request to these apps counts against the limit). The server is killed after `lifetimeMs` whatever
 * happens; `stop()` kills it (and every process it started) sooner. Rejects with its output
 * when it exits or does not answer within `startMs`.
 */
export async function serve(cmd, args, { port, cwd = here, env = {}, startMs = 120_000, lifetimeMs = 300_000 }) {
  const child = spawnBounded(cmd, args, { cwd, env, lifetimeMs });
  let out = "";
  let exited = null;
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (out += b));
  const gone = new Promise((ok) => child.on("exit", (code, signal) => ok((exited = signal ?? `exit ${code}`))));
  const stop = async () => {
    if (exited === null) killGroup(child);
    await gone;
  };
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startMs;
  for (;;) {
    if (exited !== null) throw new Error(`${cmd} ${args.join(" ")} ended (${exited}) before answering:\n${out.slice(-6000)}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${cmd} ${args.join(" ")} did not listen on ${base} within ${startMs} ms:\n${out.slice(-6000)}`);
    }
    if (await listening(port)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return { base, stop, output: () => out };
}

function listening(port) {
  return new Promise((ok) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => ok(true) || socket.destroy());
    socket.once("error", () => ok(false));
  });
}

/** The limit every app sets: 3 hits per hour for one client (no window ends during a test). */
export const LIMIT = 3;

/**
 * Four GETs of `url`: 200, 200, 200, then 429, each with the limit's RateLimit-Policy and
 * RateLimit headers (remaining 2, 1, 0, 0), the denial with Retry-After.
 */
export async function assertLimited(url, what = url) {
  const seen = [];
  for (let i = 0; i <= LIMIT; i++) {
    const r = await fetch(url, { signal: AbortSignal.timeout(180_000) });
    const body = await r.text();
    seen.push({ status: r.status, policy: r.headers.get("ratelimit-policy"), ratelimit: r.headers.get("ratelimit"), retryAfter: r.headers.get("retry-after"), body: body.slice(0, 300) });
  }
  const detail = `${what}: ${JSON.stringify(seen, null, 1)}`;
  assert.deepEqual(seen.map((s) => s.status), [200, 200, 200, 429], detail);
  seen.forEach((s, i) => {
    assert.match(s.policy ?? "", /;q=3;w=3600/, detail);
    assert.match(s.ratelimit ?? "", new RegExp(`;r=${Math.max(LIMIT - 1 - i, 0)};t=\\d+`), detail);
  });
  assert.match(seen[LIMIT].retryAfter ?? "", /^\d+$/, detail);
}
