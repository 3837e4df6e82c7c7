//! The Worker's configuration (`wrangler.toml` `[vars]`, secrets, locally `.dev.vars`),
//! parsed into typed values. A bad value is an error naming the variable.

use rules::token::KeySet;
use worker::Env;

const DEFAULT_ORIGIN_URL: &str = "http://127.0.0.1:8080";
/// Longer than the origin's own bound on a confirm (gateway timeout 3 s, database 3 s).
const DEFAULT_ORIGIN_TIMEOUT_MS: u32 = 10_000;
const MIN_SECRET_LEN: usize = 32;

pub struct EdgeConfig {
    /// Keys access tokens may be signed with (`JWT_KEYS`).
    pub keys: KeySet,
    /// Base URL of the origin, without a trailing slash (`ORIGIN_URL`).
    pub origin_url: String,
    /// HMAC key shared with the origin (`ORIGIN_SIGNING_SECRET`).
    pub origin_secret: Vec<u8>,
    /// How long a call to the origin may take before the client gets 504 (`ORIGIN_TIMEOUT_MS`).
    pub origin_timeout_ms: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} is not set")]
    Missing(&'static str),
    #[error("{name}: {problem}")]
    Invalid { name: &'static str, problem: String },
}

impl EdgeConfig {
    pub fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let keys_json = read(env, "JWT_KEYS").ok_or(ConfigError::Missing("JWT_KEYS"))?;
        let keys = KeySet::from_jwks_json(&keys_json)
            .map_err(|err| invalid("JWT_KEYS", err.to_string()))?;
        let origin_url = read(env, "ORIGIN_URL").unwrap_or_else(|| DEFAULT_ORIGIN_URL.into());
        if !(origin_url.starts_with("http://") || origin_url.starts_with("https://")) {
            return Err(invalid(
                "ORIGIN_URL",
                "must be an http:// or https:// URL".into(),
            ));
        }
        let origin_secret = read(env, "ORIGIN_SIGNING_SECRET")
            .ok_or(ConfigError::Missing("ORIGIN_SIGNING_SECRET"))?;
        if origin_secret.len() < MIN_SECRET_LEN {
            return Err(invalid(
                "ORIGIN_SIGNING_SECRET",
                "must be at least 32 characters".into(),
            ));
        }
        let origin_timeout_ms = match read(env, "ORIGIN_TIMEOUT_MS") {
            None => DEFAULT_ORIGIN_TIMEOUT_MS,
            Some(text) => text.parse().ok().filter(|ms| *ms > 0).ok_or_else(|| {
                invalid(
                    "ORIGIN_TIMEOUT_MS",
                    format!("`{text}` is not a positive number of milliseconds"),
                )
            })?,
        };
        Ok(Self {
            keys,
            origin_timeout_ms,
            origin_url: origin_url.trim_end_matches('/').to_owned(),
            origin_secret: origin_secret.into_bytes(),
        })
    }
}

fn invalid(name: &'static str, problem: String) -> ConfigError {
    ConfigError::Invalid { name, problem }
}

/// A variable or secret, trimmed; unset and empty are the same.
fn read(env: &Env, name: &str) -> Option<String> {
    let value = env.var(name).ok()?.to_string();
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}
