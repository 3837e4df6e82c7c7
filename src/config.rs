//! The Worker's configuration (`wrangler.toml` `[vars]`, secrets, locally `.dev.vars`),
//! parsed once per isolate into typed values. A bad value is an error naming the
//! variable and what was expected.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::str::FromStr;

use rules::login_limit::{LoginLimits, DEFAULT_CLIENT_RATE, DEFAULT_USER_RATE};
use rules::queue::ticket;
use rules::rate_limit::{parse_rate, RateLimits, DEFAULT_ROUTES};
use rules::refresh::RefreshKey;
use rules::signing::private_link;
use rules::sliding_window::Rate;
use rules::token::{KeySet, Policy};
use worker::Env;

use crate::jwks::JwksSettings;

const DEFAULT_ORIGIN_URL: &str = "http://127.0.0.1:8080";
/// Longer than the origin's own bound on a confirm (gateway timeout 3 s, database 3 s).
const DEFAULT_ORIGIN_TIMEOUT_MS: u32 = 10_000;
const MIN_SECRET_LEN: usize = 32;

/// What to do when a user's session object cannot say whether a token is revoked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenylistFailMode {
    /// Let the request through with a warning: payments stay available while the
    /// object is down, at the price of honouring a logout late (the default).
    Open,
    /// Refuse with 503: a logout is honoured at once, at the price of availability.
    Closed,
}

pub struct EdgeConfig {
    /// Which tokens are valid (`JWT_KEYS`, `JWT_ISSUER`, `JWT_AUDIENCE`, `JWT_LEEWAY_SECONDS`).
    pub policy: Policy,
    /// Where an identity provider's keys are, when tokens it signed are valid too
    /// (`JWT_JWKS_URL`, `JWT_JWKS_MIN_REFETCH_SECONDS`).
    pub jwks: Option<JwksSettings>,
    /// The key new access tokens are signed with (`JWT_SIGNING_KID`).
    pub signing_kid: String,
    /// `ACCESS_TOKEN_TTL_SECONDS`, default 1800.
    pub access_ttl_secs: i64,
    /// `REFRESH_TOKEN_TTL_SECONDS`, default 14 days.
    pub refresh_ttl_secs: i64,
    /// What refresh tokens are MACed under: derived from `REFRESH_TOKEN_SECRET`, or
    /// when that is unset from `ORIGIN_SIGNING_SECRET` (rotating it then ends every
    /// refresh token).
    pub refresh_key: RefreshKey,
    /// `REFRESH_RATE_LIMIT_FAMILY` (10/1m): refreshes one login's tokens may make.
    pub refresh_limit: Rate,
    /// `DENYLIST_FAIL_MODE`: `open` (default) or `closed`.
    pub denylist_fail_mode: DenylistFailMode,
    /// `RATE_LIMITED_ROUTES` (`none` for no limits) with `RATE_LIMIT_USER` (5/1s) and
    /// `RATE_LIMIT_GLOBAL` (100/1s). Only authenticated routes can be limited.
    pub rate_limits: RateLimits,
    /// `RATE_LIMIT_GLOBAL_SHARDS`: objects each global limit is spread over (1).
    pub global_shards: u32,
    /// `LOGIN_RATE_LIMIT_USER` (10/1m) and `LOGIN_RATE_LIMIT_CLIENT` (60/1m): login
    /// attempts per username and per client address.
    pub login_limits: LoginLimits,
    /// `QUEUE_ADMIT_LIMIT`: how many at the head of a queue are admitted (100).
    pub queue_admit_limit: u32,
    /// `QUEUE_PASS_TTL_SECONDS`: how long an admission pass lives (600).
    pub queue_pass_ttl_secs: i64,
    /// `QUEUE_DRAW_BATCH`: people a room's draw ranks or places per call (10,000).
    pub queue_draw_batch: u64,
    /// `GATED_EVENTS`: event ids whose confirms need a pass (none).
    pub gated_events: HashSet<String>,
    /// Base URL of the origin, without a trailing slash (`ORIGIN_URL`).
    pub origin_url: String,
    /// HMAC key shared with the origin (`ORIGIN_SIGNING_SECRET`).
    pub origin_secret: Vec<u8>,
    /// The queue tickets' key: derived from `QUEUE_TICKET_SECRET`, or when that is unset
    /// from `ORIGIN_SIGNING_SECRET` (rotating it then voids every ticket: enter again).
    pub ticket_key: [u8; 32],
    /// How long a call to the origin may take before the client gets 504 (`ORIGIN_TIMEOUT_MS`).
    pub origin_timeout_ms: u32,
    /// Where the checkout page sends the buyer to pay (`PAYMENT_WINDOW_URL`, with
    /// `PAYMENT_CLIENT_KEY`); unset, the page says checkout is not configured.
    pub payment_window: Option<PaymentWindow>,
}

