// The real Worker for the lease tests, in workerd (Miniflare, via worker/test/harness.mjs) on
// 127.0.0.1 with a free port, an API token and the pools the tests use: each test has its own
// pool of 500/s as 20 partitions of 25/s, so tests never share leases.
import { createRequire } from "node:module";
import { start, get, post } from "../../worker/test/harness.mjs";

/** Miniflare as the Worker's tests have it (worker/node_modules), for a user's own Worker. */
export const { Miniflare } = createRequire(new URL("../../worker/package.json", import.meta.url))("miniflare");
/** esbuild as the Worker's tests have it (worker/node_modules), to bundle a user's Worker as wrangler does. */
export const { build } = createRequire(new URL("../../worker/package.json", import.meta.url))("esbuild");

export const TOKEN = "lease-test-token";
export const CAPACITY = 500;
export const WINDOW_MS = 1000;
export const POOL = { partitions: 20, rate: "25/s", maxTtl: "1m" };
/** The pool `startWorker` asks about first, to load the Worker before the tests' requests. */
const WARM_UP = "warm-up";

export async function startWorker(names) {
  const POOLS = Object.fromEntries([...names, WARM_UP].map((n) => [n, POOL]));
  const s = await start({ bindings: { POOLS, API_TOKEN: TOKEN } });
  const auth = { authorization: `Bearer ${TOKEN}` };
  // The Worker loads its module and a pool's object on their first request: one request to a
  // pool no test uses first, so that a test's first grant is not answered seconds late on a
  // loaded machine (past the lease's usable end) while the local runtime starts.
  const warm = await get(s.url, `/v1/pools/${WARM_UP}`, { headers: auth });
  if (warm.status !== 200) throw new Error(`status ${WARM_UP}: ${warm.status} ${warm.text}`);
  return {
    url: s.url,
    stop: () => s.stop(),
    /** The pool's leases now: { free, leases: [{ holder, partitions, expiresAt, rate }] }. */
    async status(pool) {
      const r = await get(s.url, `/v1/pools/${pool}`, { headers: auth });
      if (r.status !== 200) throw new Error(`status ${pool}: ${r.status} ${r.text}`);
      return r.body;
    },
    /** A grant straight through the API (a holder that is not a LeasedPacer). */
    async grant(pool, holder, partitions, ttlMs) {
      const r = await post(s.url, `/v1/pools/${pool}/leases`, { holder, partitions, ttlMs }, auth);
      if (r.status !== 200) throw new Error(`grant ${pool}: ${r.status} ${r.text}`);
      return r.body;
    },
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 50 ms until it returns a truthy value, or fails after `ms`. */
export async function eventually(what, check, ms = 5000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}
