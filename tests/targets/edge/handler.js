// A fetch handler for the Edge runtime (Vercel Edge Functions, Next.js Edge): the rate limiter,
// bundled with the `edge-light` condition.
import { RateLimiter } from "tollgate";

const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1h" });

addEventListener("fetch", (event) => {
  const d = limiter.limit("client");
  event.respondWith(new Response(d.allowed ? "ok\n" : "Too many requests\n", { status: d.allowed ? 200 : 429, headers: limiter.headers(d) }));
});
