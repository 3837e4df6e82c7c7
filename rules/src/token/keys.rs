//! `JWT_KEYS`: the keys an access token may be signed with, parsed once at start.
//!
//! Each key is pinned to one algorithm when it is loaded, from its own `alg`. A token's
//! header names a key by `kid` and must then name exactly that key's algorithm: the
//! header never chooses how a signature is checked. So `alg: none` matches no key, and an
//! Ed25519 public key is never used as an HMAC secret (the classic confusion attack).
//!
//! A key that could never verify anything is refused here, with its `kid`, rather than
//! at the first request: HMAC secrets under 32 bytes (RFC 7518 §3.2), Ed25519 public keys
//! that are not canonical or have small order, and private seeds that do not belong to
//! the public key beside them.
//!
//! These are the edge's own keys (HS256, EdDSA): it mints with them. An identity
//! provider's public keys — RS256 and ES256 as well (`public_keys`) — come from its key
//! set (`provider`), into a `KeySet` of their own.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_compact::{KeyPair, PublicKey, SecretKey, Seed, Signature};
use hmac::{Hmac, Mac as _};
use jwt_compact::alg::Ed25519;
use jwt_compact::Algorithm as _;
use sha2::Sha256;

use super::jwk::Jwk;
use super::public_keys;

const MIN_HS256_KEY_BYTES: usize = 32;

/// The algorithms a key can be pinned to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algorithm {
    Hs256,
    EdDsa,
    Rs256,
    Es256,
}

impl Algorithm {
    /// The name in a JWS header (RFC 7518 §3.1, RFC 8037 §3.1).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Algorithm::Hs256 => "HS256",
            Algorithm::EdDsa => "EdDSA",
            Algorithm::Rs256 => "RS256",
            Algorithm::Es256 => "ES256",
        }
    }
}

pub(crate) enum Key {
    /// The HMAC state already keyed, so a verification starts from a clone of it
    /// instead of hashing the secret again.
    Hs256(Hmac<Sha256>),
    EdDsa {
        public: PublicKey,
        secret: Option<SecretKey>,
    },
    /// RSASSA-PKCS1-v1_5 with SHA-256: verification only.
    Rs256(public_keys::Rs256Key),
    /// ECDSA on P-256 with SHA-256: verification only.
    Es256(public_keys::Es256Key),
}

impl Key {
    pub(crate) fn algorithm(&self) -> Algorithm {
        match self {
            Key::Hs256(_) => Algorithm::Hs256,
            Key::EdDsa { .. } => Algorithm::EdDsa,
            Key::Rs256(_) => Algorithm::Rs256,
            Key::Es256(_) => Algorithm::Es256,
        }
    }

    /// Whether `signature` is this key's signature of `message`. HMAC tags are compared
    /// in constant time; a signature of the wrong length is simply wrong.
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        match self {
            Key::Hs256(mac) => mac
                .clone()
                .chain_update(message)
                .verify_slice(signature)
                .is_ok(),
            Key::EdDsa { public, .. } => Signature::from_slice(signature)
                .is_ok_and(|signature| Ed25519.verify_signature(&signature, public, message)),
            Key::Rs256(key) => key.verifies(message, signature),
            Key::Es256(key) => key.verifies(message, signature),
        }
    }

    /// This key's signature of `message`, if it holds a secret. Ed25519 signatures are
    /// the deterministic ones of RFC 8032: no randomness enters the rules.
    pub(crate) fn sign(&self, message: &[u8]) -> Option<Vec<u8>> {
        match self {
            Key::Hs256(mac) => Some(
                mac.clone()
                    .chain_update(message)
                    .finalize()
                    .into_bytes()
                    .to_vec(),
            ),
            Key::EdDsa { secret, .. } => secret
                .as_ref()
                .map(|secret| secret.sign(message, None).to_vec()),
            Key::Rs256(_) | Key::Es256(_) => None,
        }
    }
}

/// The keys an access token may be signed with, by `kid`.
pub struct KeySet {
    keys: Vec<(String, Key)>,
}

/// Why `JWT_KEYS` was refused: names the key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeySetError {
    #[error("expected a JSON array of JWK objects with string members ({0})")]
    Malformed(String),
    #[error("expected at least one key, found an empty array")]
    Empty,
    #[error("key number {0} (from 1) has no `kid`; expected a non-empty string")]
    MissingKid(usize),
    #[error("key `{0}` appears twice; expected each kid once")]
    DuplicateKid(String),
    #[error("key `{kid}`: expected {expected}")]
    Unusable { kid: String, expected: &'static str },
}