/// The PG's payment window, as the checkout page opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentWindow {
    /// `PAYMENT_WINDOW_URL`: https://, or http:// to a loopback host (the simulator's).
    pub url: String,
    /// `PAYMENT_CLIENT_KEY`: Toss's client key (`test_ck_…`, `live_ck_…`), public by
    /// design — it only opens the window.
    pub client_key: String,
}

#[derive(Debug, thiserror::Error)]
#[error("{name}: {problem}")]
pub struct ConfigError {
    pub name: &'static str,
    pub problem: String,
}

thread_local! {
    /// Variables cannot change while an isolate lives, so they are parsed once.
    static PARSED: RefCell<Option<Rc<EdgeConfig>>> = const { RefCell::new(None) };
}

impl EdgeConfig {
    /// The configuration of this isolate, parsed on first use.
    pub fn of(env: &Env) -> Result<Rc<EdgeConfig>, ConfigError> {
        if let Some(config) = PARSED.with(|parsed| parsed.borrow().clone()) {
            return Ok(config);
        }
        let config = Rc::new(Self::from_lookup(|name| {
            env.var(name).ok().map(|v| v.to_string())
        })?);
        PARSED.with(|parsed| *parsed.borrow_mut() = Some(config.clone()));
        Ok(config)
    }

    /// Parses the variables `lookup` finds, so tests need no Worker environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let vars = Vars(&lookup);
        let keys = KeySet::from_jwks_json(&vars.required("JWT_KEYS")?)
            .map_err(|err| invalid("JWT_KEYS", err))?;
        let signing_kid = vars.required("JWT_SIGNING_KID")?;
        if !keys.can_sign(&signing_kid) {
            return Err(invalid(
                "JWT_SIGNING_KID",
                format!("`{signing_kid}` is not a key of JWT_KEYS that can sign"),
            ));
        }
        let denylist_fail_mode = match vars.get("DENYLIST_FAIL_MODE").as_deref() {
            None | Some("open") => DenylistFailMode::Open,
            Some("closed") => DenylistFailMode::Closed,
            Some(other) => {
                return Err(invalid(
                    "DENYLIST_FAIL_MODE",
                    format!("`{other}` is not `open` or `closed`"),
                ))
            }
        };
        let rate = |name: &'static str, default: &str| {
            let text = vars.get(name).unwrap_or_else(|| default.to_owned());
            parse_rate(&text).map_err(|err| invalid(name, err))
        };
        // `none` turns rate limiting off; unset means the default routes (`docs/design/rate-limits.md`).
        let routes = vars
            .get("RATE_LIMITED_ROUTES")
            .unwrap_or_else(|| DEFAULT_ROUTES.to_owned());
        let rate_limits = RateLimits::parse(
            if routes == "none" { "" } else { &routes },
            rate("RATE_LIMIT_USER", "5/1s")?,
            rate("RATE_LIMIT_GLOBAL", "100/1s")?,
        )
        .map_err(|err| invalid("RATE_LIMITED_ROUTES", err))?;
        let origin_url = vars
            .get("ORIGIN_URL")
            .unwrap_or_else(|| DEFAULT_ORIGIN_URL.into());
        if !private_link(&origin_url) {
            return Err(invalid(
                "ORIGIN_URL",
                "must be an https:// URL, or http:// to a loopback host (127.0.0.0/8, \
                 [::1], localhost): passwords and payment keys cross this link, and the \
                 signature protects their integrity only",
            ));
        }
        let origin_secret = vars.required("ORIGIN_SIGNING_SECRET")?;
        if origin_secret.len() < MIN_SECRET_LEN {
            return Err(invalid(
                "ORIGIN_SIGNING_SECRET",
                "must be at least 32 characters",
            ));
        }
        let refresh_secret = vars.secret_or("REFRESH_TOKEN_SECRET", &origin_secret)?;
        let refresh_key = RefreshKey::derive(refresh_secret.as_bytes());
        let ticket_secret = vars.secret_or("QUEUE_TICKET_SECRET", &origin_secret)?;
        let ticket_key = ticket::derive_key(ticket_secret.as_bytes());
        let payment_window = payment_window(&vars)?;
        let jwks = JwksSettings::from_vars(|name| vars.get(name))?;
        Ok(Self {
            policy: Policy {
                keys,
                issuer: vars.get("JWT_ISSUER"),
                audience: vars.get("JWT_AUDIENCE"),
                leeway_secs: vars.number("JWT_LEEWAY_SECONDS", 0, |s| (0..=300).contains(s))?,
            },
            jwks,
            signing_kid,
            access_ttl_secs: vars.number("ACCESS_TOKEN_TTL_SECONDS", 1800, |s| *s > 0)?,
            refresh_ttl_secs: vars.number("REFRESH_TOKEN_TTL_SECONDS", 1_209_600, |s| *s > 0)?,
            refresh_key,
            refresh_limit: rate("REFRESH_RATE_LIMIT_FAMILY", "10/1m")?,
            denylist_fail_mode,
            rate_limits,
            queue_admit_limit: vars.number("QUEUE_ADMIT_LIMIT", 100, |_| true)?,
            queue_pass_ttl_secs: vars.number("QUEUE_PASS_TTL_SECONDS", 600, |s| *s > 0)?,
            queue_draw_batch: vars
                .number("QUEUE_DRAW_BATCH", 10_000, |n| (1..=100_000).contains(n))?,
            gated_events: rules::pass::gated_events(&vars.get("GATED_EVENTS").unwrap_or_default()),
            global_shards: vars.number("RATE_LIMIT_GLOBAL_SHARDS", 1, |n| (1..=64).contains(n))?,
            login_limits: LoginLimits {
                user: rate("LOGIN_RATE_LIMIT_USER", DEFAULT_USER_RATE)?,
                client: rate("LOGIN_RATE_LIMIT_CLIENT", DEFAULT_CLIENT_RATE)?,
            },
            origin_url: origin_url.trim_end_matches('/').to_owned(),
            origin_secret: origin_secret.into_bytes(),
            ticket_key,
            origin_timeout_ms: vars.number(
                "ORIGIN_TIMEOUT_MS",
                DEFAULT_ORIGIN_TIMEOUT_MS,
                |ms| *ms > 0,
            )?,
            payment_window,
        })
    }
}

