//! Which PG, where, and with which keys: `GATEWAY_PROVIDER`, `GATEWAY_URL`,
//! `GATEWAY_SECRET_KEY`, `GATEWAY_WEBHOOK_SECRET`, `GATEWAY_CURRENCY`. A live key is
//! never sent over plain HTTP: the origin refuses to start with one on an `http://` URL.

use std::fmt;

/// The PGs the origin speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Toss,
    Stripe,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Toss => "toss",
            Self::Stripe => "stripe",
        }
    }

    fn default_url(self) -> &'static str {
        match self {
            Self::Toss => "https://api.tosspayments.com",
            Self::Stripe => "https://api.stripe.com",
        }
    }

    /// Whether `key` is a secret key of this PG, and a live one.
    fn key_kind(self, key: &str) -> Option<KeyKind> {
        let prefixes: &[(&str, KeyKind)] = match self {
            Self::Toss => &[
                ("test_sk_", KeyKind::Test),
                ("test_gsk_", KeyKind::Test),
                ("live_sk_", KeyKind::Live),
                ("live_gsk_", KeyKind::Live),
            ],
            Self::Stripe => &[("sk_test_", KeyKind::Test), ("sk_live_", KeyKind::Live)],
        };
        prefixes
            .iter()
            .find(|(prefix, _)| key.starts_with(prefix) && key.len() > prefix.len())
            .map(|&(_, kind)| kind)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Test,
    Live,
}

/// A secret that never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    pub provider: Provider,
    /// The PG's base URL, without a trailing slash.
    pub url: String,
    pub secret_key: Secret,
    pub key_kind: KeyKind,
    /// Stripe's webhook signing secret (`whsec_…`); Toss signs no payment webhook.
    pub webhook_secret: Option<Secret>,
    /// ISO 4217, upper case (`KRW`).
    pub currency: String,
}

