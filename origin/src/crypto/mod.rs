//! Envelope encryption of sensitive fields (payment keys, account numbers): `docs/design/encryption.md`.
//!
//! Each value gets a fresh random 256-bit data key (DEK). The value is sealed under the
//! DEK with AES-256-GCM, and the DEK is sealed ("wrapped") under a key-encryption key
//! (KEK) with AES-256-GCM. KEKs come from a [`KeyProvider`]; [`LocalKeys`] reads them
//! from `ENCRYPTION_KEKS` and `ENCRYPTION_CURRENT_KEK`.
//!
//! # Stored form
//!
//! ```text
//! env:v{N}:{base64(nonce ‖ wrapped DEK ‖ tag)}:{base64(nonce ‖ ciphertext ‖ tag)}
//! ```
//!
//! `N` is the KEK version (decimal, from 1, no leading zeros). Base64 is the standard
//! alphabet with padding, which never contains `:`. Each part carries its own random
//! 12-byte nonce and 16-byte tag; the first part is always 60 bytes (12 + 32 + 16), the
//! second 28 bytes more than the value.
//!
//! # Associated data
//!
//! Both seals bind where the value lives, so a value copied to another row or column
//! fails to open with [`CryptoError::Authentication`] rather than opening there. Each
//! field is written as its length (u64, big-endian) and its bytes, so no two contexts
//! encode alike:
//!
//! - data: `lp("env:data") ‖ lp(table) ‖ lp(column) ‖ lp(row id)`
//! - wrapped DEK: `lp("env:dek") ‖ lp(table) ‖ lp(column) ‖ lp(row id) ‖ u32be(N)`
//!
//! The KEK version is bound by the wrapped DEK alone: rotation ([`rewrap`]) must leave
//! the data part byte-identical, and the data cannot be opened without the DEK. So a
//! value given another version prefix fails to open even if two versions held the same
//! key. The purpose labels keep the two kinds of seal apart.
//!
//! With random nonces, one KEK should wrap well under 2^32 DEKs (NIST SP 800-38D);
//! rotate long before.

mod envelope;
mod fields;
mod keys;
#[cfg(test)]
mod tests;

pub use envelope::{
    open, rewrap, seal, version_of, version_prefix, Context, CryptoError, Part, Rewrap,
};
#[cfg(test)]
pub(crate) use fields::test_cipher;
pub use fields::{Column, FieldCipher, PAYMENT_KEY};
pub use keys::{EntryProblem, Kek, KeyConfigError, KeyProvider, LocalKeys, CURRENT_VAR, KEKS_VAR};
