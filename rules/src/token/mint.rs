//! Minting access tokens (`docs/design/sessions.md`): the edge's half of the contract the policy checks.
//!
//! The edge supplies what the rules may not make themselves — the random `jti` and the
//! times — and names the key. The token is written here rather than through a JWT
//! library so that it is exactly what `Policy::verify` reads: header
//! `{"alg","typ":"JWT","kid"}`, claims `sub`, `jti`, `iat`, `exp` and `iss`/`aud` when
//! given, canonical base64url. A token this would mint but the policy refuse is an error
//! here, not a surprise at the next request.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::Serialize;

use super::keys::KeySet;

/// What a new access token says; the edge supplies jti (random) and the times.
pub struct NewAccessToken<'a> {
    pub sub: &'a str,
    pub jti: &'a str,
    /// The session (refresh-token family) the token belongs to, so revoking the
    /// session revokes the token.
    pub sid: Option<&'a str>,
    /// Epoch seconds.
    pub issued_at: i64,
    /// Epoch seconds; must be after `issued_at`.
    pub expires_at: i64,
    pub issuer: Option<&'a str>,
    pub audience: Option<&'a str>,
}

/// Why a token cannot be minted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MintError {
    #[error("no key `{0}` in JWT_KEYS")]
    UnknownKey(String),
    #[error("key `{0}` cannot sign: it is an EdDSA key without its private `d`")]
    CannotSign(String),
    #[error("access token claim `{0}` must not be empty")]
    EmptyClaim(&'static str),
    #[error("access token must expire after it is issued")]
    ExpiresBeforeIssued,
}

#[derive(Serialize)]
struct Header<'a> {
    alg: &'static str,
    typ: &'static str,
    kid: &'a str,
}

#[derive(Serialize)]
struct Claims<'a> {
    sub: &'a str,
    jti: &'a str,
    iat: i64,
    exp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iss: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<&'a str>,
}

impl KeySet {
    /// Signs with the key `kid` (must exist and be able to sign: HS256, or EdDSA with `d`).
    /// Header: {"alg":..,"typ":"JWT","kid":..}. Claims: sub, jti, sid, iat, exp, iss/aud when given.
    pub fn mint(&self, kid: &str, token: &NewAccessToken<'_>) -> Result<String, MintError> {
        let key = self
            .get(kid)
            .ok_or_else(|| MintError::UnknownKey(kid.to_owned()))?;
        if token.sub.is_empty() {
            return Err(MintError::EmptyClaim("sub"));
        }
        if token.jti.is_empty() {
            return Err(MintError::EmptyClaim("jti"));
        }
        if token.sid == Some("") {
            return Err(MintError::EmptyClaim("sid"));
        }
        if token.expires_at <= token.issued_at {
            return Err(MintError::ExpiresBeforeIssued);
        }
        let header = Header {
            alg: key.algorithm().name(),
            typ: "JWT",
            kid,
        };
        let claims = Claims {
            sub: token.sub,
            jti: token.jti,
            sid: token.sid,
            iat: token.issued_at,
            exp: token.expires_at,
            iss: token.issuer,
            aud: token.audience,
        };
        let mut jws = String::with_capacity(256);
        URL_SAFE_NO_PAD.encode_string(to_json(&header), &mut jws);
        jws.push('.');
        URL_SAFE_NO_PAD.encode_string(to_json(&claims), &mut jws);
        let signature = key
            .sign(jws.as_bytes())
            .ok_or_else(|| MintError::CannotSign(kid.to_owned()))?;
        jws.push('.');
        URL_SAFE_NO_PAD.encode_string(signature, &mut jws);
        Ok(jws)
    }
}

fn to_json(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("structs of strings and integers always serialize")
}
