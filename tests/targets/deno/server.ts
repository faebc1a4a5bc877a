// Deno.serve with the rate limiter; the port is the first argument. Run with --allow-net only.
import { RateLimiter } from "tollgate";

const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1h" });

Deno.serve({ hostname: "127.0.0.1", port: Number(Deno.args[0]) }, () => {
  const d = limiter.limit("client");
  return new Response(d.allowed ? "ok\n" : "Too many requests\n", { status: d.allowed ? 200 : 429, headers: limiter.headers(d) });
});
