//! Configuration from the environment.
//!
//! Read once at start so a bad value stops the process immediately with the
//! variable's name, instead of surfacing later as a confusing runtime fault.

use std::ffi::OsString;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use reqwest::Url;

/// Address to listen on.
pub const LISTEN_VAR: &str = "GATEWAY_SIM_LISTEN";
const DEFAULT_LISTEN: &str = "127.0.0.1:8090";
/// The one secret key the simulator accepts in `Authorization: Basic`.
pub const SECRET_KEY_VAR: &str = "GATEWAY_SECRET_KEY";
/// Toss's public documentation test key, which works without an account: the
/// key a client configured from Toss's docs already sends.
pub const DEFAULT_SECRET_KEY: &str = "test_sk_zXLkKEypNArWmo50nX3lmeaxYG5R";
/// Where webhooks go; unset or empty: none are sent.
pub const WEBHOOK_URL_VAR: &str = "GATEWAY_WEBHOOK_URL";

/// Toss's secret-key flavours: `sk` and the widget's `gsk`, test and live.
const TEST_PREFIXES: [&str; 2] = ["test_sk_", "test_gsk_"];
const LIVE_PREFIXES: [&str; 2] = ["live_sk_", "live_gsk_"];

/// The pauses between webhook attempts, Toss's schedule (1, 4, 16, 64, 256,
/// 1024 and 4096 minutes) with a minute scaled down to 500 ms: seven retries,
/// the last about 45 minutes after the first attempt.
pub const WEBHOOK_RETRY_PAUSES: [Duration; 7] = [
    Duration::from_millis(500),
    Duration::from_secs(2),
    Duration::from_secs(8),
    Duration::from_secs(32),
    Duration::from_secs(128),
    Duration::from_secs(512),
    Duration::from_secs(2048),
];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{var} is not valid UTF-8")]
    NotUnicode { var: &'static str },
    #[error("{var}={value:?} is not a socket address (expected e.g. {DEFAULT_LISTEN})")]
    BadAddress { var: &'static str, value: String },
    #[error(
        "{var}={value:?} is not an http:// URL (the simulator sends webhooks over plain HTTP, \
         e.g. http://127.0.0.1:8080/gateway/webhook)"
    )]
    BadUrl { var: &'static str, value: String },
    #[error(
        "{var} is not a Toss secret key: expected one starting test_sk_, live_sk_, test_gsk_ \
         or live_gsk_ (unset: Toss's documentation test key)"
    )]
    BadSecretKey { var: &'static str },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    pub secret_key: SecretKey,
    /// `None`: no webhook URL, so no webhooks.
    pub webhooks: Option<WebhookConfig>,
}

/// The secret key callers must name; never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey {
    key: String,
    test: bool,
}

