// State survives a restart of the local runtime: Miniflare restarted on the same folder, and
// `wrangler dev` (the `make run` configuration, wrangler.toml) restarted on the same
// --persist-to folder, which also serves the playground at /.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import fs from "node:fs";
import { start, post, get, freshKey, tempDir, root, sleep, clearOfMinuteTurn } from "./harness.mjs";

test("Miniflare restart on the same folder keeps every key's state", async () => {
  const dir = tempDir();
  const key = freshKey();
  let s = await start({ persist: dir });
  await clearOfMinuteTurn(20_000); // the restart must not cross a minute: login is 5/m
  for (let i = 0; i < 3; i++) await post(s.url, "/v1/limit", { key, policy: "login" });
  await s.stop();
  s = await start({ persist: dir });
  try {
    const r = await post(s.url, "/v1/limit", { key, policy: "login" });
    assert.equal(r.body.remaining, 1);
  } finally {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

async function wranglerDev(port, persist) {
  const child = spawn(
    path.join(root, "node_modules/.bin/wrangler"),
    ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist, "--log-level", "warn", "--var", "PUBLIC:true"],
    {
      cwd: root,
      env: { ...process.env, SKIP_WORKER_BUILD: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  // Bounded, and a clear failure when it runs out, rather than requests to a server that
  // never came up (on a loaded machine wrangler dev can take long to start).
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).status === 200) break;
    } catch {}
    if (child.exitCode !== null) throw new Error(`wrangler dev exited: ${log}`);
    if (Date.now() > deadline) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      throw new Error(`wrangler dev did not answer /healthz within 120 s: ${log}`);
    }
    await sleep(200);
  }
  const stop = async () => {
    if (child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
      const t = Date.now();
      while (child.exitCode === null && Date.now() - t < 10_000) await sleep(100);
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
  };
  return { base, stop, log: () => log };
}

test("wrangler dev (wrangler.toml) restarted on the same --persist-to folder keeps state and leases", { timeout: 180_000 }, async () => {
  const persist = tempDir("tollgate-wrangler-");
  const port = await freePort();
  const key = freshKey("user");
  const holder = freshKey("holder");
  let w = await wranglerDev(port, persist);
  try {
    const page = await get(w.base, "/");
    assert.equal(page.status, 200);
    assert.match(page.text, /<html/i);
    await clearOfMinuteTurn(45_000); // login's 5/m must not see a minute turn across the restart
    for (let i = 0; i < 5; i++) assert.equal((await post(w.base, "/v1/limit", { key, policy: "login" })).body.allowed, true);
    // wrangler.toml's pool (POOLS.ingest, 20 x 25/s, the v2 migration's CapacityPool).
    const g = await post(w.base, "/v1/pools/ingest/leases", { holder, partitions: 4, ttlMs: 60000 });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.body.rate, 100);
  } finally {
    await w.stop();
  }
  w = await wranglerDev(port, persist);
  try {
    const r = await post(w.base, "/v1/limit", { key, policy: "login" });
    assert.equal(r.body.allowed, false, r.text);
    assert.equal(r.body.blockedBy, "per-minute");
    const st = await get(w.base, "/v1/pools/ingest");
    assert.equal(st.body.leases.find((l) => l.holder === holder)?.partitions.length, 4, st.text);
    const renewed = await post(w.base, `/v1/pools/ingest/leases/${encodeURIComponent(holder)}/renew`, { ttlMs: 1000 });
    assert.equal(renewed.body.rate, 100, renewed.text);
  } finally {
    await w.stop();
    fs.rmSync(persist, { recursive: true, force: true });
  }
});
