// @fastify/rate-limit 11.2.0's own test suite, run against `tollgate/fastify` of the packed
// package: its test files (from the pinned devDependency, node_modules/@fastify/rate-limit/test)
// copied into a project with the tarball installed, each `require('../index')` made
// `require('tollgate/fastify')`, every assertion kept. What passes, what fails and why is
// docs/fastify.md's table; this test holds the package to it: every test the table does not
// name passes, and at least 90% of the applicable ones pass.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { install, here } from "./packed.mjs";
import { execFileSync } from "node:child_process";
import { tally } from "./peer-suite.mjs";

const suite = resolve(here, "node_modules/@fastify/rate-limit/test");
/** Files that test through Redis: `make test-redis` runs them (tests/redis/fastify-suite.test.mjs). */
const NOT_RUN = ["redis-rate-limit.test.js"];

/** docs/fastify.md's tests that do not pass, by file and name. */
function documentedFailures() {
  const page = readFileSync(resolve(here, "../../docs/fastify.md"), "utf8");
  const rows = [];
  for (const line of page.split("\n")) {
    const m = /^\| `([^`]+)` \| (.+?) \| (fails|not applicable) \|/.exec(line);
    if (m) rows.push({ file: m[1], name: m[2].replace(/\\\|/g, "|"), kind: m[3] });
  }
  return rows;
}

/** The test files of the suite, relative to its directory. */
function testFiles(dir, prefix = "") {
  return readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    if (statSync(path).isDirectory()) return testFiles(path, `${prefix}${f}/`);
    return f.endsWith(".test.js") ? [`${prefix}${f}`] : [];
  });
}

/** `node --test` of `file` in `cwd`, its top-level tests as { name, ok, skipped } (TAP). */
function results(file, cwd) {
  let out;
  try {
    // Without this runner's NODE_TEST_CONTEXT, which would send the results to it rather than as TAP.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    out = execFileSync("node", ["--test", "--test-reporter=tap", file], { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  } catch (e) {
    out = e.stdout ?? "";
  }
  const tests = [];
  for (const line of out.split("\n")) {
    const m = /^(not ok|ok) \d+ - (.*?)( # SKIP.*)?$/.exec(line);
    if (m) tests.push({ name: m[2].replace(/\\#/g, "#"), ok: m[1] === "ok", skipped: m[3] !== undefined });
  }
  return tests;
}

let installed;
let project;
before(() => {
  installed = install();
  project = installed.project;
  // Fastify itself, as the suite requires it: the pinned devDependency (with its own dependencies).
  symlinkSync(resolve(here, "node_modules/fastify"), join(project, "node_modules/fastify"), "dir");
  mkdirSync(join(project, "test"));
  cpSync(suite, join(project, "test"), { recursive: true });
  writeFileSync(join(project, "test/package.json"), JSON.stringify({ type: "commonjs" }));
  for (const f of testFiles(join(project, "test"))) {
    const path = join(project, "test", f);
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.replace(/require\('(\.\.\/)+index'\)/g, "require('tollgate/fastify')"));
  }
});
after(() => installed?.remove());

test("@fastify/rate-limit 11.2.0's own suite: at least 90% of its applicable tests pass, and every one docs/fastify.md does not list", () => {
  const documented = documentedFailures();
  const files = testFiles(join(project, "test")).filter((f) => !NOT_RUN.includes(f)).sort();
  assert.ok(files.length >= 10, files.join(", "));
  const tests = [];
  for (const file of files) {
    const ran = results(`test/${file}`, project);
    assert.ok(ran.length > 0, `${file}: no test ran`);
    tests.push(...ran.map((t) => ({ ...t, file })));
  }
  const { passed, applicable, unexpected, fixed } = tally(tests, documented);
  assert.deepEqual(unexpected, [], "tests that fail and docs/fastify.md does not list");
  assert.deepEqual(fixed, [], "tests docs/fastify.md lists as failing that pass: update the table");
  const counted = /\*\*(\d+) of (\d+)\*\* applicable tests pass/.exec(readFileSync(resolve(here, "../../docs/fastify.md"), "utf8"));
  assert.deepEqual(counted?.slice(1).map(Number), [passed, applicable], "docs/fastify.md's count");
  assert.ok(passed / applicable >= 0.9, `${passed} of ${applicable}`);
});

test("the npm README's count of @fastify/rate-limit's suite is docs/fastify.md's, its Redis file included", () => {
  const page = readFileSync(resolve(here, "../../docs/fastify.md"), "utf8");
  const local = /\*\*(\d+) of (\d+)\*\* applicable tests pass/.exec(page)?.slice(1).map(Number);
  const redis = /\*\*(\d+) of (\d+)\*\* applicable Redis tests pass/.exec(page)?.slice(1).map(Number);
  assert.ok(local && redis, "docs/fastify.md's two counts");
  const readme = readFileSync(resolve(here, "../../pkg-template/README.md"), "utf8");
  const shown = /\*\*(\d+) of (\d+)\*\* of its tests pass/.exec(readme)?.slice(1).map(Number);
  assert.deepEqual(shown, [local[0] + redis[0], local[1] + redis[1]], "pkg-template/README.md's count");
});
