// Deno (the npm package `deno`): Deno.serve with the rate limiter, `deno run` with only
// `--allow-net`, importing "tollgate" from node_modules as a Deno project with a package.json
// does. It answers 200, 200, 200, then 429 with RateLimit headers.
import test from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appCopy, assertLimited, bin, freePort, serve } from "./harness.mjs";

test("deno run --allow-net", async () => {
  const dir = appCopy("deno");
  const denoDir = mkdtempSync(join(tmpdir(), "tollgate-deno-"));
  const port = await freePort();
  const server = await serve(bin("deno"), ["run", "--allow-net", "--no-prompt", "server.ts", String(port)], {
    port,
    cwd: dir,
    env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    startMs: 60_000,
    lifetimeMs: 120_000,
  });
  try {
    await assertLimited(server.base + "/", "deno run");
  } finally {
    await server.stop();
    rmSync(denoDir, { recursive: true, force: true });
  }
});