impl SecretKey {
    /// A key with one of Toss's secret-key prefixes.
    pub fn new(key: &str) -> Result<Self, ConfigError> {
        let has = |prefixes: [&str; 2]| {
            prefixes
                .iter()
                .any(|prefix| key.len() > prefix.len() && key.starts_with(prefix))
        };
        let test = has(TEST_PREFIXES);
        if !test && !has(LIVE_PREFIXES) {
            return Err(ConfigError::BadSecretKey {
                var: SECRET_KEY_VAR,
            });
        }
        Ok(Self {
            key: key.to_owned(),
            test,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// A test key: `TossPayments-Test-Code` is honoured, as Toss's sandbox
    /// does; with a live key it is ignored.
    pub fn is_test(&self) -> bool {
        self.test
    }
}

impl Default for SecretKey {
    fn default() -> Self {
        Self {
            key: DEFAULT_SECRET_KEY.to_owned(),
            test: true,
        }
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.test { "test" } else { "live" };
        write!(f, "SecretKey({kind}, <redacted>)")
    }
}

/// Where webhooks go and how often a failed one is tried again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    pub url: Url,
    /// One pause per retry; [`WEBHOOK_RETRY_PAUSES`] unless a test shortens
    /// them.
    pub retry_pauses: Vec<Duration>,
}

impl WebhookConfig {
    /// An `http://` URL, retried on [`WEBHOOK_RETRY_PAUSES`].
    pub fn new(url: &str) -> Result<Self, ConfigError> {
        let bad_url = || ConfigError::BadUrl {
            var: WEBHOOK_URL_VAR,
            value: url.to_owned(),
        };
        let parsed = Url::parse(url).map_err(|_| bad_url())?;
        if parsed.scheme() != "http" || !parsed.has_host() {
            return Err(bad_url());
        }
        Ok(Self {
            url: parsed,
            retry_pauses: WEBHOOK_RETRY_PAUSES.to_vec(),
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
        let secret_key = match non_empty(SECRET_KEY_VAR)? {
            Some(key) => SecretKey::new(&key)?,
            None => SecretKey::default(),
        };
        let webhooks = non_empty(WEBHOOK_URL_VAR)?
            .map(|url| WebhookConfig::new(&url))
            .transpose()?;
        Ok(Self {
            listen,
            secret_key,
            webhooks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_lookup(|var| {
            assert!(
                [LISTEN_VAR, SECRET_KEY_VAR, WEBHOOK_URL_VAR].contains(&var),
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
    fn secret_key_defaults_to_the_toss_docs_test_key() {
        for vars in [vec![], vec![(SECRET_KEY_VAR, "")]] {
            let key = config_with(&vars).expect("valid").secret_key;
            assert_eq!(key.as_str(), DEFAULT_SECRET_KEY);
            assert!(key.is_test());
        }
    }

    #[test]
    fn secret_keys_of_every_toss_flavour_are_accepted() {
        for (key, test) in [
            ("test_sk_abc", true),
            ("test_gsk_docs_OaPz8L5KdmQXkzRz3y47BMw6", true),
            ("live_sk_abc", false),
            ("live_gsk_abc", false),
        ] {
            let parsed = config_with(&[(SECRET_KEY_VAR, key)])
                .expect("valid")
                .secret_key;
            assert_eq!((parsed.as_str(), parsed.is_test()), (key, test));
        }
    }

    #[test]
    fn other_secret_keys_are_refused_naming_the_variable() {
        for key in [
            "test_ck_abc",
            "sk_test_abc",
            "test_sk_",
            "TEST_SK_abc",
            "secret",
        ] {
            let err = config_with(&[(SECRET_KEY_VAR, key)]).expect_err("not a secret key");
            assert_eq!(
                err,
                ConfigError::BadSecretKey {
                    var: SECRET_KEY_VAR
                }
            );
            assert!(err.to_string().contains(SECRET_KEY_VAR), "{err}");
        }
    }

    #[test]
    fn the_secret_key_is_not_printed() {
        let config = config_with(&[]).expect("valid");
        assert!(!format!("{config:?}").contains(DEFAULT_SECRET_KEY));
    }

    #[test]
    fn webhooks_are_off_without_a_url() {
        assert_eq!(config_with(&[]).expect("valid").webhooks, None);
        let config = config_with(&[(WEBHOOK_URL_VAR, "")]).expect("valid");
        assert_eq!(config.webhooks, None, "empty is unset");
    }

    #[test]
    fn a_webhook_url_turns_webhooks_on_with_the_scaled_toss_schedule() {
        let url = "http://127.0.0.1:8080/gateway/webhook";
        let webhooks = config_with(&[(WEBHOOK_URL_VAR, url)])
            .expect("valid")
            .webhooks
            .expect("webhooks on");
        assert_eq!(webhooks.url.as_str(), url);
        assert_eq!(webhooks.retry_pauses, WEBHOOK_RETRY_PAUSES);
        let minutes = [1, 4, 16, 64, 256, 1024, 4096];
        for (pause, minutes) in webhooks.retry_pauses.iter().zip(minutes) {
            assert_eq!(*pause, Duration::from_millis(500) * minutes);
        }
    }

    #[test]
    fn webhook_url_must_be_plain_http() {
        for url in [
            "127.0.0.1:8080/cb",
            "https://origin.example/cb",
            "ftp://origin.example/cb",
            "not a url",
        ] {
            let err = config_with(&[(WEBHOOK_URL_VAR, url)]).expect_err("not an http URL");
            assert!(err.to_string().contains(WEBHOOK_URL_VAR), "{url}: {err}");
        }
    }
}
