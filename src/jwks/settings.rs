//! `JWT_JWKS_URL` and what goes with it, read once with the rest of the configuration
//! (`crate::config`): a bad value stops the edge at its first request, naming the
//! variable, rather than turning every token of the provider away one by one.

use worker::Url;

use crate::config::ConfigError;

/// The spacing of fetches for unknown kids, and of retries after a failed fetch, when
/// `JWT_JWKS_MIN_REFETCH_SECONDS` is unset.
const DEFAULT_MIN_REFETCH_SECONDS: i64 = 30;

/// Where the identity provider's key set is, and how often it may be fetched again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwksSettings {
    /// `JWT_JWKS_URL`: an https:// URL without credentials or a fragment.
    pub url: String,
    /// `JWT_JWKS_MIN_REFETCH_SECONDS` (30), in ms: at most one fetch for unknown kids in
    /// this long, and none this long after a failed fetch.
    pub min_refetch_ms: i64,
}

impl JwksSettings {
    /// The settings from the variables `get` finds (trimmed, unset when empty); `None`
    /// when `JWT_JWKS_URL` is unset: the edge's own tokens only.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        let Some(url) = get("JWT_JWKS_URL") else {
            return Ok(None);
        };
        let parsed = Url::parse(&url).ok();
        let sound = parsed.as_ref().is_some_and(|parsed| {
            parsed.scheme() == "https"
                && parsed.host_str().is_some_and(|host| !host.is_empty())
                && parsed.username().is_empty()
                && parsed.password().is_none()
                && parsed.fragment().is_none()
        });
        if !sound {
            return Err(invalid(
                "JWT_JWKS_URL",
                "must be an https:// URL without credentials or a fragment: the keys that \
                 decide who is signed in must come over an authenticated link",
            ));
        }
        for name in ["JWT_ISSUER", "JWT_AUDIENCE"] {
            if get(name).is_none() {
                return Err(invalid(
                    name,
                    "must be set when JWT_JWKS_URL is: an identity provider signs tokens \
                     for many applications with the same keys, so a token it signed must \
                     name this issuer and this audience",
                ));
            }
        }
        let name = "JWT_JWKS_MIN_REFETCH_SECONDS";
        let min_refetch_secs = match get(name) {
            None => DEFAULT_MIN_REFETCH_SECONDS,
            Some(text) => text
                .parse::<i64>()
                .ok()
                .filter(|secs| (1..=3600).contains(secs))
                .ok_or_else(|| {
                    invalid(
                        name,
                        format!("`{text}` is not a number of seconds from 1 to 3600"),
                    )
                })?,
        };
        Ok(Some(Self {
            url,
            min_refetch_ms: min_refetch_secs * 1000,
        }))
    }
}

fn invalid(name: &'static str, problem: impl ToString) -> ConfigError {
    ConfigError {
        name,
        problem: problem.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: (&str, &str) = ("JWT_JWKS_URL", "https://idp.example/.well-known/jwks.json");
    const ISSUER: (&str, &str) = ("JWT_ISSUER", "https://idp.example/");
    const AUDIENCE: (&str, &str) = ("JWT_AUDIENCE", "payments");

    fn settings(vars: &[(&str, &str)]) -> Result<Option<JwksSettings>, ConfigError> {
        JwksSettings::from_vars(|name| {
            let found = vars.iter().find(|(n, _)| *n == name);
            found.map(|(_, value)| (*value).to_owned())
        })
    }

    #[test]
    fn unset_means_the_edge_s_own_tokens_only() {
        assert_eq!(settings(&[ISSUER]).unwrap(), None);
    }

    #[test]
    fn an_https_url_with_issuer_and_audience_is_taken_with_30_seconds_between_refetches() {
        let taken = settings(&[URL, ISSUER, AUDIENCE]).unwrap().unwrap();
        assert_eq!(taken.url, URL.1);
        assert_eq!(taken.min_refetch_ms, 30_000);
        let quick = [URL, ISSUER, AUDIENCE, ("JWT_JWKS_MIN_REFETCH_SECONDS", "1")];
        assert_eq!(settings(&quick).unwrap().unwrap().min_refetch_ms, 1_000);
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let cases: [(&[(&str, &str)], &str); 9] = [
            (
                &[
                    ("JWT_JWKS_URL", "http://idp.example/jwks"),
                    ISSUER,
                    AUDIENCE,
                ],
                "JWT_JWKS_URL",
            ),
            (
                &[("JWT_JWKS_URL", "idp.example/jwks"), ISSUER, AUDIENCE],
                "JWT_JWKS_URL",
            ),
            (
                &[
                    ("JWT_JWKS_URL", "https://user:pw@idp.example/jwks"),
                    ISSUER,
                    AUDIENCE,
                ],
                "JWT_JWKS_URL",
            ),
            (
                &[
                    ("JWT_JWKS_URL", "https://idp.example/jwks#keys"),
                    ISSUER,
                    AUDIENCE,
                ],
                "JWT_JWKS_URL",
            ),
            (
                &[("JWT_JWKS_URL", "file:///etc/jwks.json"), ISSUER, AUDIENCE],
                "JWT_JWKS_URL",
            ),
            (&[URL, AUDIENCE], "JWT_ISSUER"),
            (&[URL, ISSUER], "JWT_AUDIENCE"),
            (
                &[URL, ISSUER, AUDIENCE, ("JWT_JWKS_MIN_REFETCH_SECONDS", "0")],
                "JWT_JWKS_MIN_REFETCH_SECONDS",
            ),
            (
                &[
                    URL,
                    ISSUER,
                    AUDIENCE,
                    ("JWT_JWKS_MIN_REFETCH_SECONDS", "soon"),
                ],
                "JWT_JWKS_MIN_REFETCH_SECONDS",
            ),
        ];
        for (vars, name) in cases {
            let err = settings(vars).err();
            assert_eq!(err.as_ref().map(|err| err.name), Some(name), "{vars:?}");
        }
    }

    #[test]
    fn the_message_says_what_was_expected() {
        let err = settings(&[("JWT_JWKS_URL", "http://idp.example/jwks")])
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("JWT_JWKS_URL: must be an https:// URL"),
            "{err}"
        );
    }
}
