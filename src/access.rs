//! Allow and deny lists: keys, IP addresses and networks (CIDR, IPv4 and IPv6), checked
//! before the limits. A listed hit is answered without the limiter: allowed and not counted,
//! or denied and not counted.
//!
//! An entry is an IP network when it is `address/prefix`, an IP address when it parses as
//! one, and otherwise a key matched exactly. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`)
//! is its IPv4 address, in entries and in what is checked. A network's host bits are
//! ignored (`10.1.2.3/8` is `10.0.0.0/8`). The npm package matches with this code, through its
//! wasm modules (`wasm/src/controls.rs`); `tests/access-lists/cases.json` holds every edge to it.
//!
//! ```
//! use tollgate::access::AccessList;
//! let list = AccessList::parse(["10.0.0.0/8", "2001:db8::/32", "partner-key"]).unwrap();
//! assert!(list.matches("partner-key", None));
//! assert!(list.matches("10.9.8.7", None));
//! assert!(list.matches("user:1", Some("2001:db8:ffff::1")));
//! assert!(!list.matches("11.0.0.1", None));
//! assert_eq!(AccessList::parse(["10.0.0.0/33"]).unwrap_err(), 0);
//! ```

use alloc::string::String;
use alloc::vec::Vec;
use core::net::IpAddr;

/// A parsed list of keys and networks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccessList {
    keys: Vec<String>,
    /// (network as 128 bits, prefix length over 128 bits); IPv4 as mapped IPv6.
    nets: Vec<(u128, u8)>,
}

/// Which list answered a hit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// On the allow list: admitted without counting.
    Allow,
    /// On the deny list: denied without counting.
    Deny,
}

impl Listed {
    /// The decision's `reason` at every edge (upstash/ratelimit's name for its deny list).
    pub fn reason(self) -> &'static str {
        match self {
            Listed::Allow => "allowList",
            Listed::Deny => "denyList",
        }
    }
}

/// An address as 128 bits, IPv4 (and IPv4-mapped IPv6) in the mapped range, with the
/// number of bits an IPv4 prefix is offset by.
fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u128::from(v4.to_ipv6_mapped()), 96),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => (u128::from(v4.to_ipv6_mapped()), 96),
            None => (u128::from(v6), 0),
        },
    }
}

/// The first `prefix` bits of 128 set (0 to 128).
pub(crate) fn mask(prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(prefix))
    }
}

/// An address as written (a zone `%eth0` dropped, as the client IPs of Node carry).
fn parse_ip(s: &str) -> Option<IpAddr> {
    let s = s.split('%').next().unwrap_or(s);
    s.parse::<IpAddr>().ok()
}

impl AccessList {
    /// Parses the entries; `Err(i)`: entry `i` has a `/` but is not an IP network.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<AccessList, usize> {
        let mut list = AccessList::default();
        for (i, e) in entries.into_iter().enumerate() {
            if let Some((addr, prefix)) = e.split_once('/') {
                let ip = addr.parse::<IpAddr>().map_err(|_| i)?;
                let digits = !prefix.is_empty() && prefix.len() <= 3 && prefix.bytes().all(|b| b.is_ascii_digit());
                let p: u8 = if digits { prefix.parse().map_err(|_| i)? } else { return Err(i) };
                let max = if ip.is_ipv4() { 32 } else { 128 };
                if p > max {
                    return Err(i);
                }
                let (b, offset) = bits(ip);
                // An IPv4-mapped network written in IPv6 (`::ffff:10.0.0.0/104`) keeps its prefix.
                let prefix = if ip.is_ipv4() { p + offset } else { p };
                list.nets.push((b & mask(prefix), prefix));
            } else if let Some(ip) = parse_ip(e) {
                list.nets.push((bits(ip).0, 128));
            } else {
                list.keys.push(e.into());
            }
        }
        Ok(list)
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.nets.is_empty()
    }

    /// Whether `key` is listed, or `ip` (the client address an HTTP edge keyed by), or `key`
    /// itself read as an address, is in a listed network.
    pub fn matches(&self, key: &str, ip: Option<&str>) -> bool {
        if self.keys.iter().any(|k| k == key) {
            return true;
        }
        if self.nets.is_empty() {
            return false;
        }
        [ip, Some(key)].into_iter().flatten().filter_map(parse_ip).any(|a| self.contains(a))
    }

    fn contains(&self, ip: IpAddr) -> bool {
        let (b, _) = bits(ip);
        self.nets.iter().any(|&(net, prefix)| b & mask(prefix) == net)
    }
}

/// The list that answers a hit, if any: the deny list first, so that a key on both is denied.
pub fn check_lists(allow: &AccessList, deny: &AccessList, key: &str, ip: Option<&str>) -> Option<Listed> {
    check_keys(allow, deny, &[key], ip)
}

/// [`check_lists`] for a hit on several keys (the npm package's `limit(["user:1", "ip:..."])`):
/// denied when any key is on the deny list, else admitted when any is on the allow list.
pub fn check_keys<K: AsRef<str>>(allow: &AccessList, deny: &AccessList, keys: &[K], ip: Option<&str>) -> Option<Listed> {
    let on = |list: &AccessList| keys.iter().any(|k| list.matches(k.as_ref(), ip));
    if on(deny) {
        Some(Listed::Deny)
    } else if on(allow) {
        Some(Listed::Allow)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_addresses_and_keys() {
        let list = AccessList::parse(["192.0.2.0/24", "2001:db8:1::/48", "::ffff:198.51.100.7", "k"]).unwrap();
        assert!(list.matches("192.0.2.255", None));
        assert!(list.matches("::ffff:192.0.2.1", None), "an IPv4-mapped address is its IPv4 address");
        assert!(list.matches("198.51.100.7", None));
        assert!(list.matches("2001:db8:1:ffff::1", None));
        assert!(list.matches("x", Some("fe80::1%eth0")) == false);
        assert!(list.matches("k", None) && !list.matches("K", None));
        assert!(!list.matches("2001:db8:2::1", None) && !list.matches("192.0.3.1", None));
        for bad in ["10.0.0.0/33", "::/129", "10.0.0/8", "10.0.0.0/", "10.0.0.0/+8", "a/8"] {
            assert_eq!(AccessList::parse([bad]), Err(0), "{bad}");
        }
        let deny = AccessList::parse(["k"]).unwrap();
        assert_eq!(check_lists(&list, &deny, "k", None), Some(Listed::Deny), "deny wins");
        assert_eq!(check_lists(&list, &deny, "192.0.2.1", None), Some(Listed::Allow));
        assert_eq!(check_lists(&list, &deny, "z", Some("203.0.113.1")), None);
    }
}
