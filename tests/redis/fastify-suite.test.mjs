// @fastify/rate-limit 11.2.0's own Redis tests (test/redis-rate-limit.test.js of the pinned
// devDependency in tests/js) against `tollgate/fastify`, as tests/js/fastify-suite.test.mjs runs
// its other files: the file copied into a temporary project where the packed package
// (tests/redis/node_modules/tollgate), ioredis and Fastify resolve, `require('../index')` made
// `require('tollgate/fastify')`, every assertion kept. The one other change: its clients reach
// this file's redis-server on a throwaway port rather than 6379 (`port` beside each
// `host: REDIS_HOST`). docs/fastify.md ("Redis") lists what does not pass and why, and the
// count; this test holds the package to it. The file runs without `--test-force-exit`: its
// tests close their ioredis clients (`quit()`) and never `fastify.close()`, so the run ends on
// its own only if nothing of tollgate's keeps the event loop alive (a timer, an interval, a
// socket), as it ends against @fastify/rate-limit.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RedisServer } from "./redis-server.mjs";
import { tally } from "../js/peer-suite.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const FILE = "redis-rate-limit.test.js";
const suite = resolve(here, "../js/node_modules/@fastify/rate-limit/test", FILE);
const doc = resolve(here, "../../docs/fastify.md");

/** docs/fastify.md's rows for this file: `{ file, name, kind }`, `name` as "describe > test". */
function documented() {
  const rows = [];
  for (const line of readFileSync(doc, "utf8").split("\n")) {
    const m = /^\| `([^`]+)` \| (.+?) \| (fails|not applicable) \|/.exec(line);
    if (m && m[1] === FILE) rows.push({ file: FILE, name: m[2].replace(/\\\|/g, "|"), kind: m[3] });
  }
  return rows;
}

/**
 * `node --test` of the file, each test inside a `describe` as { name: "describe > test", ok }
 * (TAP); `exited`: whether the run ended by itself (not killed at the timeout).
 */
function results(cwd, port) {
  let out;
  let exited = true;
  try {
    // Without this runner's NODE_TEST_CONTEXT, which would send the results to it rather than as TAP.
    const env = { ...process.env, REDIS_PORT: String(port) };
    delete env.NODE_TEST_CONTEXT;
    out = execFileSync("node", ["--test", "--test-reporter=tap", `test/${FILE}`], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  } catch (e) {
    out = e.stdout ?? "";
    // Killed at the timeout (the runner may end its tests and exit 1 on the signal: the code says it).
    exited = e.code !== "ETIMEDOUT" && e.signal == null;
  }
  const tests = [];
  let group = null;
  for (const line of out.split("\n")) {
    const g = /^# Subtest: (.*)$/.exec(line);
    if (g) group = g[1];
    const m = /^ {4}(not ok|ok) \d+ - (.*?)( # SKIP.*)?$/.exec(line);
    if (m) tests.push({ name: `${group} > ${m[2].replace(/\\#/g, "#")}`, ok: m[1] === "ok", skipped: m[3] !== undefined });
  }
  return { tests, exited };
}

let server;
let project;
before(async () => {
  server = await RedisServer.start();
  project = mkdtempSync(join(tmpdir(), "tollgate-fastify-redis-"));
  mkdirSync(join(project, "node_modules"));
  mkdirSync(join(project, "test"));
  // The packed package and ioredis as tests/redis has them; Fastify as tests/js pins it.
  for (const [name, from] of [["tollgate", "node_modules/tollgate"], ["ioredis", "node_modules/ioredis"], ["fastify", "../js/node_modules/fastify"]]) {
    symlinkSync(resolve(here, from), join(project, "node_modules", name), "dir");
  }
  writeFileSync(join(project, "test/package.json"), JSON.stringify({ type: "commonjs" }));
  const text = readFileSync(suite, "utf8")
    .replace(/require\('(\.\.\/)+index'\)/g, "require('tollgate/fastify')")
    .replace(/\{ host: REDIS_HOST \}/g, "{ host: REDIS_HOST, port: Number(process.env.REDIS_PORT) }");
  writeFileSync(join(project, "test", FILE), text);
});
after(() => {
  server?.stop();
  if (project) rmSync(project, { recursive: true, force: true });
});

test(`@fastify/rate-limit 11.2.0's ${FILE} on a real redis-server: every test docs/fastify.md does not list passes, and its count`, () => {
  const text = readFileSync(join(project, "test", FILE), "utf8");
  assert.equal((text.match(/port: Number\(process\.env\.REDIS_PORT\)/g) ?? []).length, (text.match(/new Redis\(/g) ?? []).length, "every client on this file's server");
  const rows = documented();
  const { tests, exited } = results(project, server.port);
  assert.equal(tests.length, 16, tests.map((t) => t.name).join(", "));
  const { passed, applicable, unexpected, fixed } = tally(tests.map((t) => ({ ...t, file: FILE })), rows);
  assert.deepEqual(unexpected, [], "tests that fail and docs/fastify.md does not list");
  // A test of the file that fails ends before its `redis.quit()`, and its client keeps the run
  // alive: so this is asserted once every test is known to pass.
  assert.ok(exited, "the file's run did not end on its own within 120 s: something keeps the event loop alive");
  assert.deepEqual(fixed, [], "tests docs/fastify.md lists as failing that pass: update the table");
  const counted = /\*\*(\d+) of (\d+)\*\* applicable Redis tests pass/.exec(readFileSync(doc, "utf8"));
  assert.deepEqual(counted?.slice(1).map(Number), [passed, applicable], "docs/fastify.md's Redis count");
});
