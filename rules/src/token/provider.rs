//! An identity provider's key set (`JWT_JWKS_URL`): a JWK Set document (RFC 7517 §5),
//! `{"keys": [...]}`, read into a `KeySet` of its own beside the edge's `JWT_KEYS`.
//!
//! What comes from a URL is held to more than `JWT_KEYS` is: public keys only (a member
//! such as `d`, `p` or `k` refuses the document: whoever serves secrets has leaked them,
//! and an HMAC key from a URL would let anyone who reads it sign), every key named by
//! `kid` and pinned by `alg` (a key without either refuses the document — the header
//! must never choose how a signature is checked), and no kid that `JWT_KEYS` also has.
//! One bad key refuses the whole document, so the caller keeps its last good set rather
//! than a part of a set gone wrong.
//!
//! What the edge has no use for is skipped, each with its reason, for the log: a key
//! whose `use` is not `sig` (an encryption key), or whose `alg` is not one verified here
//! (RS384, PS256, ES384, …) — providers publish such keys beside the ones they sign with.
//! A document left with no key to verify with is refused.

use serde::Deserialize;

use super::jwk::Jwk;
use super::keys::{Key, KeySet};
use super::public_keys;

/// More keys than any provider publishes (two or three in rotation is usual).
pub const MAX_PROVIDER_KEYS: usize = 64;

/// The provider's keys, each pinned to RS256, ES256 or EdDSA, and what was skipped.
pub struct ProviderKeys {
    keys: KeySet,
    skipped: Vec<Skipped>,
}

/// A key of the document the edge does not use, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its `kid`, or `number N` (from 1) when it has none.
    pub key: String,
    pub reason: String,
}

/// Why a key set document was refused: what was expected, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwksError {
    #[error("the key set is not JSON ({0})")]
    NotJson(String),
    #[error("expected a JWK Set, an object with a `keys` array of JWK objects ({0})")]
    NotAKeySet(String),
    #[error("the key set has {0} keys; expected at most 64")]
    TooManyKeys(usize),
    #[error("key number {0} (from 1) has no `kid`; expected every key to name itself")]
    MissingKid(usize),
    #[error("key `{0}` has no `alg`; expected every key to pin its algorithm")]
    MissingAlg(String),
    #[error("key `{kid}` has the private member `{member}`; expected public keys only")]
    PrivateMember { kid: String, member: &'static str },
    #[error("key `{0}` is a shared secret (HS*); expected public keys only")]
    SharedSecret(String),
    #[error("key `{0}` appears twice; expected each kid once")]
    DuplicateKid(String),
    #[error("key `{0}` is also a key of JWT_KEYS; expected a kid to name one key")]
    KidOfJwtKeys(String),
    #[error("key `{kid}`: expected {expected}")]
    Unusable { kid: String, expected: &'static str },
    #[error("the key set has no RS256, ES256 or EdDSA signing key ({0} skipped)")]
    NoUsableKey(usize),
}

#[derive(Deserialize)]
struct Document {
    keys: Vec<Jwk>,
}

impl ProviderKeys {
    /// Reads the provider's JWK Set `json`, beside the edge's own `keys`.
    pub fn parse(json: &str, own: &KeySet) -> Result<ProviderKeys, JwksError> {
        let document: Document =
            serde_json::from_str(json).map_err(|err| match err.classify() {
                serde_json::error::Category::Data => JwksError::NotAKeySet(err.to_string()),
                _ => JwksError::NotJson(err.to_string()),
            })?;
        if document.keys.len() > MAX_PROVIDER_KEYS {
            return Err(JwksError::TooManyKeys(document.keys.len()));
        }
        let mut keys: Vec<(String, Key)> = Vec::new();
        let mut skipped = Vec::new();
        for (index, jwk) in document.keys.iter().enumerate() {
            let named = |kid: Option<&str>| match kid {
                Some(kid) if !kid.is_empty() => kid.to_owned(),
                _ => format!("number {}", index + 1),
            };
            if let Some(other) = jwk.use_.as_deref().filter(|use_| *use_ != "sig") {
                skipped.push(Skipped {
                    key: named(jwk.kid.as_deref()),
                    reason: format!("its `use` is `{other}`, not `sig`"),
                });
                continue;
            }
            let kid = match jwk.kid.as_deref() {
                Some(kid) if !kid.is_empty() => kid,
                _ => return Err(JwksError::MissingKid(index + 1)),
            };
            if let Some(member) = jwk.private_member() {
                let kid = kid.to_owned();
                return Err(JwksError::PrivateMember { kid, member });
            }
            let key = match jwk.alg.as_deref() {
                None => return Err(JwksError::MissingAlg(kid.to_owned())),
                Some(alg) if alg.starts_with("HS") => {
                    return Err(JwksError::SharedSecret(kid.to_owned()))
                }
                Some("RS256") => public_keys::rs256(jwk),
                Some("ES256") => public_keys::es256(jwk),
                Some("EdDSA") => Key::eddsa(jwk),
                Some(alg) => {
                    skipped.push(Skipped {
                        key: kid.to_owned(),
                        reason: format!("its `alg` {alg} is not RS256, ES256 or EdDSA"),
                    });
                    continue;
                }
            };
            if keys.iter().any(|(known, _)| known == kid) {
                return Err(JwksError::DuplicateKid(kid.to_owned()));
            }
            if own.get(kid).is_some() {
                return Err(JwksError::KidOfJwtKeys(kid.to_owned()));
            }
            let key = key.map_err(|expected| JwksError::Unusable {
                kid: kid.to_owned(),
                expected,
            })?;
            keys.push((kid.to_owned(), key));
        }
        if keys.is_empty() {
            return Err(JwksError::NoUsableKey(skipped.len()));
        }
        Ok(ProviderKeys {
            keys: KeySet::of(keys),
            skipped,
        })
    }

    /// The keys, by `kid`.
    pub fn keys(&self) -> &KeySet {
        &self.keys
    }

    /// The keys of the document that are not used, and why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }
}
