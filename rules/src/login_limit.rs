//! Login attempts, throttled (OWASP: slow an attacker down, never lock an account out):
//! an exact sliding window per username, normalised as the origin normalises it, and
//! one per client address. Every attempt counts, failed or not, before the password is
//! checked. The windows themselves are `sliding_window`'s; this says what they are kept
//! per and how they are named in the `RateLimit` headers.

use std::net::{IpAddr, Ipv6Addr};

use crate::sliding_window::Rate;

/// The default `LOGIN_RATE_LIMIT_USER`: attempts one username may see.
pub const DEFAULT_USER_RATE: &str = "10/1m";
/// The default `LOGIN_RATE_LIMIT_CLIENT`: attempts from one address, any usernames.
/// Higher than a username's, since a household, an office or a carrier's NAT is one
/// address for many people.
pub const DEFAULT_CLIENT_RATE: &str = "60/1m";

/// The login windows' rates (`LOGIN_RATE_LIMIT_USER`, `LOGIN_RATE_LIMIT_CLIENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    pub user: Rate,
    pub client: Rate,
}

/// One of the two windows an attempt is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginWindow {
    Client,
    User,
}

impl LoginWindow {
    /// Its policy's name in the `RateLimit` headers.
    pub fn name(self) -> &'static str {
        match self {
            LoginWindow::Client => "login-client",
            LoginWindow::User => "login-user",
        }
    }

    /// Its key in a limiter: the window's name and whose it is.
    pub fn key(self, whose: &str) -> String {
        format!("{}:{whose}", self.name())
    }

    /// Its rate under `limits`.
    pub fn rate(self, limits: &LoginLimits) -> Rate {
        match self {
            LoginWindow::Client => limits.client,
            LoginWindow::User => limits.user,
        }
    }
}

/// Whose client window an attempt is counted in, from the address Cloudflare puts in
/// `CF-Connecting-IP`: an IPv4 address as it is, an IPv6 address by its /64 (one
/// subscriber's whole prefix: anyone holding one can rotate through 2^64 addresses).
/// Without a well-formed address — a request that did not come through Cloudflare, such
/// as a local run — every attempt shares the one window `unknown`.
pub fn client_key(connecting_ip: Option<&str>) -> String {
    match connecting_ip.and_then(|text| text.trim().parse::<IpAddr>().ok()) {
        Some(IpAddr::V4(v4)) => v4.to_string(),
        Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let [a, b, c, d, ..] = v6.segments();
                format!("{}/64", Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
            }
        },
        None => "unknown".to_owned(),
    }
}

/// The 32-bit FNV-1a hash of `text`: stable across isolates, builds and platforms, so
/// what is placed by it (a login window's shard) is placed the same everywhere.
pub fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv4_address_is_its_own_window_and_ipv6_goes_by_its_64() {
        assert_eq!(client_key(Some("203.0.113.7")), "203.0.113.7");
        assert_eq!(client_key(Some(" 203.0.113.7 ")), "203.0.113.7");
        assert_eq!(
            client_key(Some("2001:db8:1:2:aaaa::1")),
            client_key(Some("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        );
        assert_eq!(client_key(Some("2001:db8:1:2::1")), "2001:db8:1:2::/64");
        assert_ne!(
            client_key(Some("2001:db8:1:2::1")),
            client_key(Some("2001:db8:1:3::1"))
        );
        assert_eq!(client_key(Some("::ffff:203.0.113.7")), "203.0.113.7");
    }

    #[test]
    fn no_address_or_a_malformed_one_is_the_shared_unknown_window() {
        for header in [
            None,
            Some(""),
            Some("not an ip"),
            Some("203.0.113.7, 10.0.0.1"),
        ] {
            assert_eq!(client_key(header), "unknown", "{header:?}");
        }
    }

    #[test]
    fn fnv1a_is_the_published_hash() {
        assert_eq!(fnv1a(""), 0x811c_9dc5);
        assert_eq!(fnv1a("a"), 0xe40c_292c);
        assert_eq!(fnv1a("foobar"), 0xbf9c_f968);
    }

    #[test]
    fn the_windows_are_named_and_keyed_apart() {
        assert_eq!(LoginWindow::User.key("demo"), "login-user:demo");
        assert_eq!(LoginWindow::Client.key("demo"), "login-client:demo");
    }
}
