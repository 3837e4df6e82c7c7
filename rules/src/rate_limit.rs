//! Which routes are rate-limited and how (`RATE_LIMITED_ROUTES`, `RATE_LIMIT_USER`,
//! `RATE_LIMIT_GLOBAL`), and the IETF `RateLimit-Policy` / `RateLimit` header values
//! (draft-ietf-httpapi-ratelimit-headers).
//!
//! A route entry is `METHOD /path` where a `*` segment matches any one segment,
//! optionally followed by `user=L/W` and `global=L/W` to override the defaults for that
//! route; entries are separated by commas. Each entry has its own windows, keyed by the
//! entry's pattern, so one route's traffic never spends another's quota.

use crate::sliding_window::{ceil_secs, Rate};

/// The default `RATE_LIMITED_ROUTES`: the mutating routes (`docs/design/rate-limits.md`).
pub const DEFAULT_ROUTES: &str = "POST /payments/confirm, POST /queue/*/enter";

/// The limits of one route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteLimit {
    /// `METHOD /pattern`, as configured: the key of the route's windows.
    pub key: String,
    pub user: Rate,
    pub global: Rate,
    method: String,
    segments: Vec<String>,
}

/// Every limited route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimits {
    routes: Vec<RouteLimit>,
}

impl RateLimits {
    /// Parses `RATE_LIMITED_ROUTES` with the default user and global rates.
    pub fn parse(routes: &str, user: Rate, global: Rate) -> Result<Self, String> {
        let routes = routes
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| parse_route(entry, user, global))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { routes })
    }

    /// The limits of the first route matching this request, if any.
    pub fn for_request(&self, method: &str, path: &str) -> Option<&RouteLimit> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        self.routes.iter().find(|route| {
            route.method == method
                && route.segments.len() == segments.len()
                && route
                    .segments
                    .iter()
                    .zip(&segments)
                    .all(|(want, got)| want == "*" || want == got)
        })
    }
}

fn parse_route(entry: &str, user: Rate, global: Rate) -> Result<RouteLimit, String> {
    let mut words = entry.split_whitespace();
    let (Some(method), Some(path)) = (words.next(), words.next()) else {
        return Err(format!(
            "`{entry}` is not `METHOD /path [user=L/W] [global=L/W]`"
        ));
    };
    if !method.bytes().all(|b| b.is_ascii_uppercase()) || !path.starts_with('/') {
        return Err(format!(
            "`{entry}` is not `METHOD /path [user=L/W] [global=L/W]`"
        ));
    }
    let mut route = RouteLimit {
        key: format!("{method} {path}"),
        user,
        global,
        method: method.to_owned(),
        segments: path
            .trim_matches('/')
            .split('/')
            .map(str::to_owned)
            .collect(),
    };
    for word in words {
        match word.split_once('=') {
            Some(("user", rate)) => route.user = parse_rate(rate)?,
            Some(("global", rate)) => route.global = parse_rate(rate)?,
            _ => {
                return Err(format!(
                    "`{word}` in `{entry}` is not `user=L/W` or `global=L/W`"
                ))
            }
        }
    }
    Ok(route)
}

/// The longest window a rate may have: a day.
pub const MAX_WINDOW_MS: i64 = 86_400_000;

/// Parses `COUNT/WINDOW`, the window in `ms`, `s` or `m`: `5/1s`, `100/500ms`, `10/1m`.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let problem = || format!("`{text}` is not COUNT/WINDOW such as 5/1s, 100/500ms or 10/1m");
    let (count, window) = text.trim().split_once('/').ok_or_else(problem)?;
    let limit: u32 = count.parse().map_err(|_| problem())?;
    let (number, unit_ms) = if let Some(ms) = window.strip_suffix("ms") {
        (ms, 1)
    } else if let Some(s) = window.strip_suffix('s') {
        (s, 1000)
    } else if let Some(m) = window.strip_suffix('m') {
        (m, 60_000)
    } else {
        return Err(problem());
    };
    let number: i64 = number.parse().map_err(|_| problem())?;
    let window_ms = number
        .checked_mul(unit_ms)
        .filter(|ms| (1..=MAX_WINDOW_MS).contains(ms));
    Ok(Rate {
        limit,
        window_ms: window_ms.ok_or_else(problem)?,
    })
}