/// `PAYMENT_WINDOW_URL` and the `PAYMENT_CLIENT_KEY` it needs, or neither.
fn payment_window<F: Fn(&str) -> Option<String>>(
    vars: &Vars<'_, F>,
) -> Result<Option<PaymentWindow>, ConfigError> {
    let Some(url) = vars.get("PAYMENT_WINDOW_URL") else {
        return Ok(None);
    };
    // The page carries it in an attribute and appends the order as query parameters.
    let plain = !url.contains(['"', '<', '>', '#', '\\', ' ']);
    if !private_link(&url) || !plain {
        return Err(invalid(
            "PAYMENT_WINDOW_URL",
            "must be an https:// URL, or http:// to a loopback host, without a fragment",
        ));
    }
    let client_key = vars.required("PAYMENT_CLIENT_KEY")?;
    let shaped = ["test_ck_", "live_ck_", "test_gck_", "live_gck_"]
        .iter()
        .find_map(|prefix| client_key.strip_prefix(prefix))
        .is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
    if !shaped {
        return Err(invalid(
            "PAYMENT_CLIENT_KEY",
            "must be a Toss client key: test_ck_… or live_ck_… (test_gck_…, live_gck_…)",
        ));
    }
    Ok(Some(PaymentWindow { url, client_key }))
}

fn invalid(name: &'static str, problem: impl ToString) -> ConfigError {
    ConfigError {
        name,
        problem: problem.to_string(),
    }
}

struct Vars<'a, F: Fn(&str) -> Option<String>>(&'a F);

