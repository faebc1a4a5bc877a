// express-rate-limit 8.6.2's own test suite (tests/erl/suite: test/library of its v8.6.2 tag,
// vendored with its license), run by its own runner, jest with ts-jest (pinned in tests/erl
// with a lockfile), against `rateLimit` of the packed package: the files copied into a
// temporary folder of tests/erl where the tarball is installed, each import of
// '../../source/index.js' made 'tollgate', every assertion kept. Two changes of set-up, not of
// tests: ts-jest transpiles without type-checking (isolatedModules; the package's types are
// tests/js/middleware-types.test.mjs's), and the suite runs as CommonJS (`require("tollgate")`,
// the package's CommonJS entry), as jest runs without --experimental-vm-modules. Imports of
// express-rate-limit's internal modules (its header writers, MemoryStore, validations,
// ConsoleLogger) resolve to a module whose every export throws: tests of those internals are
// not applicable, and docs/express.md lists them with the reason. The test holds the package
// to that table: every test the table does not list passes, and the page's count is the run's.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { install, here } from "./packed.mjs";
import { tally } from "./peer-suite.mjs";

const erl = resolve(here, "../erl");
const doc = resolve(here, "../../docs/express.md");
/** Files of the suite that test only express-rate-limit's internals: not run (docs/express.md says why). */
const NOT_RUN = ["memory-store-test.ts", "validation-test.ts", "logger-test.ts", "types-test.ts"];

/** docs/express.md's rows of the suite: `{ file, name, kind }`, `name` as "describe > test". */
function documented() {
  const rows = [];
  for (const line of readFileSync(doc, "utf8").split("\n")) {
    const m = /^\| `([^`]+-test\.ts)` \| (.+?) \| (fails|not applicable) \|/.exec(line);
    if (m) rows.push({ file: m[1], name: m[2].replace(/\\\|/g, "|"), kind: m[3] });
  }
  return rows;
}

let installed;
let run;
before(() => {
  assert.ok(existsSync(join(erl, "node_modules/jest")), "tests/erl's packages: scripts/setup.sh npm");
  installed = install();
  run = mkdtempSync(join(erl, "run-"));
  mkdirSync(join(run, "node_modules"));
  symlinkSync(join(installed.project, "node_modules/tollgate"), join(run, "node_modules/tollgate"), "dir");
  cpSync(join(erl, "suite"), join(run, "library"), { recursive: true });
  for (const f of readdirSync(join(run, "library"))) {
    if (!f.endsWith(".ts")) continue;
    const path = join(run, "library", f);
    writeFileSync(path, readFileSync(path, "utf8").replace(/'\.\.\/\.\.\/source\/index(\.js)?'/g, "'tollgate'"));
  }
  // Every export of express-rate-limit's internal modules throws when used.
  writeFileSync(
    join(run, "internal.cjs"),
    "module.exports = new Proxy({}, { get(_, name) { if (name === '__esModule') return false; " +
      "throw new Error(`express-rate-limit's internal ${String(name)} is not part of tollgate's API`); } });\n",
  );
  writeFileSync(join(run, "package.json"), JSON.stringify({ private: true }));
  writeFileSync(
    join(run, "jest.config.json"),
    JSON.stringify({
      testTimeout: 30000,
      testMatch: ["<rootDir>/library/**/*-test.ts"],
      testPathIgnorePatterns: NOT_RUN.map((f) => `/library/${f.replace(".", "\\.")}$`),
      moduleFileExtensions: ["js", "json", "ts"],
      moduleNameMapper: { "^\\.\\./\\.\\./source/.*$": "<rootDir>/internal.cjs", "^(\\.{1,2}/.*)\\.js$": "$1" },
      transform: {
        "^.+\\.ts$": ["ts-jest", { tsconfig: { module: "commonjs", target: "es2022", esModuleInterop: true, isolatedModules: true, sourceMap: false } }],
      },
    }),
  );
});
after(() => {
  if (run) rmSync(run, { recursive: true, force: true });
  installed?.remove();
});

/** jest's run of the suite in `run`: each test as { file, name: "describe > test", ok }. */
function results() {
  const out = join(run, "results.json");
  try {
    // Bounded: the suite takes about 10 s alone.
    execFileSync(process.execPath, [join(erl, "node_modules/jest/bin/jest.js"), "--ci", "--maxWorkers=2", "--json", `--outputFile=${out}`], {
      cwd: run,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 300_000,
    });
  } catch (e) {
    // jest exits 1 when a test fails; the JSON says which.
    if (!existsSync(out)) throw new Error(`jest did not report: ${e.stderr ?? e}`);
  }
  const report = JSON.parse(readFileSync(out, "utf8"));
  const tests = [];
  for (const file of report.testResults) {
    const name = file.name.slice(join(run, "library").length + 1);
    assert.ok(file.assertionResults.length > 0, `${name}: no test ran (${file.message.slice(0, 2000)})`);
    for (const t of file.assertionResults) {
      tests.push({ file: name, name: [...t.ancestorTitles, t.title].join(" > "), ok: t.status === "passed", skipped: t.status === "pending" || t.status === "skipped", message: t.failureMessages.join("\n").slice(0, 600) });
    }
  }
  return tests;
}

test("express-rate-limit 8.6.2's own suite under jest: every applicable test passes, as docs/express.md and the npm README count them", () => {
  const rows = documented();
  const tests = results();
  const { passed, applicable, unexpected: failing, fixed } = tally(tests, rows);
  const unexpected = failing.map((n) => `${n}\n${tests.find((t) => `${t.file}: ${t.name}` === n).message}`);
  const stale = rows.filter((d) => !tests.some((t) => t.file === d.file && t.name === d.name)).map((d) => `${d.file}: ${d.name}`);
  assert.deepEqual(unexpected, [], "tests that fail and docs/express.md does not list");
  assert.deepEqual(fixed, [], "tests docs/express.md lists as failing that pass: update the table");
  assert.deepEqual(stale, [], "rows of docs/express.md that name no test of the suite");
  const page = /\*\*(\d+) of (\d+)\*\* applicable tests of express-rate-limit 8\.6\.2's suite pass/.exec(readFileSync(doc, "utf8"));
  assert.deepEqual(page?.slice(1).map(Number), [passed, applicable], "docs/express.md's count");
  const readme = /express-rate-limit 8\.6\.2's own test suite: \*\*(\d+) of (\d+)\*\*/.exec(readFileSync(resolve(here, "../../pkg-template/README.md"), "utf8"));
  assert.deepEqual(readme?.slice(1).map(Number), [passed, applicable], "pkg-template/README.md's count");
});
