//! The origin's configuration, read from the environment once at start into typed
//! values. A bad value is an error that names the variable and what was expected.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use rules::rate_limit::parse_rate;

use rules::sliding_window::Rate;

use crate::crypto::{FieldCipher, KeyConfigError};
use crate::gateway::GatewayConfig;
use crate::guard::GuardConfig;
use crate::policy::breaker::BreakerConfig;
use crate::policy::concurrency::LimitMode;
use crate::policy::limiter::LimiterConfig;
use crate::policy::recovery::RecoveryConfig;
use crate::setting::whole_number;
use crate::store::Backend;

const MIN_SECRET_LEN: usize = 32;

/// The most PG calls a concurrency limit may let out at once: far past any PG's merchant
/// rate, so a typo cannot make the limit unbounded in effect.
const MAX_CONCURRENCY: u32 = 10_000;

/// Holds secrets and the database password: deliberately not `Debug`, so it cannot be
/// logged whole.
#[derive(Clone)]
pub struct OriginConfig {
    /// `ORIGIN_LISTEN`: the API listener.
    pub listen: SocketAddr,
    /// `ORIGIN_METRICS_LISTEN`: health and metrics, apart from the API.
    pub metrics_listen: SocketAddr,
    /// `ORIGIN_ADMIN_LISTEN`: the operator routes' own listener.
    pub admin_listen: SocketAddr,
    /// `DATABASE_URL`: `sqlite:…`, or `postgres://…` / `postgresql://…` for a database
    /// shared by several instances. Holds a password: never log it as it is.
    pub database_url: String,
    /// `EDGE_SIGNING_SECRET`: the HMAC key shared with the edge.
    pub edge_secret: Vec<u8>,
    /// The PG: `GATEWAY_PROVIDER`, `GATEWAY_URL`, `GATEWAY_SECRET_KEY`,
    /// `GATEWAY_WEBHOOK_SECRET`, `GATEWAY_CURRENCY`.
    pub gateway: GatewayConfig,
    /// `GATEWAY_WEBHOOK_LOOKUP_RATE`: look-ups the PG's webhooks may cause, at most.
    pub webhook_lookup_rate: Rate,
    /// The PG guard: `GATEWAY_TIMEOUT_MS`, `BULKHEAD_MAX_CONCURRENT`, `BREAKER_*`,
    /// `LIMITER`, `LIMITER_RATE`.
    pub guard: GuardConfig,
    /// `DB_ACQUIRE_TIMEOUT_MS`: the longest wait for a database connection — on SQLite,
    /// for a write, the writer's turn — before a request is answered 503 `BUSY`.
    pub db_acquire_timeout: Duration,
    /// `ORIGIN_MAX_CONCURRENT_REQUESTS`: API requests handled at once; the excess is
    /// answered 503 `BUSY` at once.
    pub max_concurrent_requests: u32,
    /// `ORIGIN_MAX_CONCURRENT_LOGINS`: credential checks handled (hashing or waiting to
    /// hash) at once, apart from the requests above, so a login flood never takes a
    /// confirm's slot; the excess is answered 503 `BUSY` at once.
    pub max_concurrent_logins: u32,
    /// `OPERATOR_TOKEN`: the bearer token of the operator routes; unset disables them.
    pub operator_token: Option<String>,
    /// `ENCRYPTION_KEKS`, `ENCRYPTION_CURRENT_KEK`: the KEKs the sensitive columns are
    /// sealed under.
    pub cipher: FieldCipher,
    /// `RECOVERY_INTERVAL_MS`, `RECOVERY_MIN_AGE_MS`, `RECOVERY_MAX_AGE_MS`; the
    /// NOT_FOUND spacing follows `GATEWAY_TIMEOUT_MS`.
    pub recovery: RecoveryConfig,
    /// `GATED_EVENTS`: the events the edge gates with no room stored here, by the same
    /// name and reading as the edge's (`rules::pass::gated_events`); their confirms need
    /// the edge's pass here too.
    pub gated_events: HashSet<String>,
    /// `MERCHANT_WEBHOOK_URL`, `MERCHANT_WEBHOOK_SECRET` and how deliveries go; `None`
    /// when no URL is set (the events are kept for the pull API).
    pub merchant_webhooks: Option<crate::outbox::config::MerchantWebhooks>,
    /// `IDEMPOTENCY_LEASE_MS`: how long a confirm in flight keeps its Idempotency-Key
    /// from a duplicate; longer than `GATEWAY_TIMEOUT_MS` (unset: a minute, or twice
    /// the PG timeout where that is longer).
    pub idempotency_lease: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{name}: {problem}")]
    Invalid { name: &'static str, problem: String },
    /// `ENCRYPTION_KEKS` or `ENCRYPTION_CURRENT_KEK`; the message names which.
    #[error(transparent)]
    Keys(#[from] KeyConfigError),
}

impl OriginConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads configuration through `lookup`, so tests need not touch the environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let address = |name: &'static str, default: &str| {
            let value = get(name).unwrap_or_else(|| default.to_owned());
            value
                .parse::<SocketAddr>()
                .map_err(|_| ConfigError::Invalid {
                    name,
                    problem: format!("`{value}` is not an address such as 127.0.0.1:8080"),
                })
        };
        let database_url = database_url(&lookup)?;
        let edge_secret = get("EDGE_SIGNING_SECRET").ok_or(ConfigError::Invalid {
            name: "EDGE_SIGNING_SECRET",
            problem: "is not set (the HMAC key shared with the edge)".into(),
        })?;
        if edge_secret.len() < MIN_SECRET_LEN {
            return Err(ConfigError::Invalid {
                name: "EDGE_SIGNING_SECRET",
                problem: format!("must be at least {MIN_SECRET_LEN} characters"),
            });
        }
        let gateway = GatewayConfig::from_lookup(get)
            .map_err(|(name, problem)| ConfigError::Invalid { name, problem })?;
        let webhook_lookup_rate =
            parse_rate(&get("GATEWAY_WEBHOOK_LOOKUP_RATE").unwrap_or_else(|| "20/1s".into()))
                .map_err(|problem| ConfigError::Invalid {
                    name: "GATEWAY_WEBHOOK_LOOKUP_RATE",
                    problem,
                })?;
        let operator_token = get("OPERATOR_TOKEN");
        if operator_token
            .as_ref()
            .is_some_and(|token| token.len() < MIN_SECRET_LEN)
        {
            return Err(ConfigError::Invalid {
                name: "OPERATOR_TOKEN",
                problem: format!("must be at least {MIN_SECRET_LEN} characters"),
            });
        }
        let number = |name: &'static str, default: u64, min: u64, max: u64| {
            whole_number(get(name), name, default, min..=max)
                .map_err(|(name, problem)| ConfigError::Invalid { name, problem })
        };
        let millis = |name: &'static str, default: u64, min: u64| {
            number(name, default, min, 24 * 3_600_000).map(Duration::from_millis)
        };
        let small = |name: &'static str, default: u32, min: u32, max: u32| {
            number(name, default.into(), min.into(), max.into()).map(|n| n as u32)
        };
        let percent =
            |name: &'static str, default: u8| number(name, default.into(), 1, 100).map(|n| n as u8);
        let breaker_enabled = flag(get("BREAKER_ENABLED"), "BREAKER_ENABLED", true)?;
        let defaults = BreakerConfig::default();
        let breaker = BreakerConfig {
            window: small("BREAKER_WINDOW", defaults.window, 1, 10_000)?,
            min_calls: small("BREAKER_MIN_CALLS", defaults.min_calls, 1, 10_000)?,
            failure_rate: percent("BREAKER_FAILURE_RATE", defaults.failure_rate)?,
            slow_call_ms: millis("BREAKER_SLOW_CALL_MS", defaults.slow_call_ms, 1)?.as_millis()
                as u64,
            slow_call_rate: percent("BREAKER_SLOW_CALL_RATE", defaults.slow_call_rate)?,
            open_ms: millis("BREAKER_OPEN_MS", defaults.open_ms, 0)?.as_millis() as u64,
            half_open_calls: small(
                "BREAKER_HALF_OPEN_CALLS",
                defaults.half_open_calls,
                1,
                1_000,
            )?,
        };
        if breaker.min_calls > breaker.window {
            return Err(ConfigError::Invalid {
                name: "BREAKER_MIN_CALLS",
                problem: format!(
                    "{} is more than BREAKER_WINDOW ({}), so the breaker could never open",
                    breaker.min_calls, breaker.window
                ),
            });
        }
        let floor = small("GATEWAY_CONCURRENCY_MIN", 2, 1, MAX_CONCURRENCY)?;
        let ceiling = small("GATEWAY_CONCURRENCY_MAX", 50, 1, MAX_CONCURRENCY)?;
        if ceiling < floor {
            return Err(ConfigError::Invalid {
                name: "GATEWAY_CONCURRENCY_MAX",
                problem: format!("{ceiling} is below GATEWAY_CONCURRENCY_MIN ({floor})"),
            });
        }
        let guard = GuardConfig {
            timeout: millis("GATEWAY_TIMEOUT_MS", 3_000, 1)?,
            bulkhead: small("BULKHEAD_MAX_CONCURRENT", 50, 0, 100_000)?,
            breaker: breaker_enabled.then_some(breaker),
            concurrency: concurrency(get("GATEWAY_CONCURRENCY"), floor, ceiling)?,
            max_wait: Duration::from_millis(number(
                "GATEWAY_CONCURRENCY_MAX_WAIT_MS",
                2_000,
                0,
                60_000,
            )?),
            limiter: limiter(get("LIMITER"), get("LIMITER_RATE"))?,
        };
        // Unset, a minute, or twice the PG timeout where that is longer.
        let idempotency_lease = millis(
            "IDEMPOTENCY_LEASE_MS",
            crate::idempotency::DEFAULT_LEASE
                .max(guard.timeout * 2)
                .as_millis() as u64,
            1,
        )?;
        if idempotency_lease <= guard.timeout {
            return Err(ConfigError::Invalid {
                name: "IDEMPOTENCY_LEASE_MS",
                problem: format!(
                    "{} ms is not longer than GATEWAY_TIMEOUT_MS ({} ms): a confirm still \
                     waiting for the PG would let its duplicate in",
                    idempotency_lease.as_millis(),
                    guard.timeout.as_millis()
                ),
            });
        }
        let recovery_interval = millis("RECOVERY_INTERVAL_MS", 30_000, 100)?;
        let merchant_webhooks = crate::outbox::config::MerchantWebhooks::from_lookup(get)
            .map_err(|(name, problem)| ConfigError::Invalid { name, problem })?;
        Ok(Self {
            merchant_webhooks,
            idempotency_lease,
            cipher: FieldCipher::from_env(&lookup)?,
            gated_events: rules::pass::gated_events(&get("GATED_EVENTS").unwrap_or_default()),
            listen: address("ORIGIN_LISTEN", "127.0.0.1:8080")?,
            metrics_listen: address("ORIGIN_METRICS_LISTEN", "127.0.0.1:9090")?,
            admin_listen: address("ORIGIN_ADMIN_LISTEN", "127.0.0.1:8081")?,
            database_url,
            edge_secret: edge_secret.into_bytes(),
            gateway,
            webhook_lookup_rate,
            guard,
            db_acquire_timeout: millis("DB_ACQUIRE_TIMEOUT_MS", 3_000, 1)?,
            max_concurrent_requests: small("ORIGIN_MAX_CONCURRENT_REQUESTS", 256, 1, 100_000)?,
            max_concurrent_logins: small("ORIGIN_MAX_CONCURRENT_LOGINS", 64, 1, 100_000)?,
            operator_token,
            recovery: RecoveryConfig {
                interval: recovery_interval,
                // Half an interval: an answer in the first half of a cycle is due again
                // by the next cycle's start (asked then), then less and less often;
                // never first waiting longer than the 30 s between cycles by default.
                backoff_base_ms: (recovery_interval / 2)
                    .min(Duration::from_secs(30))
                    .as_millis() as i64,
                min_age_ms: millis("RECOVERY_MIN_AGE_MS", 30_000, 0)?.as_millis() as i64,
                max_age_ms: number(
                    "RECOVERY_MAX_AGE_MS",
                    24 * 3_600_000,
                    1,
                    90 * 24 * 3_600_000,
                )? as i64,
                ..RecoveryConfig::for_gateway_timeout(guard.timeout)
            },
        })
    }
}

