//! Access tokens (`docs/design/sessions.md`): which keys are trusted, what a valid token is, and how
//! the edge mints one.
//!
//! Verification is a policy, not a library default: every leniency that would let one
//! token be read two ways, or let a token choose how it is checked, is refused, each with
//! its own reason. The time is a parameter and so is every random byte; the caller reads
//! the clock and draws the `jti`.
//!
//! - `keys` — `JWT_KEYS`, parsed once; each key pinned to one algorithm.
//! - `provider` — an identity provider's key set (`JWT_JWKS_URL`), public keys only.
//! - `public_keys` — its RS256 and ES256 keys, verification only.
//! - `key_cache` — when an isolate fetches the provider's key set again.
//! - `verified` — tokens an isolate verified, kept until they expire.
//! - `jws` — the compact JWS layer: structure, header, signature. Knows no claims.
//! - `claims` — the claims policy: types, `exp`/`nbf` with leeway, `iss`, `aud`.
//! - `mint` — new access tokens, written exactly as the policy reads them.
//! - `json` — the one-pass JSON reading the header and the claims share.
//!
//! Order of the checks: structure and encoding, then the header and its key, then the
//! signature, then the claims — the cheap refusals first, and nothing in the payload
//! is believed before its signature holds.

mod claims;
mod json;
mod jwk;
mod jws;
pub mod key_cache;
mod keys;
mod mint;
mod provider;
mod public_keys;
pub mod verified;

#[cfg(test)]
mod tests;

pub use claims::{AccessClaims, DERIVED_JTI_PREFIX};
pub use keys::{KeySet, KeySetError};
pub use mint::{MintError, NewAccessToken};
pub use provider::{JwksError, ProviderKeys, Skipped, MAX_PROVIDER_KEYS};

/// Our tokens are a few hundred bytes, a provider's a kilobyte or two; a longer one is
/// refused before it is read, so no token can make the reading of its header or claims
/// expensive.
const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The verification policy of the edge: its own keys and what the claims must say
/// (`JWT_KEYS`, `JWT_ISSUER`, `JWT_AUDIENCE`, `JWT_LEEWAY_SECONDS`). The identity
/// provider's keys, which change while the policy stands, are given with each token.
pub struct Policy {
    pub keys: KeySet,
    /// When set, `iss` must be exactly this.
    pub issuer: Option<String>,
    /// When set, `aud` must be this or an array containing it.
    pub audience: Option<String>,
    /// Clock skew allowed on `exp` and `nbf`, seconds.
    pub leeway_secs: i64,
}

impl Policy {
    /// Verifies a compact JWS access token at `now_secs` (epoch seconds) with the edge's
    /// own keys.
    pub fn verify(&self, token: &str, now_secs: i64) -> Result<AccessClaims, TokenRejection> {
        self.verify_with(token, None, now_secs)
    }

    /// Verifies a compact JWS access token at `now_secs` (epoch seconds) with the edge's
    /// own keys and the identity provider's, when there is a set of them.
    pub fn verify_with(
        &self,
        token: &str,
        provider: Option<&ProviderKeys>,
        now_secs: i64,
    ) -> Result<AccessClaims, TokenRejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenRejection::TooLong);
        }
        let verified = jws::verify_jws(token, &self.keys, provider.map(ProviderKeys::keys))?;
        claims::check(&verified, self, now_secs)
    }
}

/// Whose key a token was signed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// One of the edge's own keys (`JWT_KEYS`): a token the edge minted.
    Edge,
    /// One of the identity provider's (`JWT_JWKS_URL`).
    Provider,
}

/// Why a token was refused: one variant per reason, for the log. The client sees only
/// that its token is not valid. No variant carries text from the token, so a token
/// cannot write into the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    #[error("token is longer than 8 KiB")]
    TooLong,
    #[error("token is not three dot-separated parts")]
    NotCompact,
    #[error("token {0} is not canonical unpadded base64url")]
    BadBase64(&'static str),
    #[error("token signature is empty")]
    EmptySignature,
    #[error("token header is not a JSON object")]
    HeaderNotObject,
    #[error("token header names a member twice")]
    DuplicateHeaderMember,
    #[error("token header has no string `alg`")]
    MissingAlgorithm,
    #[error("token algorithm is `none`")]
    AlgorithmNone,
    #[error("token header has `{0}`, which would let the token choose its key")]
    KeyInHeader(&'static str),
    #[error("token header has `crit`; no extension is understood")]
    CriticalHeader,
    #[error("token header has no string `kid`")]
    MissingKeyId,
    #[error("token names an unknown key")]
    UnknownKey,
    #[error("token algorithm is not the algorithm of its key")]
    AlgorithmMismatch,
    #[error("token signature does not verify")]
    BadSignature,
    #[error("token claims are not a JSON object")]
    ClaimsNotObject,
    #[error("token names a claim twice")]
    DuplicateClaim,
    #[error("token claim `{0}` is missing")]
    MissingClaim(&'static str),
    #[error("token claim `{0}` has the wrong type or is empty")]
    InvalidClaim(&'static str),
    #[error("token has expired")]
    Expired,
    #[error("token is not yet valid")]
    NotYetValid,
    #[error("token issuer is not the configured issuer")]
    WrongIssuer,
    #[error("token audience does not include the configured audience")]
    WrongAudience,
}