impl KeySet {
    /// Parses `JWT_KEYS`: a JSON array of JWKs, each with `kid` and `alg`.
    pub fn from_jwks_json(json: &str) -> Result<KeySet, KeySetError> {
        let jwks: Vec<Jwk> =
            serde_json::from_str(json).map_err(|err| KeySetError::Malformed(err.to_string()))?;
        if jwks.is_empty() {
            return Err(KeySetError::Empty);
        }
        let mut keys: Vec<(String, Key)> = Vec::with_capacity(jwks.len());
        for (index, jwk) in jwks.iter().enumerate() {
            let kid = match jwk.kid.as_deref() {
                Some(kid) if !kid.is_empty() => kid,
                _ => return Err(KeySetError::MissingKid(index + 1)),
            };
            if keys.iter().any(|(known, _)| known == kid) {
                return Err(KeySetError::DuplicateKid(kid.to_owned()));
            }
            let key = Key::from_jwk(jwk).map_err(|expected| KeySetError::Unusable {
                kid: kid.to_owned(),
                expected,
            })?;
            keys.push((kid.to_owned(), key));
        }
        Ok(KeySet { keys })
    }

    /// Whether `kid` exists and can sign (for config validation of `JWT_SIGNING_KID`).
    pub fn can_sign(&self, kid: &str) -> bool {
        self.get(kid).is_some_and(|key| match key {
            Key::Hs256(_) => true,
            Key::EdDsa { secret, .. } => secret.is_some(),
            Key::Rs256(_) | Key::Es256(_) => false,
        })
    }

    /// The keys' ids, in the order they were given.
    pub fn kids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|(kid, _)| kid.as_str())
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none (never so for a set that was loaded).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// A set of `keys` already checked, in order, each kid once.
    pub(crate) fn of(keys: Vec<(String, Key)>) -> KeySet {
        KeySet { keys }
    }

    /// The key named `kid`.
    pub(crate) fn get(&self, kid: &str) -> Option<&Key> {
        self.keys
            .iter()
            .find(|(known, _)| known == kid)
            .map(|(_, key)| key)
    }
}

