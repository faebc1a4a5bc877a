// Bun (the npm package `bun`): Bun.serve with the rate limiter run by `bun run`, bundled by
// `bun build --target bun` and run from the bundle alone, and compiled into one executable by
// `bun build --compile`, run from another folder. Each answers 200, 200, 200, then 429 with
// RateLimit headers. No copy step: the bundle and the executable are all the user ships.
import test from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appCopy, assertLimited, bin, freePort, run, serve } from "./harness.mjs";

const env = { BUN_INSTALL_CACHE_DIR: join(tmpdir(), "tollgate-bun-cache"), DO_NOT_TRACK: "1" };

async function check(cmd, args, what, cwd) {
  const port = await freePort();
  const server = await serve(cmd, [...args, String(port)], { port, cwd, env, startMs: 60_000, lifetimeMs: 120_000 });
  try {
    await assertLimited(server.base + "/", what);
  } finally {
    await server.stop();
  }
}

test("bun run", async () => {
  const dir = appCopy("bun", "bun-run");
  await check(bin("bun"), ["run", "server.ts"], "bun run", dir);
});

test("bun build --target bun, the bundle run alone", async () => {
  const dir = appCopy("bun", "bun-build");
  await run(bin("bun"), ["build", "server.ts", "--target", "bun", "--outdir", "out"], { cwd: dir, env });
  // The bundle's folder moved where no node_modules is: it must hold all it needs.
  const shipped = mkdtempSync(join(tmpdir(), "tollgate-bun-bundle-"));
  try {
    await run("cp", ["-r", join(dir, "out"), shipped]);
    await check(bin("bun"), [join(shipped, "out/server.js")], "bun build", shipped);
  } finally {
    rmSync(shipped, { recursive: true, force: true });
  }
});

test("bun build --compile, the executable run alone", async () => {
  const dir = appCopy("bun", "bun-compile");
  await run(bin("bun"), ["build", "server.ts", "--compile", "--outfile", "server"], { cwd: dir, env });
  const shipped = mkdtempSync(join(tmpdir(), "tollgate-bun-compiled-"));
  try {
    await run("cp", [join(dir, "server"), shipped]);
    await check(join(shipped, "server"), [], "bun build --compile", shipped);
  } finally {
    rmSync(shipped, { recursive: true, force: true });
  }
});
