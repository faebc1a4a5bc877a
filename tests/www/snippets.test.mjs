// Copy as code means the limit on screen: each snippet the playground writes (www/app/snippets.js)
// is run and decides a trace exactly as the page's own RateLimiter options do:
// - the npm snippet, as a module in a project with the packed package installed (npm pack);
// - the Worker policy, through the Worker's own configuration check (worker/examples/
//   check_config.rs) and, parsed as TOML, its limit through the package's (the core's) parser;
// - the Rust snippet, through tests/playground_snippets.rs, which this test keeps current and
//   `make test-core` compiles and runs against the core crate.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseToml } from "smol-toml";
import { ROOT } from "./browser.mjs";
import { install } from "../js/packed.mjs";
import { DEFAULTS, limiterOptions, ALGORITHMS } from "../../www/app/params.js";
import { npmSnippet, tomlSnippet, headerOptions } from "../../www/app/snippets.js";
import { CASES, TRACE, renderRustCases, RUST_FILE } from "./snippet-cases.mjs";

const { RateLimiter } = await import(join(ROOT, "pkg/dist/lib/index.js"));
const START = Date.UTC(2026, 0, 1);

/** Allowed (1) or denied (0) per hit of the shared trace. */
function decide(rl) {
  return TRACE.map(([t, k]) => (rl.limit(`key-${k}`, { now: START + t }).allowed ? "1" : "0")).join("");
}

let pkg;
before(() => {
  pkg = install();
});
after(() => pkg?.remove());

test("every case is a setting the page accepts, and the trace has both outcomes for each", () => {
  assert.equal(new Set(CASES.map(([id]) => id)).size, ALGORITHMS.length, "every algorithm has a case");
  for (const [id, s] of CASES) {
    const got = decide(new RateLimiter(limiterOptions(id, s)));
    assert.ok(got.includes("0") && got.includes("1"), `${id} ${JSON.stringify(s)}: ${got}`);
  }
});

test("the npm snippet, run against the packed package, decides as the page does and writes the chosen headers", async () => {
  for (const [n, [id, s]] of CASES.entries()) {
    const file = join(pkg.project, `snippet-${n}.mjs`);
    // The snippet as shown, with a key defined before it and its bindings exported after it.
    writeFileSync(file, `const key = "k";\n${npmSnippet(id, s)}\nexport { limiter, decision, headers };\n`);
    const m = await import(pathToFileURL(file).href);
    assert.equal(m.limiter.constructor.name, "RateLimiter");
    const page = new RateLimiter(limiterOptions(id, s));
    // The snippet's limiter has decided one hit of "k" already: the trace uses other keys.
    assert.equal(decide(m.limiter), decide(page), `${id} ${JSON.stringify(s)}`);
    const want = page.headers(m.decision, { ...headerOptions(s), now: Date.now() });
    assert.deepEqual(Object.keys(m.headers).sort(), Object.keys(want).sort(), `${id}: the headers of the chosen mode`);
  }
});

test("the Worker policy passes the Worker's configuration check and its limit decides as the page does", () => {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-toml-"));
  const check = (file) => execFileSync("cargo", ["run", "--quiet", "-p", "tollgate-worker", "--example", "check_config", "--", file], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  try {
    // Every case's snippet as one wrangler.toml (one policy each): one run of the check.
    const snippets = CASES.map(([id, s], n) => tomlSnippet(id, s, `case${n}`));
    const file = join(dir, "wrangler.toml");
    writeFileSync(file, snippets.join("\n"));
    check(file);
    const policies = parseToml(readFileSync(file, "utf8")).vars.POLICIES;
    for (const [n, [id, s]] of CASES.entries()) {
      const policy = policies[`case${n}`];
      assert.equal(policy.limits.length, 1);
      const { name, ...limit } = policy.limits[0];
      assert.equal(name, "default");
      assert.equal(decide(new RateLimiter(limit)), decide(new RateLimiter(limiterOptions(id, s))), `${id}: ${snippets[n]}`);
      assert.deepEqual({ standardHeaders: policy.standardHeaders, legacyHeaders: policy.legacyHeaders }, headerOptions(s));
    }
    // The check refuses a policy the core refuses, so passing it above means something.
    writeFileSync(file, tomlSnippet("gcra", { ...DEFAULTS, limit: 5 }).replace("limit = 5", "limit = 0"));
    assert.throws(() => check(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("tests/playground_snippets.rs holds every case's Rust snippet and the page's decisions (else: node tests/www/snippet-cases.mjs --write)", () => {
  const expected = renderRustCases((id, s) => decide(new RateLimiter(limiterOptions(id, s))));
  assert.equal(readFileSync(RUST_FILE, "utf8"), expected);
});
