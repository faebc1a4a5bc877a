// Allow and deny lists of keys, IP addresses and networks (CIDR, IPv4 and IPv6), matched with
// the rules of the core's `tollgate::access`, which the Worker uses: an entry with a `/` is a
// network, one that parses as an address is that address, anything else is a key matched
// exactly; an IPv4-mapped IPv6 address is its IPv4 address; a network's host bits are
// ignored. Written over client-ip.js's parsers (no `node:net`: the browser and workerd builds
// carry this file too) rather than in the wasm module, whose size is budgeted.
// tests/access-lists/cases.json holds this file and the core to the same answers.
import { ipv4, ipv6 } from "./client-ip.js";

/** An address as eight 16-bit groups (IPv4 as mapped IPv6), whether it was IPv4, or null. */
function parse(s) {
  const v4 = ipv4(s);
  if (v4 !== null) return { groups: [0, 0, 0, 0, 0, 0xffff, (v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]], v4: true };
  const groups = ipv6(s.replace(/%.*$/, ""));
  return groups === null ? null : { groups, v4: false };
}

/** Whether the first `bits` bits of two addresses' groups agree. */
function samePrefix(a, b, bits) {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((a[i] & mask) !== (b[i] & mask)) return false;
  }
  return true;
}

const fail = (field, value, expected, code) =>
  Object.assign(new (code === "invalid_type" ? TypeError : RangeError)(`${field} ${expected}, got ${JSON.stringify(value)}`), { code, field });

export class AccessList {
  #keys = new Set();
  /** [groups, prefix over 128 bits] */
  #nets = [];

  /** The list `entries` given as option `field` (`allowList`); throws naming the bad entry. */
  constructor(entries, field) {
    if (!Array.isArray(entries)) throw fail(field, entries, "must be an array of keys, IP addresses and networks", "invalid_type");
    entries.forEach((e, i) => {
      const at = `${field}[${i}]`;
      if (typeof e !== "string" || e === "") throw fail(at, e, "must be a non-empty string", "invalid_type");
      const slash = e.indexOf("/");
      if (slash >= 0) {
        const addr = parse(e.slice(0, slash));
        const prefix = e.slice(slash + 1);
        const p = /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : NaN;
        // A zone is not part of a network; the core refuses it as well.
        if (addr === null || e.slice(0, slash).includes("%") || !(p <= (addr.v4 ? 32 : 128))) {
          throw Object.assign(new RangeError(`${at} ${JSON.stringify(e)} is not an IP network (address/prefix, e.g. "10.0.0.0/8")`), { code: "invalid_value", field: at });
        }
        this.#nets.push([addr.groups, addr.v4 ? p + 96 : p]);
        return;
      }
      const addr = parse(e);
      if (addr !== null) this.#nets.push([addr.groups, 128]);
      else this.#keys.add(e);
    });
  }

  /** Whether `key` is listed, or `ip` (the client address a middleware keyed by), or `key` read as an address, is in a listed network. */
  matches(key, ip) {
    if (this.#keys.has(key)) return true;
    if (this.#nets.length === 0) return false;
    for (const s of [ip, key]) {
      if (typeof s !== "string") continue;
      const a = parse(s);
      if (a !== null && this.#nets.some(([net, bits]) => samePrefix(a.groups, net, bits))) return true;
    }
    return false;
  }
}
