//! Sealing, opening and rewrapping one value; the format is described in [`super`].

use std::fmt;

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes256Gcm, KeyInit};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use zeroize::Zeroizing;

use super::keys::{parse_version, KeyProvider};

const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;
const DEK_LEN: usize = 32;

/// Where a value is stored, bound into its associated data: a value opens only with the
/// context it was sealed with.
///
/// `row_id` is a key of the row that is known before the row is inserted and never
/// changes — for payments the `order_id`, not the serial `id` the insert assigns.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub table: &'a str,
    pub column: &'a str,
    pub row_id: &'a str,
}

/// What [`rewrap`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Rewrap {
    /// The value was already on the current KEK; store nothing.
    Unchanged,
    /// The value on the current KEK, to store in place of the old one.
    Rewrapped(String),
}

/// Why a value could not be sealed, opened or rewrapped. Never says which key failed.
#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("malformed encrypted value: {part} {problem}")]
    Malformed { part: Part, problem: &'static str },
    #[error("no key-encryption key for version v{0}: a version must stay configured until every value on it is rewrapped")]
    UnknownVersion(u32),
    #[error("the encrypted value failed authentication: altered, or copied from another row, column or key version")]
    Authentication,
    #[error("the value is too long for AES-GCM")]
    TooLong,
    #[error("the system's random number generator failed: {0}")]
    Random(getrandom::Error),
}

/// A part of `env:v{N}:{wrapped DEK}:{data}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Prefix,
    Version,
    WrappedDek,
    Data,
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Prefix => "(`env:` prefix)",
            Part::Version => "(KEK version `v{N}`)",
            Part::WrappedDek => "(wrapped data key)",
            Part::Data => "(data)",
        })
    }
}

/// Seals `plaintext` for `ctx` under a fresh data key wrapped by the current KEK.
pub fn seal(
    keys: &dyn KeyProvider,
    ctx: &Context,
    plaintext: &[u8],
) -> Result<String, CryptoError> {
    let mut dek = Zeroizing::new([0u8; DEK_LEN]);
    getrandom::fill(dek.as_mut_slice()).map_err(CryptoError::Random)?;
    let data = seal_part(&dek, &data_aad(ctx), plaintext)?;
    wrap(keys, ctx, &dek, &STANDARD.encode(data), keys.current())
}

/// Opens a value that [`seal`] or [`rewrap`] made for the same `ctx`.
pub fn open(
    keys: &dyn KeyProvider,
    ctx: &Context,
    stored: &str,
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let envelope = Envelope::parse(stored)?;
    let dek = envelope.unwrap_dek(keys, ctx)?;
    open_part(&dek, &data_aad(ctx), &envelope.data)
}

/// Puts a value on the current KEK: only its wrapped data key changes, its data part
/// stays byte-identical. The whole value is authenticated first, so a value that would
/// not open is reported rather than rewrapped.
pub fn rewrap(keys: &dyn KeyProvider, ctx: &Context, stored: &str) -> Result<Rewrap, CryptoError> {
    let envelope = Envelope::parse(stored)?;
    let dek = envelope.unwrap_dek(keys, ctx)?;
    open_part(&dek, &data_aad(ctx), &envelope.data)?;
    let current = keys.current();
    if envelope.version == current {
        return Ok(Rewrap::Unchanged);
    }
    wrap(keys, ctx, &dek, envelope.data_b64, current).map(Rewrap::Rewrapped)
}

/// How every value sealed under KEK `version` begins: `env:v{version}:`.
pub fn version_prefix(version: u32) -> String {
    format!("env:v{version}:")
}

/// The KEK version of a well-formed stored value.
pub fn version_of(stored: &str) -> Result<u32, CryptoError> {
    Envelope::parse(stored).map(|envelope| envelope.version)
}

/// `env:v{version}:{dek wrapped by the KEK of version}:{data_b64}`.
fn wrap(
    keys: &dyn KeyProvider,
    ctx: &Context,
    dek: &[u8; DEK_LEN],
    data_b64: &str,
    version: u32,
) -> Result<String, CryptoError> {
    let kek = keys
        .key(version)
        .ok_or(CryptoError::UnknownVersion(version))?;
    let wrapped = seal_part(kek.bytes(), &dek_aad(ctx, version), dek)?;
    Ok(format!(
        "env:v{version}:{}:{data_b64}",
        STANDARD.encode(wrapped)
    ))
}

/// A stored value taken apart, nothing checked but its form.
struct Envelope<'a> {
    version: u32,
    wrapped: Vec<u8>,
    data: Vec<u8>,
    /// The data part as stored, so that a rewrap keeps it byte for byte.
    data_b64: &'a str,
}

