// Nothing test-only in production: the bundle `wrangler deploy --dry-run` makes (offline, no
// account; the production build, which make test-worker made current, reused as any deploy
// would after a build) holds neither the fault header nor the test routes, while the test
// build, searched the same way, holds both (so the search can fail).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { root, tempDir, TEST_BUILD } from "./harness.mjs";

const TEST_ONLY = ["Tollgate-Test-Fault", "/v1/test/"];

/** Which of TEST_ONLY the .js and .wasm files of `dir` hold. */
function testOnlyIn(dir) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".js") || f.endsWith(".wasm"));
  assert.ok(files.some((f) => f.endsWith(".wasm")), `${dir}: ${files.join(", ")}`);
  const bytes = Buffer.concat(files.map((f) => fs.readFileSync(path.join(dir, f))));
  return TEST_ONLY.filter((s) => bytes.includes(Buffer.from(s)));
}

test("a production `wrangler deploy --dry-run` bundle holds no test hook; the test build does", () => {
  const out = tempDir("tollgate-production-");
  try {
    const r = spawnSync(path.join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", out], {
      cwd: root,
      env: {
        ...process.env,
        SKIP_WORKER_BUILD: "1",
        SKIP_WWW_BUILD: "1",
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        WRANGLER_SEND_METRICS: "false",
        CI: "1",
      },
      encoding: "utf8",
      timeout: 300_000,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(testOnlyIn(out), [], "the production bundle");
    assert.deepEqual(testOnlyIn(path.dirname(TEST_BUILD)), TEST_ONLY, "the test build");
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
