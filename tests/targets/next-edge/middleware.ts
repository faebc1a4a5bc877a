// Next.js middleware, on the Edge runtime (middleware.ts's default, which the test checks in
// the build's middleware manifest): every request under /behind-middleware is decided here.
import { NextResponse } from "next/server";
import { RateLimiter } from "tollgate";

const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1h" });

export function middleware() {
  const d = limiter.limit("client");
  if (!d.allowed) return new Response("Too many requests\n", { status: 429, headers: limiter.headers(d) });
  return NextResponse.next({ headers: limiter.headers(d) });
}

export const config = { matcher: "/behind-middleware" };