/// One quota's state, for the `RateLimit` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaState {
    /// The policy's name in `RateLimit-Policy`: `user` or `global`.
    pub name: &'static str,
    pub remaining: u32,
    /// Milliseconds until a unit comes back.
    pub reset_ms: i64,
}

/// `RateLimit-Policy`: `"user";q=5;w=1, "global";q=100;w=1` (w in whole seconds, up).
pub fn policy_header(route: &RouteLimit) -> String {
    policies_header(&[("user", route.user), ("global", route.global)])
}

/// `RateLimit-Policy` of named quotas: `"name";q=LIMIT;w=SECONDS`, comma-separated.
pub fn policies_header(policies: &[(&str, Rate)]) -> String {
    policies
        .iter()
        .map(|(name, rate)| {
            format!(
                "\"{name}\";q={};w={}",
                rate.limit,
                ceil_secs(rate.window_ms).max(1)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `RateLimit`: `"user";r=3;t=1` for each quota known (t in whole seconds, up).
pub fn limit_header(quotas: &[QuotaState]) -> String {
    quotas
        .iter()
        .map(|quota| {
            format!(
                "\"{}\";r={};t={}",
                quota.name,
                quota.remaining,
                ceil_secs(quota.reset_ms)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: Rate = Rate {
        limit: 5,
        window_ms: 1000,
    };
    const GLOBAL: Rate = Rate {
        limit: 100,
        window_ms: 1000,
    };

    #[test]
    fn rates_are_read_in_three_units() {
        let check = |text: &str, expected: Option<(u32, i64)>| {
            let got = parse_rate(text)
                .ok()
                .map(|rate| (rate.limit, rate.window_ms));
            assert_eq!(got, expected, "{text}");
        };
        check("5/1s", Some((5, 1000)));
        check("100/500ms", Some((100, 500)));
        check("10/1m", Some((10, 60_000)));
        check("0/1s", Some((0, 1000)));
        check("5/0s", None);
        check("5/1h", None);
        check("5", None);
        check("-1/1s", None);
        check("5/ 1s", None);
        check("5/99999999m", None);
    }

    #[test]
    fn the_default_routes_match_confirm_and_every_queue_enter() {
        let limits = RateLimits::parse(DEFAULT_ROUTES, USER, GLOBAL).unwrap();
        let key = |method, path| limits.for_request(method, path).map(|r| r.key.as_str());
        assert_eq!(
            key("POST", "/payments/confirm"),
            Some("POST /payments/confirm")
        );
        assert_eq!(
            key("POST", "/queue/drop-7/enter"),
            Some("POST /queue/*/enter")
        );
        assert_eq!(key("GET", "/payments/confirm"), None);
        assert_eq!(key("POST", "/queue/drop-7/leave"), None);
        assert_eq!(key("POST", "/queue/enter"), None);
        assert_eq!(key("GET", "/payments/order-1"), None);
    }

    #[test]
    fn a_route_may_carry_its_own_limits() {
        let limits =
            RateLimits::parse("POST /auth/login user=3/1m global=50/1s", USER, GLOBAL).unwrap();
        let login = limits.for_request("POST", "/auth/login").unwrap();
        assert_eq!(
            login.user,
            Rate {
                limit: 3,
                window_ms: 60_000
            }
        );
        assert_eq!(
            login.global,
            Rate {
                limit: 50,
                window_ms: 1000
            }
        );
        assert!(RateLimits::parse("", USER, GLOBAL)
            .unwrap()
            .for_request("POST", "/auth/login")
            .is_none());
    }

    #[test]
    fn malformed_route_entries_are_refused() {
        for spec in [
            "POST",
            "post /x",
            "POST x",
            "POST /x users=1/1s",
            "POST /x user=1",
        ] {
            assert!(RateLimits::parse(spec, USER, GLOBAL).is_err(), "{spec}");
        }
    }

    #[test]
    fn headers_follow_the_draft() {
        let limits = RateLimits::parse("POST /x global=50/500ms", USER, GLOBAL).unwrap();
        let route = limits.for_request("POST", "/x").unwrap();
        assert_eq!(policy_header(route), r#""user";q=5;w=1, "global";q=50;w=1"#);
        let quotas = [
            QuotaState {
                name: "user",
                remaining: 0,
                reset_ms: 1001,
            },
            QuotaState {
                name: "global",
                remaining: 42,
                reset_ms: 1,
            },
        ];
        assert_eq!(
            limit_header(&quotas),
            r#""user";r=0;t=2, "global";r=42;t=1"#
        );
    }
}
