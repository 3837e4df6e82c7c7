use super::*;
use crate::token::verified::{ProviderSet, VerifiedTokens, MAX_KEPT_MS};

const MS: i64 = 1_000;

fn provider_claims() -> AccessClaims {
    AccessClaims {
        source: KeySource::Provider,
        ..accepted(NOW + 60).expect("claims")
    }
}

#[test]
fn a_kept_token_answers_as_its_verification_would_until_the_millisecond_it_is_refused() {
    let policy = Policy {
        leeway_secs: 5,
        ..policy()
    };
    let token = hs(H1, GOOD);
    let claims = policy.verify(&token, NOW).expect("a good token");
    let mut kept = VerifiedTokens::new(8);
    kept.keep(
        &token,
        &claims,
        ProviderSet::NONE,
        policy.leeway_secs,
        NOW * MS,
    );
    // exp is NOW + 60: with 5 s of leeway the last good second is NOW + 64.
    for now_ms in [
        NOW * MS,
        (NOW + 60) * MS,
        (NOW + 64) * MS + 999,
        (NOW + 65) * MS,
    ] {
        let verified = policy.verify(&token, now_ms.div_euclid(MS)).ok();
        assert_eq!(kept.get(&token, 0, now_ms), verified, "at {now_ms}");
    }
    assert_eq!(kept.get(&token, 0, (NOW + 65) * MS), None);
}

/// A set fetched at NOW, fresh for ten minutes.
fn set(generation: u64) -> ProviderSet {
    ProviderSet {
        generation,
        fresh_until_ms: NOW * MS + 600_000,
    }
}

#[test]
fn a_provider_s_token_is_verified_again_once_its_key_set_is_fetched_again() {
    let mut kept = VerifiedTokens::new(8);
    kept.keep("provider-token", &provider_claims(), set(1), 0, NOW * MS);
    assert_eq!(
        kept.get("provider-token", 1, NOW * MS),
        Some(provider_claims())
    );
    assert_eq!(kept.get("provider-token", 2, NOW * MS), None, "set 2");
    assert_eq!(
        kept.get("provider-token", 1, NOW * MS),
        None,
        "forgotten once found stale"
    );
    let edge = accepted(NOW + 60).expect("claims");
    kept.keep("edge-token", &edge, set(1), 0, NOW * MS);
    assert_eq!(
        kept.get("edge-token", 2, NOW * MS),
        Some(edge),
        "the edge's own keys do not change with the provider's"
    );
}

#[test]
fn a_provider_s_token_is_kept_no_longer_than_its_key_set_is_fresh() {
    let claims = AccessClaims {
        exp: NOW + 3_600,
        ..provider_claims()
    };
    let mut kept = VerifiedTokens::new(8);
    let fresh_until_ms = NOW * MS + 30_000;
    let set = ProviderSet {
        generation: 1,
        fresh_until_ms,
    };
    kept.keep("provider-token", &claims, set, 0, NOW * MS);
    assert_eq!(
        kept.get("provider-token", 1, fresh_until_ms - 1),
        Some(claims.clone())
    );
    assert_eq!(
        kept.get("provider-token", 1, fresh_until_ms),
        None,
        "the set is due to be fetched again: verified again, which fetches it"
    );
    kept.keep("provider-token", &claims, set, 0, fresh_until_ms + 5);
    assert_eq!(
        kept.get("provider-token", 1, fresh_until_ms + 5),
        None,
        "verified with the expired set while its fetch failed: not kept"
    );
    let edge = AccessClaims {
        source: KeySource::Edge,
        ..claims
    };
    kept.keep("edge-token", &edge, ProviderSet::NONE, 0, NOW * MS);
    assert_eq!(kept.get("edge-token", 0, NOW * MS + 60_000), Some(edge));
}

#[test]
fn a_token_that_differs_by_a_byte_is_not_the_kept_one() {
    let token = hs(H1, GOOD);
    let claims = policy().verify(&token, NOW).expect("a good token");
    let mut kept = VerifiedTokens::new(8);
    kept.keep(&token, &claims, ProviderSet::NONE, 0, NOW * MS);
    let mut altered = token.clone();
    let last = altered.pop();
    assert_eq!(kept.get(&altered, 0, NOW * MS), None, "a byte short");
    altered.push(if last == Some('A') { 'B' } else { 'A' });
    assert_eq!(
        kept.get(&altered, 0, NOW * MS),
        None,
        "its last byte changed"
    );
    assert_eq!(
        kept.get(&format!("{token} "), 0, NOW * MS),
        None,
        "a space after"
    );
}

#[test]
fn at_capacity_a_new_token_is_not_kept_and_the_kept_still_answer() {
    let claims = accepted(NOW + 60).expect("claims");
    let mut kept = VerifiedTokens::new(2);
    for token in ["a", "b", "c"] {
        kept.keep(token, &claims, ProviderSet::NONE, 0, NOW * MS);
    }
    assert_eq!(
        kept.get("c", 0, NOW * MS),
        None,
        "not kept: verified each time"
    );
    for token in ["a", "b"] {
        assert_eq!(kept.get(token, 0, NOW * MS), Some(claims.clone()));
    }
}

#[test]
fn a_token_that_expires_far_ahead_is_kept_ten_minutes_at_most() {
    let claims = accepted(NOW + 365 * 24 * 3_600).expect("claims");
    let mut kept = VerifiedTokens::new(8);
    kept.keep("long-lived", &claims, ProviderSet::NONE, 0, NOW * MS);
    let last = NOW * MS + MAX_KEPT_MS - 1;
    assert_eq!(kept.get("long-lived", 0, last), Some(claims));
    assert_eq!(kept.get("long-lived", 0, last + 1), None, "verified again");
}