fn flag(value: Option<String>, name: &'static str, default: bool) -> Result<bool, ConfigError> {
    match value.map(|v| v.to_ascii_lowercase()).as_deref() {
        None => Ok(default),
        Some("true" | "1" | "on") => Ok(true),
        Some("false" | "0" | "off") => Ok(false),
        Some(other) => Err(ConfigError::Invalid {
            name,
            problem: format!("`{other}` is not true or false"),
        }),
    }
}

/// `GATEWAY_CONCURRENCY`: `adaptive` (the default, between `floor` and `ceiling`),
/// `fixed:N` or `off`.
fn concurrency(value: Option<String>, floor: u32, ceiling: u32) -> Result<LimitMode, ConfigError> {
    let value = value.map(|v| v.trim().to_ascii_lowercase());
    let fixed = |n: &str| {
        n.parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_CONCURRENCY).contains(n))
    };
    match value.as_deref() {
        None | Some("adaptive") => Ok(LimitMode::Adaptive { floor, ceiling }),
        Some("off") => Ok(LimitMode::Off),
        Some(other) => match other.strip_prefix("fixed:").map(fixed) {
            Some(Some(n)) => Ok(LimitMode::Fixed(n)),
            _ => Err(ConfigError::Invalid {
                name: "GATEWAY_CONCURRENCY",
                problem: format!(
                    "`{other}` is not adaptive, off, or fixed:N with N from 1 to {MAX_CONCURRENCY}"
                ),
            }),
        },
    }
}

