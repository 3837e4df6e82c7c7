//! Time boundaries with and without leeway, key rotation, algorithm pinning, issuer
//! and audience.

use super::*;

#[test]
fn exp_equal_to_now_is_expired() {
    check(
        &policy(),
        &hs(
            H1,
            &format!(r#"{{"sub":"user-1","jti":"j-1","exp":{NOW}}}"#),
        ),
        Err(Expired),
    );
}

#[test]
fn exp_one_second_after_now_is_accepted() {
    let exp = NOW + 1;
    check(
        &policy(),
        &hs(
            H1,
            &format!(r#"{{"sub":"user-1","jti":"j-1","exp":{exp}}}"#),
        ),
        accepted(exp),
    );
}

#[test]
fn leeway_extends_exp_by_its_seconds_and_no_more() {
    let policy = Policy {
        leeway_secs: 5,
        ..policy()
    };
    let token = |exp: i64| {
        hs(
            H1,
            &format!(r#"{{"sub":"user-1","jti":"j-1","exp":{exp}}}"#),
        )
    };
    check(&policy, &token(NOW - 5), Err(Expired));
    check(&policy, &token(NOW - 4), accepted(NOW - 4));
}

#[test]
fn leeway_brings_nbf_forward_by_its_seconds_and_no_more() {
    let policy = Policy {
        leeway_secs: 5,
        ..policy()
    };
    let token = |nbf: i64| hs(H1, &claims_with(&format!(r#","nbf":{nbf}"#)));
    check(&policy, &token(NOW + 5), accepted(NOW + 60));
    check(&policy, &token(NOW + 6), Err(NotYetValid));
}

#[test]
fn times_at_the_ends_of_i64_do_not_overflow() {
    let policy = Policy {
        leeway_secs: i64::MAX,
        ..policy()
    };
    let token = |exp: i64, nbf: i64| {
        hs(
            H1,
            &format!(r#"{{"sub":"user-1","jti":"j-1","exp":{exp},"nbf":{nbf}}}"#),
        )
    };
    let early = policy.verify(&token(i64::MIN, i64::MAX), i64::MIN);
    assert_eq!(early, Err(NotYetValid));
    let late = policy.verify(&token(i64::MAX, i64::MAX), i64::MAX);
    assert_eq!(late, accepted(i64::MAX));
}

#[test]
fn tokens_from_every_configured_key_are_accepted_during_rotation() {
    check(&policy(), &hs(H1, GOOD), accepted(NOW + 60));
    let by_k2 = hmac_parts(SECRET_2, &b64(H2), &b64(GOOD));
    check(&policy(), &by_k2, accepted(NOW + 60));
}

#[test]
fn an_eddsa_token_is_accepted_by_its_key_even_one_that_only_verifies() {
    check(&policy(), &eddsa(SEED, HED, GOOD), accepted(NOW + 60));
    let header = r#"{"alg":"EdDSA","kid":"ed-pub"}"#;
    check(
        &policy(),
        &eddsa(VERIFY_ONLY_SEED, header, GOOD),
        accepted(NOW + 60),
    );
    check(&policy(), &eddsa(SEED, header, GOOD), Err(BadSignature));
}

#[test]
fn an_hs256_token_naming_an_eddsa_key_is_refused() {
    check(
        &policy(),
        &hs(r#"{"alg":"HS256","kid":"ed"}"#, GOOD),
        Err(AlgorithmMismatch),
    );
}

#[test]
fn the_eddsa_public_key_as_an_hmac_secret_is_refused() {
    let public = *KeyPair::from_seed(Seed::new(SEED)).pk;
    let header = b64(r#"{"alg":"HS256","kid":"ed"}"#);
    for secret in [public.to_vec(), b64(public).into_bytes()] {
        let forged = hmac_parts(&secret, &header, &b64(GOOD));
        check(&policy(), &forged, Err(AlgorithmMismatch));
    }
}

#[test]
fn an_eddsa_token_naming_an_hs256_key_is_refused() {
    check(
        &policy(),
        &eddsa(SEED, r#"{"alg":"EdDSA","kid":"k1"}"#, GOOD),
        Err(AlgorithmMismatch),
    );
}

#[test]
fn a_configured_issuer_must_be_the_tokens_iss() {
    let policy = Policy {
        issuer: Some("https://auth.example".into()),
        ..policy()
    };
    check(
        &policy,
        &hs(H1, &claims_with(r#","iss":"https://auth.example""#)),
        accepted(NOW + 60),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","iss":"https://evil.example""#)),
        Err(WrongIssuer),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","iss":["https://auth.example"]"#)),
        Err(InvalidClaim("iss")),
    );
    check(&policy, &hs(H1, GOOD), Err(MissingClaim("iss")));
}

#[test]
fn a_configured_audience_must_be_the_tokens_aud_or_in_it() {
    let policy = Policy {
        audience: Some("payments".into()),
        ..policy()
    };
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":"payments""#)),
        accepted(NOW + 60),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":["queue","payments"]"#)),
        accepted(NOW + 60),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":"queue""#)),
        Err(WrongAudience),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":["queue"]"#)),
        Err(WrongAudience),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":[]"#)),
        Err(WrongAudience),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":["payments",1]"#)),
        Err(InvalidClaim("aud")),
    );
    check(
        &policy,
        &hs(H1, &claims_with(r#","aud":{"payments":true}"#)),
        Err(InvalidClaim("aud")),
    );
    check(&policy, &hs(H1, GOOD), Err(MissingClaim("aud")));
}

#[test]
fn unconfigured_issuer_and_audience_are_not_read() {
    check(
        &policy(),
        &hs(H1, &claims_with(r#","iss":1,"aud":{"x":[]}"#)),
        accepted(NOW + 60),
    );
}
