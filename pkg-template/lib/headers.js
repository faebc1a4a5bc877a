// The RateLimit headers (draft-ietf-httpapi-ratelimit-headers-10) and the legacy X-RateLimit-*
// set for a decision, formatted exactly as the core's `headers.rs` does.
import { bindingKey } from "./decision.js";

const secsCeil = (ms) => Math.ceil(ms / 1000);

function sfString(s) {
  let out = '"';
  for (const c of s) {
    if (c === '"' || c === "\\") out += "\\" + c;
    else if (c >= " " && c <= "~") out += c;
    else out += "?";
  }
  return out + '"';
}

/**
 * @param decision a decision of this limiter
 * @param advertised per limit name: [quota, windowMs]
 * @param now epoch ms the decision was made at
 */
export function headersFor(decision, advertised, now) {
  const key = bindingKey.get(decision);
  const own = key === undefined ? decision.limits : decision.limits.filter((l) => l.key === key);
  const policy = [];
  const remaining = [];
  for (const l of own) {
    const [q, w] = advertised.get(l.name);
    policy.push(`${sfString(l.name)};q=${q};w=${secsCeil(w)}`);
    remaining.push(`${sfString(l.name)};r=${l.remaining};t=${secsCeil(Math.max(0, l.resetAt - now))}`);
  }
  const h = {
    "RateLimit-Policy": policy.join(", "),
    RateLimit: remaining.join(", "),
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(secsCeil(decision.resetAt)),
  };
  if (!decision.allowed) h["Retry-After"] = String(Math.max(1, secsCeil(decision.retryAfter)));
  return h;
}
