//! Tokens an isolate has verified, kept until they expire: a client that sends the same
//! token again — every request of a session, and a flood of refused ones — is not
//! verified again. A provider's RS256 or ES256 signature costs far more than the rest of
//! a refusal, and a token that passed once passes until its `exp` (with the leeway), its
//! claims the same.
//!
//! Only a token that passed is kept, under its whole text, so a token that differs by a
//! byte is verified. A provider's token is kept with the generation of the key set that
//! verified it (the caller counts its fetches), and no longer than that set is fresh (its
//! TTL): once the set is fetched again, or due to be, the token is verified again — which
//! fetches an expired set — so a key the provider withdrew stops a token it signed within
//! the set's TTL, as it did before. What a token's claims do not decide — revocation, the
//! session, the rate windows — is asked after, as for a token verified now. At capacity
//! a new token is not kept (`ExpiringMap`): it is verified each time, as before.

use super::{AccessClaims, KeySource};
use crate::expiring::ExpiringMap;

/// Tokens kept at most: a few megabytes of the isolate's memory at a provider's 1–2 KB.
pub const CAPACITY: usize = 4_096;

/// How long a token is kept at most, whatever its `exp`: a full memory turns over, so
/// the tokens in use now are the ones kept.
pub const MAX_KEPT_MS: i64 = 10 * 60 * 1_000;

/// The provider's key set as a request found it: the fetch it came from (the caller
/// counts them) and until when it is fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderSet {
    pub generation: u64,
    pub fresh_until_ms: i64,
}

impl ProviderSet {
    /// No provider, or no set yet: nothing of the provider's is kept by it.
    pub const NONE: ProviderSet = ProviderSet {
        generation: 0,
        fresh_until_ms: i64::MIN,
    };
}

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
    /// `exp` with the leeway, and, a provider's, verified with key set `generation` while
    /// it is fresh. A provider's token of an older set is forgotten, to be verified anew.
    pub fn get(&mut self, token: &str, generation: u64, now_ms: i64) -> Option<AccessClaims> {
        let ((claims, verified_with), _) = self.tokens.get_mut(token, now_ms)?;
        if claims.source == KeySource::Edge || *verified_with == generation {
            return Some(claims.clone());
        }
        self.tokens.take(token, now_ms);
        None
    }

    /// Keeps `token`, which passed at `now_ms` with `claims`, until the first millisecond
    /// its `exp` refuses it (`exp` + `leeway_secs`), for [`MAX_KEPT_MS`] at most, and a
    /// provider's no longer than `set`, which verified it, is fresh.
    pub fn keep(
        &mut self,
        token: &str,
        claims: &AccessClaims,
        set: ProviderSet,
        leeway_secs: i64,
        now_ms: i64,
    ) {
        let refused_at = claims.exp.saturating_add(leeway_secs).saturating_mul(1_000);
        let mut until_ms = refused_at.min(now_ms.saturating_add(MAX_KEPT_MS));
        if claims.source == KeySource::Provider {
            until_ms = until_ms.min(set.fresh_until_ms);
        }
        let kept = (claims.clone(), set.generation);
        self.tokens
            .upsert(token, kept, until_ms, now_ms, |old, new| *old = new);
    }
}
