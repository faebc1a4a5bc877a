//! Client IP keys for proxy mode: an IPv4 address or an IPv6 network, grouped by prefix.
//!
//! One IPv6 customer usually gets a whole /64 (or more), and can pick any of its 2^64
//! addresses per request: limiting per IPv6 address limits nothing. So IPv6 addresses are
//! grouped by a prefix (64 by default), IPv4 by 32 (one key per address) unless configured.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The key for `ip` grouped by the prefix lengths: `ip:203.0.113.7`, `ip:2001:db8:1:2::/64`.
/// `None` when `ip` is not an address.
pub fn ip_key(ip: &str, ipv4_prefix: u8, ipv6_prefix: u8) -> Option<String> {
    let addr: IpAddr = ip.trim().parse().ok()?;
    Some(match addr {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4) & mask32(ipv4_prefix);
            if ipv4_prefix >= 32 {
                format!("ip:{}", Ipv4Addr::from(bits))
            } else {
                format!("ip:{}/{ipv4_prefix}", Ipv4Addr::from(bits))
            }
        }
        IpAddr::V6(v6) => {
            // An IPv4-mapped address (::ffff:a.b.c.d) is an IPv4 client.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return ip_key(&v4.to_string(), ipv4_prefix, ipv6_prefix);
            }
            let bits = u128::from(v6) & mask128(ipv6_prefix);
            if ipv6_prefix >= 128 {
                format!("ip:{}", Ipv6Addr::from(bits))
            } else {
                format!("ip:{}/{ipv6_prefix}", Ipv6Addr::from(bits))
            }
        }
    })
}

fn mask32(prefix: u8) -> u32 {
    match prefix {
        0 => 0,
        p if p >= 32 => u32::MAX,
        p => u32::MAX << (32 - p),
    }
}

fn mask128(prefix: u8) -> u128 {
    match prefix {
        0 => 0,
        p if p >= 128 => u128::MAX,
        p => u128::MAX << (128 - p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_of_one_slash_64_share_a_key() {
        let a = ip_key("2001:db8:1:2:aaaa::1", 32, 64).unwrap();
        let b = ip_key("2001:db8:1:2:ffff:ffff:ffff:ffff", 32, 64).unwrap();
        assert_eq!(a, "ip:2001:db8:1:2::/64");
        assert_eq!(a, b);
        assert_ne!(a, ip_key("2001:db8:1:3::1", 32, 64).unwrap());
        assert_eq!(ip_key("2001:db8:1:2:aaaa::1", 32, 48).unwrap(), "ip:2001:db8:1::/48");
        assert_eq!(ip_key("2001:db8::1", 32, 128).unwrap(), "ip:2001:db8::1");
    }

    #[test]
    fn ipv4_is_per_address_by_default_and_mapped_addresses_are_ipv4() {
        assert_eq!(ip_key("203.0.113.7", 32, 64).unwrap(), "ip:203.0.113.7");
        assert_eq!(ip_key("203.0.113.7", 24, 64).unwrap(), "ip:203.0.113.0/24");
        assert_eq!(ip_key("::ffff:203.0.113.7", 32, 64).unwrap(), "ip:203.0.113.7");
        assert_eq!(ip_key("not an ip", 32, 64), None);
    }
}
