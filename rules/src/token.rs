//! Access-token verification: which keys are trusted, and what a valid token is.
//!
//! Keys come from `JWT_KEYS`, a JSON array of JWKs each naming its `kid` and `alg`.
//! A token is checked against the key its header `kid` names, with the algorithm
//! pinned by that key — the token's own `alg` is never trusted to choose it. The
//! verification time is a parameter; the caller reads the clock.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt as _, UntrustedToken, ValidationError};
use serde::Deserialize;

/// HS256 keys shorter than the hash's block size are refused (RFC 7518 §3.2 asks ≥ 256 bits;
/// a full block leaves no room for a guessable secret).
const MIN_HS256_KEY_BYTES: usize = 32;

/// The keys an access token may be signed with, by `kid`.
pub struct KeySet {
    keys: Vec<(String, Hs256Key)>,
}

/// The claims the gateway relies on, from a token that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessClaims {
    pub sub: String,
    pub jti: String,
    /// Expiry, epoch seconds.
    pub exp: i64,
}

/// Why `JWT_KEYS` was refused; names the key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeySetError {
    #[error("JWT_KEYS must be a JSON array of JWKs with kid, alg and key material: {0}")]
    Malformed(String),
    #[error("JWT_KEYS is empty")]
    Empty,
    #[error("JWT_KEYS: key `{0}` appears twice")]
    DuplicateKid(String),
    #[error("JWT_KEYS: key `{kid}`: {problem}")]
    Unusable { kid: String, problem: String },
}

/// Why a token was refused. Goes to the log; the client sees only `TOKEN_INVALID`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    #[error("token is not a compact JWS")]
    Malformed,
    #[error("token names no key or an unknown key")]
    UnknownKey,
    #[error("token algorithm `{0}` is not the algorithm of its key")]
    AlgorithmMismatch(String),
    #[error("token signature does not verify")]
    BadSignature,
    #[error("token claims are missing or mistyped: {0}")]
    BadClaims(String),
    #[error("token has expired")]
    Expired,
}

#[derive(Deserialize)]
struct Jwk {
    kid: String,
    kty: String,
    alg: String,
    k: Option<String>,
}

#[derive(Deserialize)]
struct RequiredClaims {
    sub: String,
    jti: String,
}

impl KeySet {
    /// Parses `JWT_KEYS`.
    pub fn from_jwks_json(json: &str) -> Result<Self, KeySetError> {
        let jwks: Vec<Jwk> =
            serde_json::from_str(json).map_err(|err| KeySetError::Malformed(err.to_string()))?;
        if jwks.is_empty() {
            return Err(KeySetError::Empty);
        }
        let mut keys: Vec<(String, Hs256Key)> = Vec::with_capacity(jwks.len());
        for jwk in jwks {
            if keys.iter().any(|(kid, _)| *kid == jwk.kid) {
                return Err(KeySetError::DuplicateKid(jwk.kid));
            }
            let key = hs256_key(&jwk).map_err(|problem| KeySetError::Unusable {
                kid: jwk.kid.clone(),
                problem: problem.to_owned(),
            })?;
            keys.push((jwk.kid, key));
        }
        Ok(Self { keys })
    }

    /// Verifies `token` at `now_secs` (epoch seconds): key, algorithm, signature, claims.
    /// A token whose `exp` is not after `now_secs` has expired (RFC 7519 §4.1.4).
    pub fn verify(&self, token: &str, now_secs: i64) -> Result<AccessClaims, TokenRejection> {
        let untrusted = UntrustedToken::new(token).map_err(|_| TokenRejection::Malformed)?;
        let kid = untrusted.header().key_id.as_deref();
        let key = self
            .keys
            .iter()
            .find(|(known, _)| Some(known.as_str()) == kid)
            .map(|(_, key)| key)
            .ok_or(TokenRejection::UnknownKey)?;
        let verified = Hs256
            .validator::<RequiredClaims>(key)
            .validate(&untrusted)
            .map_err(|err| match err {
                ValidationError::AlgorithmMismatch { actual, .. } => {
                    TokenRejection::AlgorithmMismatch(actual)
                }
                ValidationError::MalformedClaims(err) => TokenRejection::BadClaims(err.to_string()),
                _ => TokenRejection::BadSignature,
            })?;
        let claims = verified.claims();
        let exp = claims
            .expiration
            .ok_or_else(|| TokenRejection::BadClaims("`exp` is missing".into()))?
            .timestamp();
        if exp <= now_secs {
            return Err(TokenRejection::Expired);
        }
        let RequiredClaims { sub, jti } = &claims.custom;
        if sub.is_empty() || jti.is_empty() {
            return Err(TokenRejection::BadClaims(
                "`sub` and `jti` must not be empty".into(),
            ));
        }
        Ok(AccessClaims {
            sub: sub.clone(),
            jti: jti.clone(),
            exp,
        })
    }
}

