// The default key of the HTTP middleware: the client's IP address, with IPv6 addresses cut to
// their network prefix. One IPv6 user commonly holds a whole /64 (often a /56 or /48) and can
// pick a new address from it for every request; keyed by the full address, such a user would
// never be limited. IPv4 addresses are kept whole. Written without `node:net`, so that the
// package's browser and workerd builds, which carry this module, import nothing from Node.
// The key itself is the core's (`tollgate::ip_key`, which the Worker's proxy keys by too),
// through the limiter's wasm module.
import { fail } from "../contract/options.js";
import { ipKeyOf } from "../wasm.js";

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
  const key = ipKeyOf(address, subnet === false ? 128 : subnet);
  if (key === undefined) throw new TypeError(`not an IP address: ${JSON.stringify(address)}`);
  return key;
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
  if (!isIPv6(ip)) return ip;
  checkSubnet(ipv6Subnet);
  const whole = ipKeyOf(ip, 128);
  if (!whole.includes(":")) return whole; // IPv4-mapped: the core's key is the IPv4 address
  // `::1` and `::` share the IPv4-compatible range (the first 96 bits zero) but embed no IPv4
  // address: the dotted notation is what tells them apart, as in express-rate-limit.
  const address = ip.replace(/%.*$/, "");
  if (address.includes(".") && ipKeyOf(address, 96) === "::/96") return address.slice(address.lastIndexOf(":") + 1);
  if (ipv6Subnet === false) return ip;
  return ipv6Subnet === 128 ? `${whole}/128` : ipKeyOf(ip, ipv6Subnet);
}

/** Whether `ip` is an IPv6 address (not IPv4-mapped ones' IPv4 text, which has no colon). */
export function isIPv6(ip) {
  return typeof ip === "string" && ip.includes(":") && ipKeyOf(ip, 128) !== undefined;
}
