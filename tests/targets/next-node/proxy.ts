// Next.js 16's proxy (Node.js runtime): every request under /behind-proxy is decided here.
import { NextResponse } from "next/server";
import { RateLimiter } from "tollgate";

const limiter = new RateLimiter({ algorithm: "sliding-log", limit: 3, window: "1h" });

export function proxy() {
  const d = limiter.limit("client");
  if (!d.allowed) return new Response("Too many requests\n", { status: 429, headers: limiter.headers(d) });
  return NextResponse.next({ headers: limiter.headers(d) });
}

export const config = { matcher: "/behind-proxy" };
