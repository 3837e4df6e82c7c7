//! Configuration from the environment.
//!
//! Read once at start so a bad value stops the process immediately with the
//! variable's name, instead of surfacing later as a confusing runtime fault.

use std::ffi::OsString;
use std::net::SocketAddr;

/// Address to listen on.
pub const LISTEN_VAR: &str = "GATEWAY_SIM_LISTEN";
const DEFAULT_LISTEN: &str = "127.0.0.1:8090";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{var} is not valid UTF-8")]
    NotUnicode { var: &'static str },
    #[error("{var}={value:?} is not a socket address (expected e.g. {DEFAULT_LISTEN})")]
    BadAddress { var: &'static str, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|var| std::env::var_os(var))
    }

    /// Builds the config from any variable lookup, so parsing is testable
    /// without mutating the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Self, ConfigError> {
        let listen = match lookup(LISTEN_VAR) {
            None => DEFAULT_LISTEN.to_owned(),
            Some(raw) => raw
                .into_string()
                .map_err(|_| ConfigError::NotUnicode { var: LISTEN_VAR })?,
        };
        let listen = listen.parse().map_err(|_| ConfigError::BadAddress {
            var: LISTEN_VAR,
            value: listen.clone(),
        })?;
        Ok(Self { listen })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with(listen: Option<&str>) -> Result<Config, ConfigError> {
        Config::from_lookup(|var| {
            assert_eq!(var, LISTEN_VAR);
            listen.map(OsString::from)
        })
    }

    #[test]
    fn listen_defaults_to_localhost_8090() {
        let config = config_with(None).expect("default parses");
        assert_eq!(config.listen, "127.0.0.1:8090".parse().expect("literal"));
    }

    #[test]
    fn listen_accepts_an_explicit_address() {
        let config = config_with(Some("0.0.0.0:9000")).expect("valid address");
        assert_eq!(config.listen, "0.0.0.0:9000".parse().expect("literal"));
    }

    #[test]
    fn bad_listen_value_names_the_variable() {
        let err = config_with(Some("localhost")).expect_err("not a socket address");
        assert!(err.to_string().contains(LISTEN_VAR), "{err}");
    }
}