impl GatewayConfig {
    /// From the variables `get` returns (trimmed, empty as unset); the error names the
    /// variable and says what was expected.
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, (&'static str, String)> {
        let provider = match get("GATEWAY_PROVIDER")
            .as_deref()
            .map(str::to_ascii_lowercase)
        {
            None => Provider::Toss,
            Some(name) if name == "toss" => Provider::Toss,
            Some(name) if name == "stripe" => Provider::Stripe,
            Some(other) => {
                return Err((
                    "GATEWAY_PROVIDER",
                    format!("`{other}` is not toss or stripe"),
                ))
            }
        };
        let url = get("GATEWAY_URL").unwrap_or_else(|| provider.default_url().to_owned());
        let url = url.trim_end_matches('/').to_owned();
        let https = url.starts_with("https://");
        let parsed = reqwest::Url::parse(&url).ok().filter(|parsed| {
            parsed.query().is_none()
                && parsed.fragment().is_none()
                && parsed.username().is_empty()
                && parsed.password().is_none()
        });
        if !(https || url.starts_with("http://")) || parsed.is_none() {
            return Err((
                "GATEWAY_URL",
                "must be an http:// or https:// base URL, without a query, fragment or user".into(),
            ));
        }
        let key = get("GATEWAY_SECRET_KEY").ok_or((
            "GATEWAY_SECRET_KEY",
            format!("is not set (the {} secret key)", provider.as_str()),
        ))?;
        let key_kind = provider.key_kind(&key).ok_or_else(|| {
            let expected = match provider {
                Provider::Toss => "test_sk_…, live_sk_… (or test_gsk_…, live_gsk_…)",
                Provider::Stripe => "sk_test_… or sk_live_…",
            };
            (
                "GATEWAY_SECRET_KEY",
                format!("is not a {} secret key ({expected})", provider.as_str()),
            )
        })?;
        if key_kind == KeyKind::Live && !https {
            return Err((
                "GATEWAY_SECRET_KEY",
                format!("is a live key, and GATEWAY_URL ({url}) is not https://"),
            ));
        }
        let webhook_secret = get("GATEWAY_WEBHOOK_SECRET");
        if let Some(secret) = &webhook_secret {
            if !secret.starts_with("whsec_") || secret.len() <= "whsec_".len() {
                return Err((
                    "GATEWAY_WEBHOOK_SECRET",
                    "is not a Stripe webhook signing secret (whsec_…)".into(),
                ));
            }
        }
        let currency = get("GATEWAY_CURRENCY").unwrap_or_else(|| "KRW".into());
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err((
                "GATEWAY_CURRENCY",
                format!("`{currency}` is not an ISO 4217 code such as KRW"),
            ));
        }
        Ok(Self {
            provider,
            url,
            secret_key: Secret(key),
            key_kind,
            webhook_secret: webhook_secret.map(Secret),
            currency: currency.to_ascii_uppercase(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<GatewayConfig, (&'static str, String)> {
        GatewayConfig::from_lookup(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn toss_is_the_default_and_each_provider_has_its_url() {
        let toss = config(&[("GATEWAY_SECRET_KEY", "test_sk_abc")]).unwrap();
        assert_eq!(toss.provider, Provider::Toss);
        assert_eq!(toss.url, "https://api.tosspayments.com");
        assert_eq!(toss.currency, "KRW");
        let stripe = config(&[
            ("GATEWAY_PROVIDER", "Stripe"),
            ("GATEWAY_SECRET_KEY", "sk_test_abc"),
            ("GATEWAY_URL", "http://127.0.0.1:8420/"),
        ])
        .unwrap();
        assert_eq!(stripe.provider, Provider::Stripe);
        assert_eq!(stripe.url, "http://127.0.0.1:8420");
        assert_eq!(stripe.key_kind, KeyKind::Test);
        assert_eq!(format!("{:?}", stripe.secret_key), "Secret(<redacted>)");
    }

    #[test]
    fn a_bad_setting_names_its_variable() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("GATEWAY_PROVIDER", "paypal")], "GATEWAY_PROVIDER"),
            (&[], "GATEWAY_SECRET_KEY"),
            (&[("GATEWAY_SECRET_KEY", "sk_test_x")], "GATEWAY_SECRET_KEY"),
            (
                &[
                    ("GATEWAY_PROVIDER", "stripe"),
                    ("GATEWAY_SECRET_KEY", "test_sk_x"),
                ],
                "GATEWAY_SECRET_KEY",
            ),
            (
                &[
                    ("GATEWAY_SECRET_KEY", "test_sk_x"),
                    ("GATEWAY_URL", "ftp://pg"),
                ],
                "GATEWAY_URL",
            ),
            (
                &[
                    ("GATEWAY_SECRET_KEY", "test_sk_x"),
                    ("GATEWAY_WEBHOOK_SECRET", "secret"),
                ],
                "GATEWAY_WEBHOOK_SECRET",
            ),
            (
                &[
                    ("GATEWAY_SECRET_KEY", "test_sk_x"),
                    ("GATEWAY_CURRENCY", "WON!"),
                ],
                "GATEWAY_CURRENCY",
            ),
        ];
        for (vars, named) in cases {
            assert_eq!(config(vars).unwrap_err().0, *named, "{vars:?}");
        }
    }

    #[test]
    fn a_live_key_is_never_sent_over_plain_http() {
        for (provider, key) in [
            ("toss", "live_sk_x"),
            ("toss", "live_gsk_x"),
            ("stripe", "sk_live_x"),
        ] {
            let refused = config(&[
                ("GATEWAY_PROVIDER", provider),
                ("GATEWAY_SECRET_KEY", key),
                ("GATEWAY_URL", "http://127.0.0.1:8090"),
            ])
            .unwrap_err();
            assert_eq!(refused.0, "GATEWAY_SECRET_KEY");
            assert!(refused.1.contains("live"), "{}", refused.1);
            let https = config(&[("GATEWAY_PROVIDER", provider), ("GATEWAY_SECRET_KEY", key)]);
            assert_eq!(https.unwrap().key_kind, KeyKind::Live);
        }
    }
}