impl Key {
    fn from_jwk(jwk: &Jwk) -> Result<Key, &'static str> {
        match jwk.alg.as_deref() {
            Some("HS256") => Key::hs256(jwk),
            Some("EdDSA") => Key::eddsa(jwk),
            _ => Err("`alg` HS256 or EdDSA"),
        }
    }

    fn hs256(jwk: &Jwk) -> Result<Key, &'static str> {
        if jwk.kty.as_deref() != Some("oct") {
            return Err("`kty` oct for an HS256 key");
        }
        let secret = jwk
            .k
            .as_deref()
            .and_then(|k| URL_SAFE_NO_PAD.decode(k).ok())
            .filter(|secret| secret.len() >= MIN_HS256_KEY_BYTES)
            .ok_or("`k`: at least 32 bytes in unpadded base64url")?;
        Hmac::new_from_slice(&secret)
            .map(Key::Hs256)
            .map_err(|_| "`k`: an HMAC key")
    }

    pub(crate) fn eddsa(jwk: &Jwk) -> Result<Key, &'static str> {
        if jwk.kty.as_deref() != Some("OKP") || jwk.crv.as_deref() != Some("Ed25519") {
            return Err("`kty` OKP and `crv` Ed25519 for an EdDSA key");
        }
        let public = jwk
            .x
            .as_deref()
            .and_then(|x| URL_SAFE_NO_PAD.decode(x).ok())
            .and_then(|x| PublicKey::from_slice(&x).ok())
            .filter(|public| public.validate().is_ok())
            .ok_or("`x`: a valid 32-byte Ed25519 public key in unpadded base64url")?;
        let secret = match jwk.d.as_deref() {
            None => None,
            Some(d) => {
                let seed = URL_SAFE_NO_PAD
                    .decode(d)
                    .ok()
                    .and_then(|d| <[u8; Seed::BYTES]>::try_from(d.as_slice()).ok())
                    .and_then(|d| KeyPair::try_from_seed(Seed::new(d)).ok())
                    .ok_or("`d`: a non-zero 32-byte Ed25519 seed in unpadded base64url")?;
                if seed.pk != public {
                    return Err("`x` to be the public key of `d`");
                }
                Some(seed.sk)
            }
        };
        Ok(Key::EdDsa { public, secret })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"; // 32 bytes
    /// RFC 8037 appendix A.1: a seed `d` and its public key `x`.
    const D: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
    const X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

    fn check(json: &str, expected: Result<(), KeySetError>) {
        assert_eq!(KeySet::from_jwks_json(json).map(|_| ()), expected, "{json}");
    }

    fn unusable(kid: &str, expected: &'static str) -> Result<(), KeySetError> {
        Err(KeySetError::Unusable {
            kid: kid.into(),
            expected,
        })
    }

    #[test]
    fn hs256_and_eddsa_keys_are_loaded() {
        check(
            &format!(r#"[{{"kty":"oct","alg":"HS256","kid":"a","k":"{SECRET}","use":"sig"}}]"#),
            Ok(()),
        );
        check(
            &format!(
                r#"[{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"e","x":"{X}","d":"{D}"}}]"#
            ),
            Ok(()),
        );
        check(
            &format!(r#"[{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"e","x":"{X}"}}]"#),
            Ok(()),
        );
    }

    #[test]
    #[rustfmt::skip]
    fn unusable_key_sets_are_refused_naming_the_key_and_what_was_expected() {
        let short = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZQ"; // 31 bytes
        let other_x = "fU0Of2FTpptiQrUiq77mhf2kQg-INLEIw72uNp71Sfo";
        let small_order = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"; // the identity point
        check("{}", Err(KeySetError::Malformed("invalid type: map, expected a sequence at line 1 column 0".into())));
        check("[]", Err(KeySetError::Empty));
        check(&format!(r#"[{{"kty":"oct","alg":"HS256","k":"{SECRET}"}}]"#), Err(KeySetError::MissingKid(1)));
        check(&format!(r#"[{{"kty":"oct","alg":"HS256","kid":"","k":"{SECRET}"}}]"#), Err(KeySetError::MissingKid(1)));
        check(&format!(r#"[{{"kty":"oct","alg":"HS256","kid":"a","k":"{SECRET}"}},{{"kty":"oct","alg":"HS256","kid":"a","k":"{SECRET}"}}]"#), Err(KeySetError::DuplicateKid("a".into())));
        check(&format!(r#"[{{"kty":"oct","kid":"a","k":"{SECRET}"}}]"#), unusable("a", "`alg` HS256 or EdDSA"));
        check(&format!(r#"[{{"kty":"oct","alg":"HS512","kid":"a","k":"{SECRET}"}}]"#), unusable("a", "`alg` HS256 or EdDSA"));
        check(&format!(r#"[{{"kty":"OKP","alg":"HS256","kid":"a","k":"{SECRET}"}}]"#), unusable("a", "`kty` oct for an HS256 key"));
        check(&format!(r#"[{{"kty":"oct","alg":"HS256","kid":"a","k":"{short}"}}]"#), unusable("a", "`k`: at least 32 bytes in unpadded base64url"));
        check(&format!(r#"[{{"kty":"oct","alg":"HS256","kid":"a","k":"{SECRET}="}}]"#), unusable("a", "`k`: at least 32 bytes in unpadded base64url"));
        check(&format!(r#"[{{"kty":"OKP","crv":"X25519","alg":"EdDSA","kid":"e","x":"{X}"}}]"#), unusable("e", "`kty` OKP and `crv` Ed25519 for an EdDSA key"));
        check(&format!(r#"[{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"e","x":"{SECRET}A"}}]"#), unusable("e", "`x`: a valid 32-byte Ed25519 public key in unpadded base64url"));
        check(&format!(r#"[{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"e","x":"{small_order}"}}]"#), unusable("e", "`x`: a valid 32-byte Ed25519 public key in unpadded base64url"));
        check(&format!(r#"[{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"e","x":"{X}","d":"{SECRET}A"}}]"#), unusable("e", "`d`: a non-zero 32-byte Ed25519 seed in unpadded base64url"));
        check(&format!(r#"[{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"e","x":"{other_x}","d":"{D}"}}]"#), unusable("e", "`x` to be the public key of `d`"));
    }

    #[test]
    fn the_message_names_the_variable_the_key_and_the_expectation() {
        let err = KeySet::from_jwks_json(r#"[{"kty":"oct","alg":"RS256","kid":"old"}]"#)
            .err()
            .unwrap();
        assert_eq!(err.to_string(), "key `old`: expected `alg` HS256 or EdDSA");
    }
}
