//! Key-encryption keys (KEKs): the [`KeyProvider`] interface and [`LocalKeys`], the
//! provider that reads them from the environment.
//!
//! `ENCRYPTION_KEKS` is `v1:<base64>,v2:<base64>,…`: each entry a version (`v` and a
//! number from 1, no leading zeros) and 32 bytes in standard base64 with padding
//! (`openssl rand -base64 32`); whitespace around entries is ignored.
//! `ENCRYPTION_CURRENT_KEK` names the version new values are sealed under, e.g. `v2`.
//! Older versions stay listed until every value on them has been rewrapped.
//!
//! Both variables are required, including when both are missing: the origin stores
//! sensitive fields encrypted, so without keys it must refuse to start rather than run
//! unable to read or write them. No error, and no `Debug` output, ever shows key
//! material; errors name the variable, the entry's position and what is wrong.

use std::collections::BTreeMap;
use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use zeroize::{ZeroizeOnDrop, Zeroizing};

/// The variable that lists the KEKs.
pub const KEKS_VAR: &str = "ENCRYPTION_KEKS";
/// The variable that names the KEK version new values are sealed under.
pub const CURRENT_VAR: &str = "ENCRYPTION_CURRENT_KEK";

/// Where KEKs come from: local configuration now, a KMS or Vault later.
pub trait KeyProvider: Send + Sync {
    /// The version new values are sealed under; [`KeyProvider::key`] has it.
    fn current(&self) -> u32;
    /// The KEK of `version`, if this provider has it.
    fn key(&self, version: u32) -> Option<&Kek>;
}

/// A 256-bit key-encryption key: wiped when dropped, never printed.
#[derive(ZeroizeOnDrop)]
pub struct Kek([u8; 32]);

impl Kek {
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for Kek {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Kek(<redacted>)")
    }
}

/// KEKs from `ENCRYPTION_KEKS` and `ENCRYPTION_CURRENT_KEK`.
#[derive(Debug)]
pub struct LocalKeys {
    current: u32,
    keys: BTreeMap<u32, Kek>,
}

impl LocalKeys {
    /// Reads the two variables through `lookup` (`|name| std::env::var(name).ok()` in
    /// the service); either missing, or anything wrong in them, is an error.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, KeyConfigError> {
        let required = |var: &'static str| {
            let value = Zeroizing::new(lookup(var).ok_or(KeyConfigError::Missing(var))?);
            if value.trim().is_empty() {
                return Err(KeyConfigError::Empty(var));
            }
            Ok(value)
        };
        let listed = required(KEKS_VAR)?;
        let named = required(CURRENT_VAR)?;

        let mut keys = BTreeMap::new();
        for (index, entry) in listed.split(',').enumerate() {
            let (version, kek) =
                parse_entry(entry.trim()).map_err(|problem| KeyConfigError::BadEntry {
                    entry: index + 1,
                    problem,
                })?;
            if keys.insert(version, kek).is_some() {
                return Err(KeyConfigError::DuplicateVersion(version));
            }
        }
        let current = parse_version(named.trim()).ok_or(KeyConfigError::BadCurrent)?;
        if !keys.contains_key(&current) {
            let listed = keys.keys().map(|v| format!("v{v}")).collect::<Vec<_>>();
            return Err(KeyConfigError::CurrentNotListed {
                current,
                listed: listed.join(", "),
            });
        }
        Ok(Self { current, keys })
    }
}

impl KeyProvider for LocalKeys {
    fn current(&self) -> u32 {
        self.current
    }

    fn key(&self, version: u32) -> Option<&Kek> {
        self.keys.get(&version)
    }
}

/// `v<N>:<base64 of 32 bytes>`.
fn parse_entry(entry: &str) -> Result<(u32, Kek), EntryProblem> {
    let (version, key) = entry.split_once(':').ok_or(EntryProblem::Syntax)?;
    let version = parse_version(version).ok_or(EntryProblem::Version)?;
    let bytes = Zeroizing::new(
        STANDARD
            .decode(key)
            .map_err(|_| EntryProblem::Base64(version))?,
    );
    let bytes: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| EntryProblem::Length(version, bytes.len()))?;
    Ok((version, Kek(bytes)))
}

/// `v<N>` with N a number from 1 that fits in 32 bits, written without a sign or leading
/// zeros, so each version has exactly one label (also in stored values).
pub(crate) fn parse_version(label: &str) -> Option<u32> {
    let digits = label.strip_prefix('v')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What is wrong with the key configuration; never shows key material.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyConfigError {
    #[error("{0} is not set: sensitive fields are stored encrypted, so the origin needs its keys to start")]
    Missing(&'static str),
    #[error("{0} is empty: sensitive fields are stored encrypted, so the origin needs its keys to start")]
    Empty(&'static str),
    #[error("ENCRYPTION_KEKS, entry {entry}: {problem}")]
    BadEntry { entry: usize, problem: EntryProblem },
    #[error("ENCRYPTION_KEKS lists version v{0} twice")]
    DuplicateVersion(u32),
    #[error("ENCRYPTION_CURRENT_KEK must be a version such as `v1`: `v` and a number from 1")]
    BadCurrent,
    #[error("ENCRYPTION_CURRENT_KEK is v{current}, which ENCRYPTION_KEKS does not list (it lists {listed})")]
    CurrentNotListed { current: u32, listed: String },
}

/// What is wrong with one entry of `ENCRYPTION_KEKS`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EntryProblem {
    #[error("expected `v<N>:<base64 of 32 bytes>`")]
    Syntax,
    #[error("the version must be `v` and a number from 1, such as `v1`")]
    Version,
    #[error("the key of v{0} is not standard base64 (with padding)")]
    Base64(u32),
    #[error("the key of v{0} is {1} bytes, not 32")]
    Length(u32, usize),
}
