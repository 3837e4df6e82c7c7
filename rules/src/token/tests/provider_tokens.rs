//! Tokens of the identity provider's keys: accepted when the policy holds, refused with
//! the same reasons as the edge's own — and key confusion still impossible.

use serde_json::json;
use sha2::Digest as _;

use super::idp::*;
use super::*;

const HRSA: &str = r#"{"alg":"RS256","typ":"JWT","kid":"rsa-a"}"#;
const HEC: &str = r#"{"alg":"ES256","typ":"at+jwt","kid":"ec-a"}"#;

fn verify(token: &str) -> Result<AccessClaims, TokenRejection> {
    provider_policy().verify_with(token, Some(&provider()), NOW)
}

fn from_provider(jti: &str) -> Result<AccessClaims, TokenRejection> {
    Ok(AccessClaims {
        jti: jti.into(),
        source: KeySource::Provider,
        ..accepted(NOW + 60).unwrap()
    })
}

#[test]
fn rs256_and_es256_tokens_of_the_provider_are_accepted() {
    let claims = idp_claims(r#","jti":"j-1""#);
    assert_eq!(verify(&rs256(RSA_A, HRSA, &claims)), from_provider("j-1"));
    assert_eq!(verify(&es256(EC_A, HEC, &claims)), from_provider("j-1"));
}

#[test]
fn the_edge_s_own_tokens_are_still_accepted_beside_the_provider() {
    let own = hs(H1, &idp_claims(r#","jti":"j-1""#));
    assert_eq!(
        verify(&own).map(|claims| claims.source),
        Ok(KeySource::Edge)
    );
}

#[test]
fn a_provider_token_without_jti_is_known_by_a_digest_of_what_is_signed() {
    let token = rs256(RSA_A, HRSA, &idp_claims(""));
    let claims = verify(&token).unwrap();
    let signing_input = token.rsplit_once('.').unwrap().0;
    let digest = Sha256::digest(signing_input.as_bytes());
    let expected = format!("sha256-{}", hex::encode(&digest[..16]));
    assert_eq!(claims.jti, expected);
    assert_eq!(claims.jti.len(), 7 + 32);
    let other = rs256(RSA_A, HRSA, &idp_claims(r#","iat":1799999999"#));
    assert_ne!(verify(&other).unwrap().jti, claims.jti);
}

#[test]
fn the_edge_s_own_tokens_still_need_jti() {
    let own = hs(H1, &idp_claims(""));
    assert_eq!(verify(&own), Err(MissingClaim("jti")));
    let ed = eddsa(SEED, HED, &idp_claims(r#","jti":"""#));
    assert_eq!(verify(&ed), Err(InvalidClaim("jti")));
}

#[test]
fn a_provider_s_sid_names_its_own_session_not_a_refresh_family() {
    let token = es256(
        EC_A,
        HEC,
        &idp_claims(r#","jti":"j-1","sid":"idp-session""#),
    );
    assert_eq!(verify(&token).unwrap().sid, None);
    let odd = es256(EC_A, HEC, &idp_claims(r#","jti":"j-1","sid":7"#));
    assert_eq!(verify(&odd).unwrap().sid, None);
}

#[test]
#[rustfmt::skip]
fn a_provider_token_is_refused_for_the_same_reasons_as_the_edge_s() {
    let good = rs256(RSA_A, HRSA, &idp_claims(r#","jti":"j-1""#));
    let (signing_input, _) = good.rsplit_once('.').unwrap();
    let cases: Vec<(&str, String, TokenRejection)> = vec![
        ("wrong issuer", rs256(RSA_A, HRSA, &idp_claims(r#","jti":"j-1""#).replace(ISSUER, "https://evil.example")), WrongIssuer),
        ("wrong audience", rs256(RSA_A, HRSA, &idp_claims(r#","jti":"j-1""#).replace(AUDIENCE, "other")), WrongAudience),
        ("no issuer", rs256(RSA_A, HRSA, r#"{"sub":"u","aud":"payments","exp":1800000060}"#), MissingClaim("iss")),
        ("expired", rs256(RSA_A, HRSA, &idp_claims("").replace("1800000060", "1800000000")), Expired),
        ("no sub", rs256(RSA_A, HRSA, &idp_claims("").replace(r#""sub":"user-1","#, "")), MissingClaim("sub")),
        ("signed by another key", rs256(RSA_B, HRSA, &idp_claims("")), BadSignature),
        ("a kid the set lacks", rs256(RSA_B, &HRSA.replace("rsa-a", "rsa-b"), &idp_claims("")), UnknownKey),
        ("ES256 under the RSA key", es256(EC_A, &HEC.replace("ec-a", "rsa-a"), &idp_claims("")), AlgorithmMismatch),
        ("RS256 under the EC key", rs256(RSA_A, &HRSA.replace("rsa-a", "ec-a"), &idp_claims("")), AlgorithmMismatch),
        ("a signature one byte short", format!("{signing_input}.{}", b64([1_u8; 255])), BadSignature),
        ("a DER ECDSA signature", der_signed(), BadSignature),
        ("a signature longer than any key's", format!("{signing_input}.{}", b64([1_u8; 513])), BadSignature),
        ("jku in the header", rs256(RSA_A, r#"{"alg":"RS256","kid":"rsa-a","jku":"https://evil.example/jwks"}"#, &idp_claims("")), KeyInHeader("jku")),
        ("an embedded jwk", rs256(RSA_A, r#"{"alg":"RS256","kid":"rsa-a","jwk":{}}"#, &idp_claims("")), KeyInHeader("jwk")),
    ];
    for (what, token, expected) in cases {
        assert_eq!(verify(&token), Err(expected), "{what}");
    }
}

/// An ES256 token whose signature is the DER encoding of `r` and `s`, as some libraries
/// wrongly write it: JWS has the 64 raw bytes only.
fn der_signed() -> String {
    let d = serde_json::from_str::<serde_json::Value>(EC_A).unwrap()["d"]
        .as_str()
        .map(|d| URL_SAFE_NO_PAD.decode(d).unwrap())
        .unwrap();
    let key = p256::ecdsa::SigningKey::from_slice(&d).unwrap();
    let input = format!("{}.{}", b64(HEC), b64(idp_claims("")));
    let signature: p256::ecdsa::Signature = rsa::signature::Signer::sign(&key, input.as_bytes());
    format!("{input}.{}", b64(signature.to_der().as_bytes()))
}

#[test]
fn an_hs256_token_made_with_the_rsa_public_key_as_secret_is_refused() {
    // The classic confusion: the attacker HMACs with the public key's bytes, as PEM and
    // as the JWK's modulus, naming the RSA key's kid.
    let header = r#"{"alg":"HS256","typ":"JWT","kid":"rsa-a"}"#;
    let modulus = public_jwk(RSA_A, json!({}))["n"]
        .as_str()
        .unwrap()
        .to_owned();
    for secret in [RSA_A_PUBLIC_PEM.as_bytes(), modulus.as_bytes()] {
        let token = hmac_parts(secret, &b64(header), &b64(idp_claims("")));
        assert_eq!(verify(&token), Err(AlgorithmMismatch));
    }
    let none = format!(
        "{}.{}.",
        b64(r#"{"alg":"none","kid":"rsa-a"}"#),
        b64(idp_claims(""))
    );
    assert_eq!(verify(&none), Err(EmptySignature));
}

#[test]
fn without_a_provider_set_its_tokens_name_an_unknown_key() {
    let token = rs256(RSA_A, HRSA, &idp_claims(r#","jti":"j-1""#));
    assert_eq!(
        provider_policy().verify_with(&token, None, NOW),
        Err(UnknownKey)
    );
    assert_eq!(provider_policy().verify(&token, NOW), Err(UnknownKey));
}
