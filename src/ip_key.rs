//! The rate-limit key of a client address: an IPv4 address whole, an IPv6 address as its
//! network. One IPv6 user commonly holds a whole /64 (often a /56 or /48) and can pick a new
//! address from it for every request; keyed by the full address, such a user would never be
//! limited. IPv4 addresses, scarce enough to be one client each, are kept whole. The npm
//! package's `ipKey`, its middleware's default key and express-rate-limit's `ipKeyGenerator`
//! are this function (through the limiter's wasm module), and so is the Worker proxy's `ip:`
//! key. Written without `core::fmt`, which the wasm modules do not link.
//!
//! ```
//! use tollgate::ip_key::ip_key;
//! assert_eq!(ip_key("2001:db8:1234:56ff::1", 56).as_deref(), Some("2001:db8:1234:5600::/56"));
//! assert_eq!(ip_key("::ffff:192.0.2.1", 56).as_deref(), Some("192.0.2.1"));
//! assert_eq!(ip_key("fe80::1%eth0", 128).as_deref(), Some("fe80::1"));
//! assert_eq!(ip_key("1.2.3.4:5678", 56), None);
//! ```

use alloc::string::String;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::access::mask;
use crate::text::push_u64;

/// The default IPv6 grouping (express-rate-limit v8's `ipv6Subnet`).
pub const DEFAULT_IPV6_SUBNET: u8 = 56;

/// The key of `address`: an IPv4 address, or an IPv4-mapped IPv6 one (`::ffff:192.0.2.1`), as
/// its dotted quad; an IPv6 address (a zone, `%eth0`, dropped) as its first `prefix` bits, in
/// RFC 5952 text, with `/prefix` unless `prefix` is 128 (more counts as 128). `None` when
/// `address` is not an IP address.
pub fn ip_key(address: &str, prefix: u8) -> Option<String> {
    let v6 = match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => return Some(dotted(v4)),
        Ok(IpAddr::V6(v6)) => v6,
        Err(_) => address.split('%').next()?.parse::<Ipv6Addr>().ok()?,
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(dotted(v4));
    }
    let prefix = prefix.min(128);
    let mut out = rfc5952(Ipv6Addr::from(u128::from(v6) & mask(prefix)).segments());
    if prefix < 128 {
        out.push('/');
        push_u64(&mut out, u64::from(prefix));
    }
    Some(out)
}

fn dotted(v4: Ipv4Addr) -> String {
    let mut out = String::new();
    for (i, b) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_u64(&mut out, u64::from(b));
    }
    out
}

/// Lowercase hexadecimal groups without leading zeros, the longest run of two or more zero
/// groups (the first of equal runs) written `::`.
fn rfc5952(groups: [u16; 8]) -> String {
    let (mut at, mut len, mut i) = (8, 0, 0);
    while i < 8 {
        let run = groups[i..].iter().take_while(|&&g| g == 0).count();
        if run > len && run >= 2 {
            (at, len) = (i, run);
        }
        i += run.max(1);
    }
    let mut out = String::new();
    for (i, g) in groups.into_iter().enumerate() {
        if i == at {
            out.push_str("::");
        }
        if (at..at + len).contains(&i) {
            continue;
        }
        if i > 0 && i != at + len {
            out.push(':');
        }
        let digits = (0..4).rev().map(|d| (g >> (4 * d)) & 0xf).skip_while(|&d| d == 0);
        out.extend(digits.map(|d| char::from_digit(u32::from(d), 16).unwrap_or('0')));
        if g == 0 {
            out.push('0');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::string::ToString;

    #[test]
    fn keys_match_std_text_of_the_masked_address() {
        for (a, p) in [
            ("2001:db8::1", 128),
            ("::", 128),
            ("1::", 128),
            ("::1", 128),
            ("1:0:0:1:0:0:0:1", 128),
            ("2001:db8:0:0:1:0:0:1", 128),
            ("fe80::abcd:1%eth0", 64),
            ("2001:db8:1234:5678:9abc:def0:1234:5678", 56),
            ("ff00::", 1),
            ("64:ff9b::1.2.3.4", 96),
        ] {
            let ip: Ipv6Addr = a.split('%').next().unwrap().parse().unwrap();
            let masked = Ipv6Addr::from(u128::from(ip) & if p == 128 { u128::MAX } else { u128::MAX << (128 - p) });
            let want = if p == 128 { masked.to_string() } else { std::format!("{masked}/{p}") };
            assert_eq!(ip_key(a, p as u8), Some(want), "{a}");
        }
        assert_eq!(ip_key("192.0.2.1", 56).as_deref(), Some("192.0.2.1"));
        assert_eq!(ip_key("::ffff:c000:201", 128).as_deref(), Some("192.0.2.1"));
        for bad in ["", "1.2.3", "01.2.3.4", "1.2.3.4%eth0", "::1::", "1.2.3.4:80", "localhost"] {
            assert_eq!(ip_key(bad, 56), None, "{bad}");
        }
    }

    #[test]
    fn ipv6_addresses_of_one_slash_56_share_a_key_by_default() {
        let a = ip_key("2001:db8:1:2:aaaa::1", DEFAULT_IPV6_SUBNET).unwrap();
        let b = ip_key("2001:db8:1:ff:ffff:ffff:ffff:ffff", DEFAULT_IPV6_SUBNET).unwrap();
        assert_eq!(a, "2001:db8:1::/56");
        assert_eq!(a, b);
        assert_ne!(a, ip_key("2001:db8:1:100::1", 56).unwrap());
        assert_eq!(ip_key("2001:db8:1:2:aaaa::1", 64).unwrap(), "2001:db8:1:2::/64");
        assert_eq!(ip_key("2001:db8:1:2:aaaa::1", 48).unwrap(), "2001:db8:1::/48");
        assert_eq!(ip_key("2001:db8::1", 128).unwrap(), "2001:db8::1");
    }

    #[test]
    fn ipv4_is_always_per_address_and_mapped_addresses_are_ipv4() {
        assert_eq!(ip_key("203.0.113.7", 56).unwrap(), "203.0.113.7");
        assert_eq!(ip_key("203.0.113.7", 1).unwrap(), "203.0.113.7");
        assert_eq!(ip_key("::ffff:203.0.113.7", 56).unwrap(), "203.0.113.7");
        assert_eq!(ip_key("not an ip", 56), None);
        assert_eq!(ip_key("", 56), None);
    }
}
