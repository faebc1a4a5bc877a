// The default key of the HTTP middleware: the client's IP address, with IPv6 addresses cut to
// their network prefix. One IPv6 user commonly holds a whole /64 (often a /56 or /48) and can
// pick a new address from it for every request; keyed by the full address, such a user would
// never be limited. IPv4 addresses are kept whole. Written without `node:net`, so that the
// package's browser and workerd builds, which carry this module, import nothing from Node.
import { fail } from "./options.js";

/** The IPv4 address `s` as four numbers, or null. */
export function ipv4(s) {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^(0|[1-9][0-9]{0,2})$/.test(p) ? Number(p) : 256));
  return bytes.every((b) => b < 256) ? bytes : null;
}

/** The IPv6 address `s` (zone already removed) as eight 16-bit numbers, or null. */
export function ipv6(s) {
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  // A trailing dotted IPv4 part counts as two groups (`::ffff:192.0.2.1`, `64:ff9b::1.2.3.4`).
  const last = halves.length === 2 ? tail : head;
  if (last.length > 0 && last[last.length - 1].includes(".")) {
    const v4 = ipv4(last.pop());
    if (v4 === null) return null;
    last.push(((v4[0] << 8) | v4[1]).toString(16), ((v4[2] << 8) | v4[3]).toString(16));
  }
  const given = head.length + tail.length;
  if (halves.length === 2 ? given > 7 : given !== 8) return null;
  const all = [...head, ...Array(8 - given).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}

/** Throws unless `subnet` is an IPv6 prefix length (1 to 128) or false (whole addresses). */
export function checkSubnet(subnet) {
  if (subnet !== false && !(Number.isInteger(subnet) && subnet >= 1 && subnet <= 128)) {
    // A RangeError whatever the value, as before the codes.
    throw fail("ipv6Subnet", subnet, "a whole number from 1 to 128, or false", typeof subnet === "number" ? "out_of_range" : "invalid_type", RangeError);
  }
}

/**
 * The rate-limit key of a client address: an IPv4 address as it is (an IPv4-mapped IPv6
 * address, `::ffff:192.0.2.1`, as its IPv4 address), an IPv6 address as its `/subnet` prefix
 * (`2001:db8:1234:5600::/56` for every address of that /56), or the whole IPv6 address with
 * `subnet` false or 128. Throws a TypeError for anything that is not an IP address.
 */
export function ipKey(address, subnet = 56) {
  if (typeof address !== "string") throw new TypeError(`address must be a string, got ${typeof address}`);
  checkSubnet(subnet);
  const v4 = ipv4(address);
  if (v4 !== null) return v4.join(".");
  const groups = ipv6(address.replace(/%.*$/, ""));
  if (groups === null) throw new TypeError(`not an IP address: ${JSON.stringify(address)}`);
  if (isMapped4(groups)) return lastFourBytes(groups);
  const bits = subnet === false ? 128 : subnet;
  return `${canonical(masked(groups, bits))}${bits === 128 ? "" : `/${bits}`}`;
}

/** Whether the address is IPv4-mapped (`::ffff:192.0.2.1`, however it is written). */
const isMapped4 = (groups) => groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;

/** The last 32 bits of the address as IPv4 text. */
const lastFourBytes = (groups) => [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(".");

/** The groups with every bit after the first `bits` cleared. */
function masked(groups, bits) {
  return groups.map((g, i) => {
    const keep = Math.min(16, Math.max(0, bits - 16 * i));
    return keep === 0 ? 0 : g & (0xffff << (16 - keep)) & 0xffff;
  });
}

/** RFC 5952 text of eight groups: lowercase, no leading zeros, the longest run (2+) of zeros as `::`. */
function canonical(groups) {
  let best = [-1, 0];
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best[1] && j - i >= 2) best = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best[0] < 0) return hex.join(":");
  return `${hex.slice(0, best[0]).join(":")}::${hex.slice(best[0] + best[1]).join(":")}`;
}

/**
 * express-rate-limit's `ipKeyGenerator(ip, ipv6Subnet = 56)`, with its results, for custom key
 * generators that fall back to the client address: an IPv4 address as it is; an IPv6 address
 * carrying an IPv4 one (mapped, `::ffff:1.2.3.4` however written, or the deprecated
 * IPv4-compatible notation `::1.2.3.4`) as that IPv4 address; any other IPv6 address as its
 * network in CIDR form (`2001:db8:1234:5600::/56`, `/128` included), or unchanged with
 * `ipv6Subnet` false; any other string (a unix socket's, a misconfigured proxy's
 * "1.2.3.4:5678") as it is.
 */
export function ipKeyGenerator(ip, ipv6Subnet = 56) {
  if (typeof ip !== "string") throw new TypeError(`ip must be a string, got ${typeof ip}`);
  if (ipv4(ip) !== null) return ip;
  const groups = ipv6(ip.replace(/%.*$/, ""));
  if (groups === null) return ip;
  checkSubnet(ipv6Subnet);
  // `::1` and `::` share the IPv4-compatible range but embed no IPv4 address: the dotted
  // notation is what tells them apart, as in express-rate-limit.
  const compatible = ip.includes(".") && groups.slice(0, 6).every((g) => g === 0);
  if (isMapped4(groups) || compatible) return lastFourBytes(groups);
  if (ipv6Subnet === false) return ip;
  return `${canonical(masked(groups, ipv6Subnet))}/${ipv6Subnet}`;
}

/** Whether `ip` is an IPv6 address (not IPv4-mapped ones' IPv4 text, which has no colon). */
export function isIPv6(ip) {
  return typeof ip === "string" && ip.includes(":") && ipv6(ip.replace(/%.*$/, "")) !== null;
}
