//! Tokens an isolate has verified, kept until they expire: a client that sends the same
//! token again — every request of a session, and a flood of refused ones — is not
//! verified again. A provider's RS256 or ES256 signature costs far more than the rest of
//! a refusal, and a token that passed once passes until its `exp` (with the leeway), its
//! claims the same.
//!
//! Only a token that passed is kept, under its whole text, so a token that differs by a
//! byte is verified. A provider's token is kept with the generation of the key set that
//! verified it (the caller counts its fetches): once the set is fetched again, the token
//! is verified again, so a key the provider withdrew stops a token it signed at the next
//! fetch, as it did before. What a token's claims do not decide — revocation, the
//! session, the rate windows — is asked after, as for a token verified now. At capacity
//! a new token is not kept (`ExpiringMap`): it is verified each time, as before.

use super::{AccessClaims, KeySource};
use crate::expiring::ExpiringMap;

/// Tokens kept at most: a few megabytes of the isolate's memory at a provider's 1–2 KB.
pub const CAPACITY: usize = 4_096;

/// How long a token is kept at most, whatever its `exp`: a full memory turns over, so
/// the tokens in use now are the ones kept.
pub const MAX_KEPT_MS: i64 = 10 * 60 * 1_000;

/// Verified tokens and their claims.
#[derive(Debug)]
pub struct VerifiedTokens {
    tokens: ExpiringMap<(AccessClaims, u64)>,
}

impl VerifiedTokens {
    pub fn new(capacity: usize) -> Self {
        Self {
            tokens: ExpiringMap::new(capacity),
        }
    }

    /// The claims of `token` if it was verified and still holds at `now_ms`: not past its
    /// `exp` with the leeway, and, a provider's, verified with key set `generation`.
    pub fn get(&mut self, token: &str, generation: u64, now_ms: i64) -> Option<AccessClaims> {
        let ((claims, verified_with), _) = self.tokens.get_mut(token, now_ms)?;
        let current = claims.source == KeySource::Edge || *verified_with == generation;
        current.then(|| claims.clone())
    }

    /// Keeps `token`, which passed at `now_ms` with `claims` (key set `generation` for a
    /// provider's), until the first millisecond its `exp` refuses it (`exp` +
    /// `leeway_secs`), or for [`MAX_KEPT_MS`] if that comes first.
    pub fn keep(
        &mut self,
        token: &str,
        claims: &AccessClaims,
        generation: u64,
        leeway_secs: i64,
        now_ms: i64,
    ) {
        let refused_at = claims.exp.saturating_add(leeway_secs).saturating_mul(1_000);
        let until_ms = refused_at.min(now_ms.saturating_add(MAX_KEPT_MS));
        let kept = (claims.clone(), generation);
        self.tokens
            .upsert(token, kept, until_ms, now_ms, |old, new| *old = new);
    }
}
