//! The sensitive columns the origin stores, sealed and opened as text by the store, so
//! the database holds only `env:v{N}:…` values and everything above the store sees the
//! plain text.
//!
//! Each value is bound to its table, column and row ([`super::Context`]). The row is
//! named by a key known before the row is inserted and never changed: for payments the
//! order id.

use std::sync::Arc;

use super::envelope::{self, Context, CryptoError, Part, Rewrap};
use super::keys::{KeyConfigError, KeyProvider, LocalKeys};

/// A sensitive column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub table: &'static str,
    pub column: &'static str,
}

/// The payment key the client sends with a confirm, which the PG needs to approve it.
/// (The origin stores no account or card number.)
pub const PAYMENT_KEY: Column = Column {
    table: "payments",
    column: "payment_key",
};

/// Seals and opens the sensitive columns under the provider's KEKs. Cheap to clone.
#[derive(Clone)]
pub struct FieldCipher {
    keys: Arc<dyn KeyProvider>,
}

impl FieldCipher {
    pub fn new(keys: Arc<dyn KeyProvider>) -> Self {
        Self { keys }
    }

    /// The KEKs of `ENCRYPTION_KEKS` and `ENCRYPTION_CURRENT_KEK`, read through
    /// `lookup`.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, KeyConfigError> {
        Ok(Self::new(Arc::new(LocalKeys::from_env(lookup)?)))
    }

    /// The version new values are sealed under.
    pub fn current_version(&self) -> u32 {
        self.keys.current()
    }

    /// `value`, sealed for `column` of the row `row_id`.
    pub fn seal(&self, column: Column, row_id: &str, value: &str) -> Result<String, CryptoError> {
        envelope::seal(
            self.keys.as_ref(),
            &column.context(row_id),
            value.as_bytes(),
        )
    }

    /// The text [`FieldCipher::seal`] sealed for the same column and row.
    pub fn open(&self, column: Column, row_id: &str, stored: &str) -> Result<String, CryptoError> {
        let opened = envelope::open(self.keys.as_ref(), &column.context(row_id), stored)?;
        String::from_utf8(opened.to_vec()).map_err(|_| CryptoError::Malformed {
            part: Part::Data,
            problem: "does not hold text",
        })
    }

    /// The stored value on the current KEK, its data part unchanged.
    pub fn rewrap(
        &self,
        column: Column,
        row_id: &str,
        stored: &str,
    ) -> Result<Rewrap, CryptoError> {
        envelope::rewrap(self.keys.as_ref(), &column.context(row_id), stored)
    }
}

impl Column {
    fn context<'a>(&self, row_id: &'a str) -> Context<'a> {
        Context {
            table: self.table,
            column: self.column,
            row_id,
        }
    }
}

/// A cipher for the crate's own tests: KEKs v1 (all 1s) and v2 (all 2s), `current`
/// the version new values are sealed under.
#[cfg(test)]
pub(crate) fn test_cipher(current: &str) -> FieldCipher {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    let keks = format!(
        "v1:{},v2:{}",
        STANDARD.encode([1u8; 32]),
        STANDARD.encode([2u8; 32])
    );
    FieldCipher::from_env(|name| match name {
        "ENCRYPTION_KEKS" => Some(keks.clone()),
        "ENCRYPTION_CURRENT_KEK" => Some(current.to_owned()),
        _ => None,
    })
    .expect("keys")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cipher(current: &str) -> FieldCipher {
        test_cipher(current)
    }

    #[test]
    fn a_payment_key_opens_in_its_own_row_only() {
        let cipher = cipher("v1");
        let sealed = cipher
            .seal(PAYMENT_KEY, "o-1", "pk-secret")
            .expect("sealed");
        assert!(sealed.starts_with("env:v1:"), "{sealed}");
        assert!(!sealed.contains("pk-secret"));
        assert_eq!(
            cipher.open(PAYMENT_KEY, "o-1", &sealed).expect("opened"),
            "pk-secret"
        );
        assert!(cipher.open(PAYMENT_KEY, "o-2", &sealed).is_err());
        let other = Column {
            table: "payments",
            column: "account_number",
        };
        assert!(cipher.open(other, "o-1", &sealed).is_err());
    }

    #[test]
    fn text_in_plain_is_not_a_sealed_value() {
        let error = cipher("v1")
            .open(PAYMENT_KEY, "o-1", "pk-secret")
            .expect_err("plain text");
        assert!(matches!(error, CryptoError::Malformed { .. }), "{error}");
    }

    #[test]
    fn a_rewrapped_key_opens_under_the_new_version() {
        let sealed = cipher("v1")
            .seal(PAYMENT_KEY, "o-1", "pk-secret")
            .expect("sealed");
        let newer = cipher("v2");
        let Rewrap::Rewrapped(rewrapped) = newer
            .rewrap(PAYMENT_KEY, "o-1", &sealed)
            .expect("rewrapped")
        else {
            panic!("a v1 value is rewrapped under v2");
        };
        assert!(rewrapped.starts_with("env:v2:"));
        assert_eq!(
            newer.open(PAYMENT_KEY, "o-1", &rewrapped).expect("opened"),
            "pk-secret"
        );
        assert_eq!(newer.current_version(), 2);
    }
}