/// `LIMITER` (`off`, `token-bucket`, `sliding-window`) with `LIMITER_RATE` (`50/1s`).
fn limiter(kind: Option<String>, rate: Option<String>) -> Result<LimiterConfig, ConfigError> {
    let rate = rate.unwrap_or_else(|| "50/1s".into());
    let parsed = parse_rate(&rate).map_err(|problem| ConfigError::Invalid {
        name: "LIMITER_RATE",
        problem,
    });
    match kind.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("off") => Ok(LimiterConfig::Off),
        Some("token-bucket") => Ok(LimiterConfig::TokenBucket(parsed?)),
        Some("sliding-window") => Ok(LimiterConfig::SlidingWindow(parsed?)),
        Some(other) => Err(ConfigError::Invalid {
            name: "LIMITER",
            problem: format!("`{other}` is not off, token-bucket or sliding-window"),
        }),
    }
}

/// `DATABASE_URL`, the one setting every `origin` command needs.
pub fn database_url(lookup: impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let url = lookup("DATABASE_URL")
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "sqlite://data/origin.sqlite3".into());
    if Backend::of(&url).is_none() {
        return Err(ConfigError::Invalid {
            name: "DATABASE_URL",
            problem: "must be a sqlite:, postgres:// or postgresql:// URL".into(),
        });
    }
    Ok(url)
}

#[cfg(test)]
mod tests;
