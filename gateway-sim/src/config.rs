//! Configuration from the environment.
//!
//! Read once at start so a bad value stops the process immediately with the
//! variable's name, instead of surfacing later as a confusing runtime fault.

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;

use reqwest::Url;
use rules::callback::MIN_SECRET_LEN;

/// Address to listen on.
pub const LISTEN_VAR: &str = "GATEWAY_SIM_LISTEN";
const DEFAULT_LISTEN: &str = "127.0.0.1:8090";
/// Where callbacks go; unset or empty: none are sent.
pub const CALLBACK_URL_VAR: &str = "GATEWAY_CALLBACK_URL";
/// The HMAC key callbacks are signed with; required with a callback URL.
pub const CALLBACK_SECRET_VAR: &str = "GATEWAY_CALLBACK_SECRET";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{var} is not valid UTF-8")]
    NotUnicode { var: &'static str },
    #[error("{var}={value:?} is not a socket address (expected e.g. {DEFAULT_LISTEN})")]
    BadAddress { var: &'static str, value: String },
    #[error(
        "{var}={value:?} is not an http:// URL (the simulator calls back over plain HTTP, \
         e.g. http://127.0.0.1:8080/gateway/callback)"
    )]
    BadUrl { var: &'static str, value: String },
    #[error("{var} must be set when {CALLBACK_URL_VAR} is: callbacks are signed")]
    MissingSecret { var: &'static str },
    #[error("{var} must be at least {MIN_SECRET_LEN} characters")]
    ShortSecret { var: &'static str },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    /// `None`: no callback URL, so no callbacks.
    pub callbacks: Option<CallbackConfig>,
}

/// Where callbacks go and what signs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackConfig {
    pub url: Url,
    pub secret: CallbackSecret,
}

/// The callback signing key; never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct CallbackSecret(Vec<u8>);

impl CallbackSecret {
    /// At least [`MIN_SECRET_LEN`] bytes.
    pub fn new(secret: &str) -> Result<Self, ConfigError> {
        if secret.len() < MIN_SECRET_LEN {
            return Err(ConfigError::ShortSecret {
                var: CALLBACK_SECRET_VAR,
            });
        }
        Ok(Self(secret.as_bytes().to_vec()))
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for CallbackSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallbackSecret(<redacted>)")
    }
}

impl CallbackConfig {
    /// An `http://` URL and a secret of at least [`MIN_SECRET_LEN`] bytes.
    pub fn new(url: &str, secret: &str) -> Result<Self, ConfigError> {
        let bad_url = || ConfigError::BadUrl {
            var: CALLBACK_URL_VAR,
            value: url.to_owned(),
        };
        let parsed = Url::parse(url).map_err(|_| bad_url())?;
        if parsed.scheme() != "http" || !parsed.has_host() {
            return Err(bad_url());
        }
        Ok(Self {
            url: parsed,
            secret: CallbackSecret::new(secret)?,
        })
    }
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|var| std::env::var_os(var))
    }

    /// Builds the config from any variable lookup, so parsing is testable
    /// without mutating the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Self, ConfigError> {
        let text = |var: &'static str| {
            lookup(var)
                .map(|raw| {
                    raw.into_string()
                        .map_err(|_| ConfigError::NotUnicode { var })
                })
                .transpose()
        };
        let listen = text(LISTEN_VAR)?.unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
        let listen = listen.parse().map_err(|_| ConfigError::BadAddress {
            var: LISTEN_VAR,
            value: listen.clone(),
        })?;

        // Empty counts as unset, so `VAR= make run` turns a setting off.
        let non_empty = |var| Ok(text(var)?.filter(|value: &String| !value.is_empty()));
        let secret = non_empty(CALLBACK_SECRET_VAR)?;
        // The secret is checked even without a URL: a short one is a mistake
        // whoever reads it (the origin shares it).
        if let Some(secret) = &secret {
            CallbackSecret::new(secret)?;
        }
        let callbacks = match non_empty(CALLBACK_URL_VAR)? {
            None => None,
            Some(url) => {
                let secret = secret.ok_or(ConfigError::MissingSecret {
                    var: CALLBACK_SECRET_VAR,
                })?;
                Some(CallbackConfig::new(&url, &secret)?)
            }
        };
        Ok(Self { listen, callbacks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn config_with(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_lookup(|var| {
            assert!(
                [LISTEN_VAR, CALLBACK_URL_VAR, CALLBACK_SECRET_VAR].contains(&var),
                "{var}"
            );
            vars.iter()
                .find(|(name, _)| *name == var)
                .map(|(_, value)| OsString::from(value))
        })
    }

    #[test]
    fn listen_defaults_to_localhost_8090() {
        let config = config_with(&[]).expect("default parses");
        assert_eq!(config.listen, "127.0.0.1:8090".parse().expect("literal"));
    }

    #[test]
    fn listen_accepts_an_explicit_address() {
        let config = config_with(&[(LISTEN_VAR, "0.0.0.0:9000")]).expect("valid address");
        assert_eq!(config.listen, "0.0.0.0:9000".parse().expect("literal"));
    }

    #[test]
    fn bad_listen_value_names_the_variable() {
        let err = config_with(&[(LISTEN_VAR, "localhost")]).expect_err("not a socket address");
        assert!(err.to_string().contains(LISTEN_VAR), "{err}");
    }

    #[test]
    fn callbacks_are_off_without_a_url() {
        assert_eq!(config_with(&[]).expect("valid").callbacks, None);
        let config =
            config_with(&[(CALLBACK_URL_VAR, ""), (CALLBACK_SECRET_VAR, SECRET)]).expect("valid");
        assert_eq!(config.callbacks, None, "empty is unset");
    }

    #[test]
    fn callback_url_with_a_secret_turns_callbacks_on() {
        let url = "http://127.0.0.1:8080/gateway/callback";
        let config =
            config_with(&[(CALLBACK_URL_VAR, url), (CALLBACK_SECRET_VAR, SECRET)]).expect("valid");
        let callbacks = config.callbacks.expect("callbacks on");
        assert_eq!(callbacks.url.as_str(), url);
        assert_eq!(callbacks.secret.as_bytes(), SECRET.as_bytes());
    }

    #[test]
    fn callback_url_without_a_secret_names_the_secret() {
        for secret in [None, Some("")] {
            let mut vars = vec![(CALLBACK_URL_VAR, "http://127.0.0.1:8080/cb")];
            vars.extend(secret.map(|secret| (CALLBACK_SECRET_VAR, secret)));
            let err = config_with(&vars).expect_err("a secret is required");
            assert_eq!(
                err,
                ConfigError::MissingSecret {
                    var: CALLBACK_SECRET_VAR
                }
            );
            assert!(err.to_string().contains(CALLBACK_SECRET_VAR), "{err}");
        }
    }

    #[test]
    fn short_secret_is_refused_with_or_without_a_url() {
        let short = &SECRET[1..];
        for vars in [
            vec![(CALLBACK_SECRET_VAR, short)],
            vec![
                (CALLBACK_URL_VAR, "http://127.0.0.1:8080/cb"),
                (CALLBACK_SECRET_VAR, short),
            ],
        ] {
            let err = config_with(&vars).expect_err("too short");
            assert!(err.to_string().contains(CALLBACK_SECRET_VAR), "{err}");
        }
    }

    #[test]
    fn callback_url_must_be_plain_http() {
        for url in [
            "127.0.0.1:8080/cb",
            "https://origin.example/cb",
            "ftp://origin.example/cb",
            "not a url",
        ] {
            let err = config_with(&[(CALLBACK_URL_VAR, url), (CALLBACK_SECRET_VAR, SECRET)])
                .expect_err("not an http URL");
            assert!(err.to_string().contains(CALLBACK_URL_VAR), "{url}: {err}");
        }
    }

    #[test]
    fn the_secret_is_not_printed() {
        let config = CallbackConfig::new("http://127.0.0.1:1/cb", SECRET).expect("valid");
        assert!(!format!("{config:?}").contains(SECRET));
    }
}
