// Next.js 16: the rate limiter in proxy.ts (Node.js runtime) and in a Node Route Handler
// (next-node/), and in middleware.ts on the Edge runtime and in an Edge Route Handler
// (next-edge/; Next 16 refuses an app holding both proxy.ts and middleware.ts). Each app is
// built by `next build` with Turbopack and with `--webpack`, then served by `next start`; and
// served by `next dev`. Every case answers 200, 200, 200, then 429 with RateLimit headers.
// No next.config: the package needs no `serverExternalPackages` or any other setting.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appCopy, assertLimited, bin, freePort, run, serve } from "./harness.mjs";

const APPS = [
  { app: "next-node", paths: ["/behind-proxy", "/api/node"], edge: [] },
  { app: "next-edge", paths: ["/behind-middleware", "/api/edge"], edge: ["/", "/api/edge/route"] },
];

/** What the build put on the Edge runtime: its middleware and functions (middleware-manifest.json). */
function edgeEntries(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, ".next/server/middleware-manifest.json"), "utf8"));
  return [...Object.keys(manifest.middleware), ...Object.keys(manifest.functions)].sort();
}
const env = { NEXT_TELEMETRY_DISABLED: "1" };

async function serveAndCheck(dir, args, paths, what) {
  const port = await freePort();
  const server = await serve(bin("next"), [...args, "--hostname", "127.0.0.1", "--port", String(port)], { port, cwd: dir, env });
  try {
    for (const path of paths) await assertLimited(server.base + path, `${what} ${path}`);
  } finally {
    await server.stop();
  }
}

for (const bundler of ["turbopack", "webpack"]) {
  for (const { app, paths, edge } of APPS) {
    test(`${app}: next build (${bundler}), then next start`, async () => {
      const dir = appCopy(app, `${app}-${bundler}`);
      await run(bin("next"), ["build", bundler === "webpack" ? "--webpack" : "--turbopack"], { cwd: dir, env });
      assert.deepEqual(edgeEntries(dir), edge);
      await serveAndCheck(dir, ["start"], paths, `${app} (${bundler}, next start)`);
    });
  }
}

for (const { app, paths } of APPS) {
  test(`${app}: next dev`, async () => {
    const dir = appCopy(app, `${app}-dev`);
    await serveAndCheck(dir, ["dev"], paths, `${app} (next dev)`);
  });
}
