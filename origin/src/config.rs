//! The origin's configuration, read from the environment once at start into typed
//! values. A bad value is an error that names the variable and what was expected.

use std::net::SocketAddr;
use std::time::Duration;

const MIN_SECRET_LEN: usize = 32;

#[derive(Debug, Clone)]
pub struct OriginConfig {
    /// `ORIGIN_LISTEN`: the API listener.
    pub listen: SocketAddr,
    /// `ORIGIN_METRICS_LISTEN`: health and metrics, apart from the API.
    pub metrics_listen: SocketAddr,
    /// `DATABASE_URL`: `sqlite://…`.
    pub database_url: String,
    /// `EDGE_SIGNING_SECRET`: the HMAC key shared with the edge.
    pub edge_secret: Vec<u8>,
    /// `GATEWAY_URL`: the payment gateway's base URL.
    pub gateway_url: String,
    /// `GATEWAY_TIMEOUT_MS`: past it, an approval's outcome is unknown.
    pub gateway_timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
#[error("{name}: {problem}")]
pub struct ConfigError {
    name: &'static str,
    problem: String,
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
            value.parse::<SocketAddr>().map_err(|_| ConfigError {
                name,
                problem: format!("`{value}` is not an address such as 127.0.0.1:8080"),
            })
        };
        let database_url = database_url(&lookup)?;
        let edge_secret = get("EDGE_SIGNING_SECRET").ok_or(ConfigError {
            name: "EDGE_SIGNING_SECRET",
            problem: "is not set (the HMAC key shared with the edge)".into(),
        })?;
        if edge_secret.len() < MIN_SECRET_LEN {
            return Err(ConfigError {
                name: "EDGE_SIGNING_SECRET",
                problem: format!("must be at least {MIN_SECRET_LEN} characters"),
            });
        }
        let gateway_url = get("GATEWAY_URL").unwrap_or_else(|| "http://127.0.0.1:8090".into());
        if !(gateway_url.starts_with("http://") || gateway_url.starts_with("https://")) {
            return Err(ConfigError {
                name: "GATEWAY_URL",
                problem: "must be an http:// or https:// URL".into(),
            });
        }
        let timeout_ms = get("GATEWAY_TIMEOUT_MS").unwrap_or_else(|| "3000".into());
        let gateway_timeout = timeout_ms
            .parse::<u64>()
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
            .ok_or(ConfigError {
                name: "GATEWAY_TIMEOUT_MS",
                problem: format!("`{timeout_ms}` is not a positive number of milliseconds"),
            })?;
        Ok(Self {
            listen: address("ORIGIN_LISTEN", "127.0.0.1:8080")?,
            metrics_listen: address("ORIGIN_METRICS_LISTEN", "127.0.0.1:9090")?,
            database_url,
            edge_secret: edge_secret.into_bytes(),
            gateway_url,
            gateway_timeout,
        })
    }
}

/// `DATABASE_URL`, the one setting every `origin` command needs.
pub fn database_url(lookup: impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    let url = lookup("DATABASE_URL")
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "sqlite://data/origin.sqlite3".into());
    if !url.starts_with("sqlite:") {
        return Err(ConfigError {
            name: "DATABASE_URL",
            problem: "only sqlite:// databases are supported by this build".into(),
        });
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn config(vars: &[(&str, &str)]) -> Result<OriginConfig, ConfigError> {
        OriginConfig::from_lookup(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn defaults_follow_the_contract() {
        let config = config(&[("EDGE_SIGNING_SECRET", SECRET)]).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(config.metrics_listen.to_string(), "127.0.0.1:9090");
        assert_eq!(config.gateway_url, "http://127.0.0.1:8090");
        assert_eq!(config.gateway_timeout, Duration::from_secs(3));
        assert!(config.database_url.starts_with("sqlite://"));
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let cases: [&[(&str, &str)]; 5] = [
            &[],
            &[("EDGE_SIGNING_SECRET", "short")],
            &[
                ("EDGE_SIGNING_SECRET", SECRET),
                ("ORIGIN_LISTEN", "localhost"),
            ],
            &[("EDGE_SIGNING_SECRET", SECRET), ("GATEWAY_TIMEOUT_MS", "0")],
            &[
                ("EDGE_SIGNING_SECRET", SECRET),
                ("DATABASE_URL", "mysql://x"),
            ],
        ];
        let names = [
            "EDGE_SIGNING_SECRET",
            "EDGE_SIGNING_SECRET",
            "ORIGIN_LISTEN",
            "GATEWAY_TIMEOUT_MS",
            "DATABASE_URL",
        ];
        for (vars, name) in cases.iter().zip(names) {
            let err = config(vars).unwrap_err().to_string();
            assert!(err.starts_with(name), "{vars:?}: {err}");
        }
    }
}
