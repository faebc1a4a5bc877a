//! Client IP keys: an IPv4 address whole, an IPv6 address as its network.
//!
//! One IPv6 customer usually gets a whole /64, often a /56 or /48, and can pick any of its
//! addresses per request: limiting per IPv6 address limits nothing. So IPv6 addresses are
//! grouped by a subnet (`ipv6Subnet`, 56 by default, as express-rate-limit v8); IPv4
//! addresses, scarce enough to be one client each, are kept whole.
//!
//! ```
//! use tollgate::client_ip::ip_key;
//! assert_eq!(ip_key("203.0.113.7", 56).unwrap(), "ip:203.0.113.7");
//! assert_eq!(ip_key("2001:db8:1:2:aaaa::1", 56).unwrap(), "ip:2001:db8:1::/56");
//! ```

use alloc::format;
use alloc::string::String;
use core::net::{IpAddr, Ipv6Addr};

use crate::access::mask;

/// The default IPv6 grouping (express-rate-limit v8's).
pub const DEFAULT_IPV6_SUBNET: u8 = 56;

/// The key for `ip`: `ip:203.0.113.7`, `ip:2001:db8:1:200::/56` (`ipv6_subnet` 128 or more:
/// the whole address, no suffix). An IPv4-mapped address (`::ffff:a.b.c.d`) is an IPv4
/// client. `None` when `ip` is not an address.
pub fn ip_key(ip: &str, ipv6_subnet: u8) -> Option<String> {
    let addr: IpAddr = ip.trim().parse().ok()?;
    Some(match addr {
        IpAddr::V4(v4) => format!("ip:{v4}"),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("ip:{v4}"),
            None if ipv6_subnet >= 128 => format!("ip:{v6}"),
            None => format!("ip:{}/{ipv6_subnet}", Ipv6Addr::from(u128::from(v6) & mask(ipv6_subnet))),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_of_one_slash_56_share_a_key_by_default() {
        let a = ip_key("2001:db8:1:2:aaaa::1", 56).unwrap();
        let b = ip_key("2001:db8:1:ff:ffff:ffff:ffff:ffff", 56).unwrap();
        assert_eq!(a, "ip:2001:db8:1::/56");
        assert_eq!(a, b);
        assert_ne!(a, ip_key("2001:db8:1:100::1", 56).unwrap());
        assert_eq!(ip_key("2001:db8:1:2:aaaa::1", 64).unwrap(), "ip:2001:db8:1:2::/64");
        assert_eq!(ip_key("2001:db8:1:2:aaaa::1", 48).unwrap(), "ip:2001:db8:1::/48");
        assert_eq!(ip_key("2001:db8::1", 128).unwrap(), "ip:2001:db8::1");
    }

    #[test]
    fn ipv4_is_always_per_address_and_mapped_addresses_are_ipv4() {
        assert_eq!(ip_key("203.0.113.7", 56).unwrap(), "ip:203.0.113.7");
        assert_eq!(ip_key("203.0.113.7", 1).unwrap(), "ip:203.0.113.7");
        assert_eq!(ip_key("::ffff:203.0.113.7", 56).unwrap(), "ip:203.0.113.7");
        assert_eq!(ip_key("not an ip", 56), None);
        assert_eq!(ip_key("", 56), None);
    }
}