impl<F: Fn(&str) -> Option<String>> Vars<'_, F> {
    /// A variable, trimmed; unset and empty are the same.
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    fn required(&self, name: &'static str) -> Result<String, ConfigError> {
        self.get(name).ok_or_else(|| invalid(name, "is not set"))
    }

    /// An optional secret of at least [`MIN_SECRET_LEN`] characters, or `fallback` when
    /// it is unset.
    fn secret_or(&self, name: &'static str, fallback: &str) -> Result<String, ConfigError> {
        match self.get(name) {
            Some(secret) if secret.len() < MIN_SECRET_LEN => {
                Err(invalid(name, "must be at least 32 characters"))
            }
            Some(secret) => Ok(secret),
            None => Ok(fallback.to_owned()),
        }
    }

    /// A number within `valid`, or `default` when unset.
    fn number<T: FromStr + Copy + std::fmt::Display>(
        &self,
        name: &'static str,
        default: T,
        valid: impl Fn(&T) -> bool,
    ) -> Result<T, ConfigError> {
        let Some(text) = self.get(name) else {
            return Ok(default);
        };
        text.parse::<T>()
            .ok()
            .filter(|value| valid(value))
            .ok_or_else(|| invalid(name, format!("`{text}` is out of range or not a number")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &str = r#"[{"kty":"oct","alg":"HS256","kid":"k1","k":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"}]"#;
    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn config(extra: &[(&str, &str)]) -> Result<EdgeConfig, ConfigError> {
        let base = [
            ("JWT_KEYS", KEYS),
            ("JWT_SIGNING_KID", "k1"),
            ("ORIGIN_SIGNING_SECRET", SECRET),
        ];
        EdgeConfig::from_lookup(|name| {
            let found = extra.iter().chain(base.iter()).find(|(n, _)| *n == name);
            found.map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn defaults_follow_the_contract() {
        let config = config(&[]).unwrap();
        assert_eq!(config.access_ttl_secs, 1800);
        assert_eq!(config.refresh_ttl_secs, 14 * 24 * 3600);
        assert_eq!(config.denylist_fail_mode, DenylistFailMode::Open);
        assert_eq!(config.policy.leeway_secs, 0);
        assert_eq!(config.policy.issuer, None);
        assert_eq!(config.origin_url, DEFAULT_ORIGIN_URL);
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let cases = [
            ("JWT_SIGNING_KID", "k2"),
            ("JWT_KEYS", "[]"),
            ("DENYLIST_FAIL_MODE", "sometimes"),
            ("JWT_LEEWAY_SECONDS", "-1"),
            ("ACCESS_TOKEN_TTL_SECONDS", "0"),
            ("ORIGIN_URL", "ftp://x"),
            ("ORIGIN_URL", "http://origin.example.com"),
            ("ORIGIN_SIGNING_SECRET", "short"),
            ("ORIGIN_TIMEOUT_MS", "soon"),
            ("RATE_LIMIT_USER", "5 per second"),
            ("RATE_LIMIT_GLOBAL", "100/1h"),
            ("RATE_LIMITED_ROUTES", "confirm"),
            ("RATE_LIMIT_GLOBAL_SHARDS", "0"),
            ("LOGIN_RATE_LIMIT_USER", "ten"),
            ("LOGIN_RATE_LIMIT_CLIENT", "60/1h"),
            ("REFRESH_TOKEN_SECRET", "short"),
            ("QUEUE_TICKET_SECRET", "short"),
            ("REFRESH_RATE_LIMIT_FAMILY", "1/1d"),
            ("PAYMENT_WINDOW_URL", "http://pay.example.com/window"),
            ("PAYMENT_WINDOW_URL", "https://pay.example.com/\"><script>"),
            ("JWT_JWKS_URL", "http://idp.example.com/jwks"),
        ];
        for (name, value) in cases {
            let err = config(&[(name, value)])
                .err()
                .unwrap_or_else(|| panic!("{name}={value}"));
            assert_eq!(err.name, name, "{err}");
        }
        assert_eq!(
            config(&[("DENYLIST_FAIL_MODE", "closed")])
                .unwrap()
                .denylist_fail_mode,
            DenylistFailMode::Closed
        );
    }

    #[test]
    fn the_payment_window_is_optional_and_needs_a_client_key() {
        assert_eq!(config(&[]).unwrap().payment_window, None);
        let url = ("PAYMENT_WINDOW_URL", "http://127.0.0.1:9/window");
        assert_eq!(
            config(&[url]).err().map(|e| e.name),
            Some("PAYMENT_CLIENT_KEY")
        );
        for bad in ["test_sk_abc", "test_ck_", "test_ck_a-b"] {
            let err = config(&[url, ("PAYMENT_CLIENT_KEY", bad)]).err();
            assert_eq!(err.map(|e| e.name), Some("PAYMENT_CLIENT_KEY"), "{bad}");
        }
        let window = config(&[url, ("PAYMENT_CLIENT_KEY", "test_ck_abc1")])
            .unwrap()
            .payment_window;
        assert_eq!(
            window,
            Some(PaymentWindow {
                url: "http://127.0.0.1:9/window".into(),
                client_key: "test_ck_abc1".into()
            })
        );
    }
}
