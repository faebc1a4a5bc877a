// How a state's bytes are written in Redis: as lowercase hex text. Redis and the script see
// an opaque string either way; text keeps both clients on their plain-string path (binary
// arguments and replies cost node-redis and ioredis far more per command than the bytes do;
// docs/redis.md), for values of a few dozen bytes.
import { RedisStateError } from "./redis-errors.js";

const HEX = /^(?:[0-9a-f]{2})*$/;

/**
 * Lua shared by both scripts: `held(v)` is what a compare-and-swap takes a key's value `v` for.
 * A peer's counter (the decimal integer @fastify/rate-limit, rate-limiter-flexible and
 * rate-limit-redis keep at a key: "0" or no leading zero) is fresh, so the first write replaces
 * it; nothing is written for a denial. No state's text is one: every state starts with its
 * format version, one byte below 16, so its text with "0" and another digit.
 */
export const HELD_LUA = `
local function held(v)
  if v == '0' or string.find(v, '^%-?[1-9]%d*$') then return '' end
  return v
end
local function expected(e)
  if string.byte(e, 1) == 126 then return string.sub(e, 2), true end
  return e, false
end
`;

/**
 * Lua above, `expected(e)`: an expected value as `toValue(bytes, true)` writes it, `~<hex>`,
 * is those bytes or an absent key (answers the bytes and `true`); any other, itself and
 * `false`. The writer marks bytes that decide like a fresh key at every hit it decided
 * (`StorePolicy.stateExpiresAt`, the core's `PolicyState::expires_at`): Redis may have dropped
 * them by their TTL since, and over an absent key the same hits decide the same, so the write
 * stands without another round trip. (Idle past its TTL, a key is otherwise a conflict every
 * time: with many processes, each batch's bytes expired before the next.)
 */
export const EXPIRED_MARK = "~";

/** The text of `bytes` (`""` for none: the script's "absent"); `orAbsent`: marked `~` (`expected` above). */
export function toValue(bytes, orAbsent = false) {
  if (bytes === null) return "";
  if (orAbsent) return EXPIRED_MARK + toValue(bytes);
  if (typeof Buffer === "function") return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
  let s = "";
  for (const b of bytes) s += (b < 16 ? "0" : "") + b.toString(16);
  return s;
}

/** The bytes of a value read from `key` (`null`: absent); text that is not hex is a `RedisStateError`. */
export function fromValue(key, value) {
  if (value === null || value === undefined) return null;
  const s = typeof value === "string" ? value : String(value);
  if (s.length === 0) return null;
  if (!HEX.test(s)) throw new RedisStateError("the value is not the hex text of a state");
  if (typeof Buffer === "function") return new Uint8Array(Buffer.from(s, "hex"));
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}
