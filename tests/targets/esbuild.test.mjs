// esbuild Node bundles of a node:http server with the rate limiter, ESM and CommonJS, built the
// package README's way (`--packages=external`: esbuild moves no asset a module refers to, so
// Node loads tollgate from node_modules), each run by node: 200, 200, 200, then 429 with
// RateLimit headers.
import test from "node:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { assertLimited, freePort, here, serve } from "./harness.mjs";

for (const format of ["esm", "cjs"]) {
  test(`esbuild --platform=node --format=${format}`, async () => {
    // Where the app's node_modules is reachable, as a bundle with external packages runs.
    const out = join(here, ".build", `esbuild-${format}`);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    try {
      const file = join(out, format === "esm" ? "server.mjs" : "server.cjs");
      await build({ entryPoints: [join(here, "esbuild/server.js")], bundle: true, platform: "node", packages: "external", format, outfile: file, logLevel: "error" });
      const port = await freePort();
      const server = await serve(process.execPath, [file, String(port)], { port, cwd: out, startMs: 30_000, lifetimeMs: 60_000 });
      try {
        await assertLimited(server.base + "/", `esbuild ${format}`);
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
}
