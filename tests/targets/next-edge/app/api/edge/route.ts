// A Route Handler on the Edge runtime.
import { RateLimiter } from "tollgate";

export const runtime = "edge";

const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1h" });

export function GET() {
  const d = limiter.limit("client");
  return new Response(d.allowed ? "ok\n" : "Too many requests\n", { status: d.allowed ? 200 : 429, headers: limiter.headers(d) });
}
