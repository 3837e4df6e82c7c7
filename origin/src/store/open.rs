//! Opening the store a `DATABASE_URL` names: SQLite or PostgreSQL by its scheme, and the
//! URL without its password for every message that shows it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::postgres::PostgresStore;
use super::sqlite::SqliteStore;
use super::Store;
use crate::crypto::FieldCipher;

/// The database a `DATABASE_URL` names, by its scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite:…`
    Sqlite,
    /// `postgres://…` or `postgresql://…`
    Postgres,
}

impl Backend {
    pub fn of(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Self::Postgres)
        } else {
            None
        }
    }
}

/// Opens (and migrates) the store at `url`, SQLite or PostgreSQL by its scheme, sealing
/// and opening the sensitive columns with `cipher`. A request waits at most
/// `acquire_timeout` for a connection. Errors name the URL without its password.
pub async fn open(
    url: &str,
    acquire_timeout: Duration,
    cipher: FieldCipher,
) -> anyhow::Result<Arc<dyn Store>> {
    let shown = without_password(url);
    let store: Arc<dyn Store> = match Backend::of(url) {
        Some(Backend::Sqlite) => Arc::new(
            SqliteStore::open(url, acquire_timeout, cipher)
                .await
                .with_context(|| format!("DATABASE_URL: cannot open {shown}"))?,
        ),
        Some(Backend::Postgres) => Arc::new(
            PostgresStore::open(url, acquire_timeout, cipher)
                .await
                .with_context(|| format!("DATABASE_URL: cannot open {shown}"))?,
        ),
        None => anyhow::bail!("DATABASE_URL: {shown} is neither a sqlite: nor a postgres:// URL"),
    };
    Ok(store)
}

/// `url` with its password — in the user information or a `password=` parameter —
/// replaced by `***`, fit for logs and error messages.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let path = match path.split_once('?') {
        Some((path, query)) => {
            let parameters: Vec<&str> = query
                .split('&')
                .map(|parameter| match parameter.split_once('=') {
                    Some((name, _)) if name.eq_ignore_ascii_case("password") => "password=***",
                    _ => parameter,
                })
                .collect();
            format!("{path}?{}", parameters.join("&"))
        }
        None => path.to_owned(),
    };
    format!("{scheme}://{authority}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_chooses_the_backend() {
        assert_eq!(
            Backend::of("sqlite://data/origin.sqlite3"),
            Some(Backend::Sqlite)
        );
        assert_eq!(Backend::of("sqlite::memory:"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("postgres://db/origin"), Some(Backend::Postgres));
        assert_eq!(
            Backend::of("postgresql://db/origin"),
            Some(Backend::Postgres)
        );
        assert_eq!(Backend::of("mysql://db/origin"), None);
        assert_eq!(Backend::of("data/origin.sqlite3"), None);
    }

    #[test]
    fn a_password_is_never_shown() {
        let cases = [
            (
                "postgres://origin:s3cret@db:5432/pay?sslmode=require",
                "postgres://origin:***@db:5432/pay?sslmode=require",
            ),
            (
                "postgresql://origin:p@ss@db/pay",
                "postgresql://origin:***@db/pay",
            ),
            (
                "postgres://db/pay?user=origin&Password=s3cret&sslmode=disable",
                "postgres://db/pay?user=origin&password=***&sslmode=disable",
            ),
            ("postgres://origin@db/pay", "postgres://origin@db/pay"),
            (
                "sqlite://data/origin.sqlite3",
                "sqlite://data/origin.sqlite3",
            ),
            ("sqlite::memory:", "sqlite::memory:"),
        ];
        for (url, shown) in cases {
            assert_eq!(without_password(url), shown);
        }
    }

    #[tokio::test]
    async fn open_errors_name_the_url_without_its_password() {
        let urls = [
            "mysql://origin:s3cret@db/pay",
            // Port 1 on loopback: refused at once.
            "postgres://origin:s3cret@127.0.0.1:1/pay",
        ];
        for url in urls {
            let err = open(
                url,
                Duration::from_secs(1),
                crate::crypto::test_cipher("v1"),
            )
            .await
            .err()
            .map(|err| format!("{err:#}"))
            .unwrap_or_default();
            assert!(err.starts_with("DATABASE_URL"), "{err}");
            assert!(err.contains("origin:***@"), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
    }
}
