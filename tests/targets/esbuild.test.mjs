// esbuild Node bundles of a node:http server with the rate limiter, ESM and CommonJS, each run
// by node from a folder with no node_modules: 200, 200, 200, then 429 with RateLimit headers.
import test from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { assertLimited, freePort, here, serve } from "./harness.mjs";

for (const format of ["esm", "cjs"]) {
  test(`esbuild --platform=node --format=${format}`, async () => {
    const out = mkdtempSync(join(tmpdir(), `tollgate-esbuild-${format}-`));
    try {
      const file = join(out, format === "esm" ? "server.mjs" : "server.cjs");
      await build({ entryPoints: [join(here, "esbuild/server.js")], bundle: true, platform: "node", format, outfile: file, logLevel: "error" });
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
