//! Minting: what is minted is what the policy reads, for both algorithms.

use super::*;

fn new_token<'a>(
    sub: &'a str,
    issuer: Option<&'a str>,
    audience: Option<&'a str>,
) -> NewAccessToken<'a> {
    NewAccessToken {
        sub,
        jti: "j-1",
        sid: None,
        issued_at: NOW,
        expires_at: NOW + 1800,
        issuer,
        audience,
    }
}

#[test]
fn a_minted_token_verifies_for_both_algorithms() {
    let policy = Policy {
        issuer: Some("https://auth.example".into()),
        audience: Some("payments".into()),
        ..policy()
    };
    let claims = new_token("user-1", Some("https://auth.example"), Some("payments"));
    for kid in ["k1", "k2", "ed"] {
        let token = policy.keys.mint(kid, &claims).unwrap();
        let issued = AccessClaims {
            iat: Some(NOW),
            ..accepted(NOW + 1800).unwrap()
        };
        check(&policy, &token, Ok(issued));
    }
}

#[test]
fn a_minted_token_has_the_documented_header_and_claims() {
    let token = keys()
        .mint("ed", &new_token("user-\"1\"", None, Some("payments")))
        .unwrap();
    let parts: Vec<Vec<u8>> = token
        .split('.')
        .map(|part| URL_SAFE_NO_PAD.decode(part).unwrap())
        .collect();
    assert_eq!(parts[0], br#"{"alg":"EdDSA","typ":"JWT","kid":"ed"}"#);
    assert_eq!(
        parts[1],
        br#"{"sub":"user-\"1\"","jti":"j-1","iat":1800000000,"exp":1800001800,"aud":"payments"}"#
    );
    assert_eq!(parts[2].len(), 64);
}

#[test]
fn minting_needs_a_key_that_can_sign_and_claims_the_policy_accepts() {
    let keys = keys();
    let claims = new_token("user-1", None, None);
    assert_eq!(
        keys.mint("k9", &claims),
        Err(MintError::UnknownKey("k9".into()))
    );
    assert_eq!(
        keys.mint("ed-pub", &claims),
        Err(MintError::CannotSign("ed-pub".into()))
    );
    assert_eq!(
        keys.mint("k1", &new_token("", None, None)),
        Err(MintError::EmptyClaim("sub"))
    );
    let no_jti = NewAccessToken {
        jti: "",
        ..new_token("user-1", None, None)
    };
    assert_eq!(keys.mint("k1", &no_jti), Err(MintError::EmptyClaim("jti")));
    let backwards = NewAccessToken {
        expires_at: NOW,
        ..new_token("user-1", None, None)
    };
    assert_eq!(
        keys.mint("k1", &backwards),
        Err(MintError::ExpiresBeforeIssued)
    );
}

#[test]
fn only_existing_keys_with_a_secret_can_sign() {
    let keys = keys();
    assert!(keys.can_sign("k1") && keys.can_sign("k2") && keys.can_sign("ed"));
    assert!(!keys.can_sign("ed-pub"));
    assert!(!keys.can_sign("k9"));
}

#[test]
fn a_minted_session_id_is_read_back() {
    let policy = policy();
    let claims = NewAccessToken {
        sid: Some("family-1"),
        ..new_token("user-1", None, None)
    };
    let token = policy.keys.mint("k1", &claims).unwrap();
    assert_eq!(
        policy.verify(&token, NOW).unwrap().sid.as_deref(),
        Some("family-1")
    );
    let empty = NewAccessToken {
        sid: Some(""),
        ..new_token("user-1", None, None)
    };
    assert_eq!(
        policy.keys.mint("k1", &empty),
        Err(MintError::EmptyClaim("sid"))
    );
}
