// Hono on Node (@hono/node-server) with tollgate/hono: 100 requests per 15 minutes per client
// address, draft-7 headers, c.get("rateLimit") in the route. The npm README shows this file;
// tests/js/hono.test.mjs runs it (`node node.mjs` serves it on PORT, default 3000).
import { Hono } from "hono";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { rateLimiter } from "tollgate/hono";
import { ipKey } from "tollgate";

export const app = new Hono();
app.use(
  rateLimiter({
    windowMs: 15 * 60 * 1000,
    limit: 100,
    standardHeaders: "draft-7",
    // On Node the address is the socket's (behind a proxy, read the header the proxy sets);
    // ipKey keys IPv6 clients by their /56.
    keyGenerator: (c) => ipKey(getConnInfo(c).remote.address),
  }),
);
app.get("/", (c) => c.json({ remaining: c.get("rateLimit").remaining }));

if (import.meta.url === `file://${process.argv[1]}`) serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) });