impl<'a> Envelope<'a> {
    fn parse(stored: &'a str) -> Result<Self, CryptoError> {
        let malformed = |part, problem| CryptoError::Malformed { part, problem };
        let rest = stored
            .strip_prefix("env:")
            .ok_or(malformed(Part::Prefix, "is missing"))?;
        let mut parts = rest.splitn(3, ':');
        let mut next = |part| parts.next().ok_or(malformed(part, "is missing"));
        let version = parse_version(next(Part::Version)?)
            .ok_or(malformed(Part::Version, "is not `v` and a number from 1"))?;
        let wrapped_b64 = next(Part::WrappedDek)?;
        let data_b64 = next(Part::Data)?;
        let decode = |part, text| {
            STANDARD
                .decode(text)
                .map_err(|_| malformed(part, "is not standard base64"))
        };
        let wrapped = decode(Part::WrappedDek, wrapped_b64)?;
        if wrapped.len() != NONCE_LEN + DEK_LEN + TAG_LEN {
            return Err(malformed(Part::WrappedDek, "has the wrong length"));
        }
        let data = decode(Part::Data, data_b64)?;
        if data.len() < NONCE_LEN + TAG_LEN {
            return Err(malformed(Part::Data, "is too short"));
        }
        Ok(Self {
            version,
            wrapped,
            data,
            data_b64,
        })
    }

    fn unwrap_dek(
        &self,
        keys: &dyn KeyProvider,
        ctx: &Context,
    ) -> Result<Zeroizing<[u8; DEK_LEN]>, CryptoError> {
        let kek = keys
            .key(self.version)
            .ok_or(CryptoError::UnknownVersion(self.version))?;
        let plain = open_part(kek.bytes(), &dek_aad(ctx, self.version), &self.wrapped)?;
        let mut dek = Zeroizing::new([0u8; DEK_LEN]);
        // Exactly DEK_LEN: the wrapped part's length was checked in `parse`.
        dek.copy_from_slice(&plain);
        Ok(dek)
    }
}

/// Associated data of the data part: the purpose `env:data`, then table, column and row
/// id. No KEK version, so that a rewrap leaves the data part as it is: the wrapped data
/// key binds the version.
fn data_aad(ctx: &Context) -> Vec<u8> {
    aad("env:data", ctx)
}

/// Associated data of the wrapped data key: the purpose `env:dek`, then table, column
/// and row id, then the KEK version (4 bytes, big-endian).
fn dek_aad(ctx: &Context, version: u32) -> Vec<u8> {
    let mut aad = aad("env:dek", ctx);
    aad.extend_from_slice(&version.to_be_bytes());
    aad
}

/// Each field as its length (8 bytes, big-endian) and its bytes: no two different
/// contexts give the same bytes, whatever their fields contain.
fn aad(purpose: &str, ctx: &Context) -> Vec<u8> {
    let mut aad = Vec::new();
    for field in [purpose, ctx.table, ctx.column, ctx.row_id] {
        aad.extend_from_slice(&(field.len() as u64).to_be_bytes());
        aad.extend_from_slice(field.as_bytes());
    }
    aad
}

/// AES-256-GCM under a fresh random nonce: nonce ‖ ciphertext ‖ tag.
fn seal_part(key: &[u8; 32], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(CryptoError::Random)?;
    encrypt(key, &nonce, aad, plaintext)
}

/// AES-256-GCM of `plaintext` under `nonce`: nonce ‖ ciphertext ‖ tag.
pub(super) fn encrypt(
    key: &[u8; 32],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    plaintext: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let mut sealed = Vec::with_capacity(NONCE_LEN + plaintext.len() + TAG_LEN);
    sealed.extend_from_slice(nonce);
    sealed.extend_from_slice(plaintext);
    let tag = Aes256Gcm::new(key.into())
        // Fails only past GCM's limits (64 GiB), far beyond any stored field.
        .encrypt_in_place_detached(nonce.into(), aad, &mut sealed[NONCE_LEN..])
        .map_err(|_| CryptoError::TooLong)?;
    sealed.extend_from_slice(&tag);
    Ok(sealed)
}

/// Opens nonce ‖ ciphertext ‖ tag; the plaintext exists only in a buffer wiped on drop,
/// and only once the tag has been checked.
pub(super) fn open_part(
    key: &[u8; 32],
    aad: &[u8],
    sealed: &[u8],
) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    let (nonce, rest) = sealed
        .split_first_chunk::<NONCE_LEN>()
        .ok_or(CryptoError::Authentication)?;
    let (ciphertext, tag) = rest
        .split_last_chunk::<TAG_LEN>()
        .ok_or(CryptoError::Authentication)?;
    let mut plain = Zeroizing::new(ciphertext.to_vec());
    Aes256Gcm::new(key.into())
        .decrypt_in_place_detached(nonce.into(), aad, &mut plain, tag.into())
        .map_err(|_| CryptoError::Authentication)?;
    Ok(plain)
}
