// The configuration is checked before it can serve: the Worker's build (scripts/build.sh, the
// [build] command of `wrangler dev` and `wrangler deploy`, and the first step of `make run`)
// reads wrangler.toml's vars with the Worker's own parser and fails on a bad POLICIES, POOLS,
// PROXY or API_PREFIX, or TEST_MODE on (beside ORIGIN or API_TOKEN, or at all: wrangler builds
// the production build), naming the var, the field and the reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { root, tempDir } from "./harness.mjs";

const TOML = fs.readFileSync(path.join(root, "wrangler.toml"), "utf8");
const BUILD = path.join(root, "scripts/build.sh");
// The check only: the Worker and the playground are built by make test-worker already.
const env = { ...process.env, SKIP_WORKER_BUILD: "1", SKIP_WWW_BUILD: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "1" };

/** wrangler.toml with `edit` applied, in a fresh folder; its path. */
function config(edit) {
  const dir = tempDir("tollgate-config-");
  const text = edit(TOML);
  assert.notEqual(text, TOML, "the edit applies");
  const file = path.join(dir, "wrangler.toml");
  fs.writeFileSync(file, text);
  return file;
}

function build(file) {
  return spawnSync("sh", [BUILD], { cwd: root, env: { ...env, TOLLGATE_WRANGLER_CONFIG: file }, encoding: "utf8", timeout: 300_000 });
}

const SEARCH = `limits = [{ name = "per-minute", algorithm = "sliding-window", quota = "600/m" }]`;
const bad = [
  ["a limit option its algorithm does not take", (t) => t.replace(SEARCH, SEARCH.replace(` }]`, `, burst = 5 }]`)), /POLICIES: policy "search": limits\[0\]\.burst: .*burst/],
  ["an unknown algorithm", (t) => t.replace(`algorithm = "token-bucket"`, `algorithm = "token-bukket"`), /POLICIES: policy "api": limits\[0\]\.algorithm.*token-bukket/],
  ["a bad duration", (t) => t.replace(`limit = 100, window = "1s"`, `limit = 100, window = "soon"`), /POLICIES: policy "api": limits\[0\]\.window.*soon/],
  ["a policy option of the wrong kind", (t) => t.replace(`failure = "closed"`, `failure = "sometimes"`), /POLICIES: policy "login": failure/],
  ["a pool of no partitions", (t) => t.replace(`partitions = 20`, `partitions = 0`), /POOLS: pool "ingest": .*partitions/],
  ["a proxy subnet out of range", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = "https://api.example.com"`).replace(`ipv6Subnet = 56`, `ipv6Subnet = 200`), /PROXY\.ipv6Subnet/],
  ["TEST_MODE beside ORIGIN", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = "https://api.example.com"\nTEST_MODE = "on"`), /TEST_MODE is on beside ORIGIN/],
  ["TEST_MODE beside API_TOKEN", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = ""\nTEST_MODE = "on"\nAPI_TOKEN = "t0ken"`), /TEST_MODE is on beside API_TOKEN/],
  ["TEST_MODE in a production build", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = ""\nTEST_MODE = "on"`), /TEST_MODE is on, but this is a production build/],
  ["an API prefix that is not a path", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = ""\nAPI_PREFIX = "api/"`), /API_PREFIX must be a path/],
  ["an origin secret without an origin", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = ""\nORIGIN_SECRET = "s3cret"`), /ORIGIN_SECRET is set but ORIGIN is not/],
  ["a proxy naming no policy", (t) => t.replace(`ORIGIN = ""`, `ORIGIN = "https://api.example.com"`).replace(`policy = "api", ipv6Subnet`, `policy = "nope", ipv6Subnet`), /PROXY names the unknown policy "nope"/],
];

for (const [what, edit, reason] of bad) {
  test(`the build fails on ${what}, naming the field`, () => {
    const r = build(config(edit));
    assert.notEqual(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /invalid configuration in .*wrangler\.toml: \[vars\]: /);
    assert.match(r.stderr, reason);
  });
}

test("the checked-in wrangler.toml passes, and an environment's own vars are checked too", () => {
  const ok = build(path.join(root, "wrangler.toml"));
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stderr, /configuration checked .*\[vars\]: 3 policies, 1 pools/);
  const staging = config((t) => `${t}\n[env.staging.vars]\nPOLICIES = { x = { limits = [] } }\n`);
  const r = build(staging);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /\[env\.staging\.vars\]: POLICIES: policy "x": limits must hold 1 to 16 limits, got 0/);
});

test("`wrangler deploy --dry-run` of a bad configuration fails in its build step and ships nothing", () => {
  // A copy of wrangler.toml in another folder, its paths made absolute: wrangler runs the
  // [build] command there, and build.sh checks the wrangler.toml of the folder it runs in.
  const file = config((t) =>
    t
      .replace(`main = "build/index.js"`, `main = "${path.join(root, "build/index.js")}"`)
      .replace(`command = "sh scripts/build.sh"`, `command = "sh ${BUILD}"`)
      .replace(`directory = "../www"`, `directory = "${path.join(root, "../www")}"`)
      .replace(`watch_dir = ["src", "../src"]`, `watch_dir = ["${path.join(root, "src")}"]`)
      .replace(SEARCH, SEARCH.replace(`quota = "600/m"`, `quota = "600/fortnight"`)),
  );
  const out = tempDir("tollgate-deploy-out-");
  const r = spawnSync(path.join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", out, "--config", file], {
    cwd: path.dirname(file),
    env,
    encoding: "utf8",
    timeout: 300_000,
  });
  assert.notEqual(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout + r.stderr, /POLICIES: policy "search": limits\[0\]/);
  assert.deepEqual(fs.readdirSync(out), [], "nothing was bundled");
});