fn hs256_key(jwk: &Jwk) -> Result<Hs256Key, &'static str> {
    if jwk.alg != "HS256" {
        return Err("alg must be HS256");
    }
    if jwk.kty != "oct" {
        return Err("an HS256 key must have kty `oct`");
    }
    let bytes = jwk
        .k
        .as_deref()
        .and_then(|k| URL_SAFE_NO_PAD.decode(k).ok())
        .ok_or("`k` must be the key in unpadded base64url")?;
    if bytes.len() < MIN_HS256_KEY_BYTES {
        return Err("an HS256 key must have at least 32 bytes");
    }
    Ok(Hs256Key::new(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jwt_compact::{Claims, Header};

    const NOW: i64 = 1_800_000_000;
    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn keys() -> KeySet {
        let k = URL_SAFE_NO_PAD.encode(SECRET);
        KeySet::from_jwks_json(&format!(
            r#"[{{"kty":"oct","alg":"HS256","kid":"k1","k":"{k}"}}]"#
        ))
        .unwrap()
    }

    fn mint(kid: Option<&str>, claims: serde_json::Value) -> String {
        let mut header = Header::empty();
        if let Some(kid) = kid {
            header = header.with_key_id(kid);
        }
        let mut claims = Claims::new(claims);
        claims.expiration = chrono::DateTime::from_timestamp(NOW + 60, 0);
        Hs256
            .token(&header, &claims, &Hs256Key::new(SECRET))
            .unwrap()
    }

    fn good_claims() -> serde_json::Value {
        serde_json::json!({"sub": "user-1", "jti": "j-1"})
    }

    #[test]
    fn a_token_signed_with_a_known_key_is_accepted() {
        let token = mint(Some("k1"), good_claims());
        let claims = keys().verify(&token, NOW).unwrap();
        assert_eq!(
            claims,
            AccessClaims {
                sub: "user-1".into(),
                jti: "j-1".into(),
                exp: NOW + 60
            }
        );
    }

    #[test]
    fn a_token_expires_at_exp_not_after_it() {
        let token = mint(Some("k1"), good_claims());
        assert!(keys().verify(&token, NOW + 59).is_ok());
        assert_eq!(
            keys().verify(&token, NOW + 60),
            Err(TokenRejection::Expired)
        );
    }

    #[test]
    fn a_token_without_a_known_kid_is_refused() {
        for kid in [None, Some("k2")] {
            let token = mint(kid, good_claims());
            assert_eq!(keys().verify(&token, NOW), Err(TokenRejection::UnknownKey));
        }
    }

    #[test]
    fn a_tampered_token_is_refused() {
        let token = mint(Some("k1"), good_claims());
        let other = mint(
            Some("k1"),
            serde_json::json!({"sub": "admin", "jti": "j-1"}),
        );
        let (head_sig, _) = token.rsplit_once('.').unwrap();
        let (_, other_sig) = other.rsplit_once('.').unwrap();
        let spliced = format!("{head_sig}.{other_sig}");
        assert_eq!(
            keys().verify(&spliced, NOW),
            Err(TokenRejection::BadSignature)
        );
        assert_eq!(
            keys().verify("not.a.token", NOW),
            Err(TokenRejection::Malformed)
        );
        assert_eq!(keys().verify("", NOW), Err(TokenRejection::Malformed));
    }

    #[test]
    fn a_token_with_alg_none_is_refused() {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","kid":"k1"}"#);
        let body = URL_SAFE_NO_PAD.encode(br#"{"sub":"user-1","jti":"j","exp":1900000000}"#);
        let token = format!("{header}.{body}.");
        assert_eq!(
            keys().verify(&token, NOW),
            Err(TokenRejection::AlgorithmMismatch("none".into()))
        );
    }

    #[test]
    fn a_token_missing_sub_or_jti_is_refused() {
        for claims in [
            serde_json::json!({"jti": "j-1"}),
            serde_json::json!({"sub": "user-1"}),
            serde_json::json!({"sub": 7, "jti": "j-1"}),
            serde_json::json!({"sub": "", "jti": "j-1"}),
        ] {
            let token = mint(Some("k1"), claims.clone());
            assert!(
                matches!(
                    keys().verify(&token, NOW),
                    Err(TokenRejection::BadClaims(_))
                ),
                "{claims}"
            );
        }
    }

    #[test]
    fn unusable_key_sets_are_refused_with_the_reason() {
        let short = URL_SAFE_NO_PAD.encode(b"short");
        let cases = [
            ("[]".to_owned(), "empty"),
            ("{}".to_owned(), "JSON array"),
            (
                format!(r#"[{{"kty":"oct","alg":"HS256","kid":"a","k":"{short}"}}]"#),
                "32 bytes",
            ),
            (
                r#"[{"kty":"oct","alg":"RS256","kid":"a","k":"x"}]"#.to_owned(),
                "HS256",
            ),
            (
                r#"[{"kty":"oct","alg":"HS256","kid":"a","k":"***"}]"#.to_owned(),
                "base64url",
            ),
        ];
        for (json, fragment) in cases {
            let err = KeySet::from_jwks_json(&json).err().unwrap().to_string();
            assert!(err.contains(fragment), "{json}: {err}");
        }
    }
}
