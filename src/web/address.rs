//! The SSRF guard's table: which IP addresses `web_fetch` refuses to connect to. It is an
//! allowlist in effect: a public unicast address passes, and every range that reaches the
//! machine itself, its network, a cloud metadata service, or that embeds another (IPv4)
//! address is refused. Address forms (decimal, octal, hex IPv4 in a URL, bracketed IPv6) are
//! parsed by `url` before they reach this table, so it only ever sees `IpAddr`s.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 ranges refused, with what they are (the reason is shown to the model).
const REFUSED_V4: &[(Ipv4Addr, u8, &str)] = &[
    (
        Ipv4Addr::new(0, 0, 0, 0),
        8,
        "unspecified (\"this network\")",
    ),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "carrier-grade NAT (shared)",
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "link-local (cloud metadata)",
    ),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved or broadcast"),
];

/// IPv6 ranges refused. The ones that carry an IPv4 address (mapped, compatible, NAT64,
/// 6to4, Teredo) are refused whole: they could reach an IPv4 range refused above.
const REFUSED_V6: &[(Ipv6Addr, u8, &str)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, "unspecified"),
    (Ipv6Addr::LOCALHOST, 128, "loopback"),
    (
        Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0),
        96,
        "IPv4-mapped",
    ),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, "IPv4-compatible"),
    (
        Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0),
        96,
        "NAT64 (embeds IPv4)",
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        "NAT64 local",
    ),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, "discard"),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        "IETF protocol assignments (Teredo)",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation",
    ),
    (
        Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0),
        16,
        "6to4 (embeds IPv4)",
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        "documentation",
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "unique-local (private)",
    ),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "site-local"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast"),
];

/// Why `address` is refused (the kind of range it is in), or `None` for a public address.
pub fn refused(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            REFUSED_V4
                .iter()
                .find(|(net, len, _)| {
                    within(u128::from(bits), u128::from(u32::from(*net)), *len, 32)
                })
                .map(|(_, _, why)| *why)
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            REFUSED_V6
                .iter()
                .find(|(net, len, _)| within(bits, u128::from(*net), *len, 128))
                .map(|(_, _, why)| *why)
        }
    }
}

/// Whether `bits` lies in `net`/`len` of a `width`-bit address.
fn within(bits: u128, net: u128, len: u8, width: u32) -> bool {
    let len = u32::from(len).min(width);
    if len == 0 {
        return true;
    }
    let shift = width - len;
    (bits >> shift) == (net >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_address(url: &str) -> IpAddr {
        match url::Url::parse(url).expect("parses").host() {
            Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
            other => panic!("{url}: not an address host: {other:?}"),
        }
    }

    #[test]
    fn decimal_octal_and_hex_ipv4_hosts_are_loopback() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://0x7f000001/",
            "http://127.1/",
            "http://017700000001/",
        ] {
            let address = host_address(url);
            assert_eq!(address, IpAddr::V4(Ipv4Addr::LOCALHOST), "{url}");
            assert_eq!(refused(address), Some("loopback"), "{url}");
        }
    }

    #[test]
    fn mapped_compatible_and_unspecified_forms_are_refused() {
        for url in [
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::127.0.0.1]/",
            "http://[::1]/",
            "http://[::]/",
            "http://0.0.0.0/",
            "http://0/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:7f00:1::]/",
        ] {
            assert!(refused(host_address(url)).is_some(), "{url} passed");
        }
    }

    #[test]
    fn private_link_local_metadata_and_special_ranges_are_refused() {
        for (address, why) in [
            ("169.254.169.254", "link-local (cloud metadata)"),
            ("10.1.2.3", "private"),
            ("172.31.255.255", "private"),
            ("192.168.0.1", "private"),
            ("100.100.100.200", "carrier-grade NAT (shared)"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved or broadcast"),
            ("fd00::1", "unique-local (private)"),
            ("fd00:ec2::254", "unique-local (private)"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
        ] {
            let parsed: IpAddr = address.parse().expect("an address");
            assert_eq!(refused(parsed), Some(why), "{address}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "169.255.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
        ] {
            let parsed: IpAddr = address.parse().expect("an address");
            assert_eq!(refused(parsed), None, "{address}");
        }
    }
}
