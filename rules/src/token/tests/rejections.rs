//! One line per reason to refuse a token, each with its own `TokenRejection`.

use super::*;

#[test]
fn a_well_formed_token_is_accepted() {
    check(&policy(), &hs(H1, GOOD), accepted(NOW + 60));
    let spaced = r#"{ "typ" : "JWT", "kid" : "k1", "alg" : "HS256", "cty": "x" }"#;
    let extra = claims_with(r#","iat":1799999990,"nbf":1799999990,"scope":["a"],"x":{}"#);
    let issued = AccessClaims {
        iat: Some(1_799_999_990),
        ..accepted(NOW + 60).unwrap()
    };
    check(&policy(), &hs(spaced, &extra), Ok(issued));
}

#[test]
fn a_header_too_long_for_the_stack_buffer_is_still_read() {
    let long = format!(
        r#"{{"alg":"HS256","kid":"k1","note":"{}"}}"#,
        "x".repeat(400)
    );
    check(&policy(), &hs(&long, GOOD), accepted(NOW + 60));
    let duplicate = format!(
        r#"{{"alg":"HS256","kid":"k1","note":"{}","kid":"k1"}}"#,
        "x".repeat(400)
    );
    check(&policy(), &hs(&duplicate, GOOD), Err(DuplicateHeaderMember));
}

#[test]
fn every_rejection_has_its_own_reason() {
    let good = hs(H1, GOOD);
    let (signing_input, signature) = good.rsplit_once('.').unwrap();
    let (header_b64, payload_b64) = signing_input.split_once('.').unwrap();
    let other_payload = b64(r#"{"sub":"admin","jti":"j-1","exp":1800000060}"#);
    let odd_payload = b64(claims_with(r#","n":12"#)); // a length with trailing bits
    #[rustfmt::skip]
    let cases: Vec<(&str, String, TokenRejection)> = vec![
        ("two parts", signing_input.to_owned(), NotCompact),
        ("four parts", format!("{good}.{signature}"), NotCompact),
        ("one part", "abc".to_owned(), NotCompact),
        ("padding in the header", hmac_parts(SECRET_1, &format!("{header_b64}="), payload_b64), BadBase64("header")),
        ("trailing bits in the header", hmac_parts(SECRET_1, &with_trailing_bits(header_b64), payload_b64), BadBase64("header")),
        ("trailing bits in the payload", hmac_parts(SECRET_1, header_b64, &with_trailing_bits(&odd_payload)), BadBase64("payload")),
        ("standard alphabet in the payload", hmac_parts(SECRET_1, header_b64, &payload_b64.replace('i', "+")), BadBase64("payload")),
        ("padding in the signature", format!("{good}="), BadBase64("signature")),
        ("trailing bits in the signature", format!("{signing_input}.{}", with_trailing_bits(signature)), BadBase64("signature")),
        ("space in the signature", format!("{signing_input}. {signature}"), BadBase64("signature")),
        ("empty signature", format!("{signing_input}."), EmptySignature),
        ("header not JSON", hs("HS256", GOOD), HeaderNotObject),
        ("header a JSON array", hs(r#"["HS256","k1"]"#, GOOD), HeaderNotObject),
        ("header followed by more JSON", hs(r#"{"alg":"HS256","kid":"k1"}{}"#, GOOD), HeaderNotObject),
        ("header member twice", hs(r#"{"alg":"HS256","kid":"k2","kid":"k1"}"#, GOOD), DuplicateHeaderMember),
        ("header member twice, once escaped", hs(r#"{"alg":"HS256","kid":"k1","\u006bid":"k1"}"#, GOOD), DuplicateHeaderMember),
        ("unknown header member twice", hs(r#"{"alg":"HS256","kid":"k1","x":1,"x":1}"#, GOOD), DuplicateHeaderMember),
        ("alg missing", hs(r#"{"kid":"k1"}"#, GOOD), MissingAlgorithm),
        ("alg not a string", hs(r#"{"alg":["HS256"],"kid":"k1"}"#, GOOD), MissingAlgorithm),
        ("alg none", hs(r#"{"alg":"none","kid":"k1"}"#, GOOD), AlgorithmNone),
        ("alg not the key's", hs(r#"{"alg":"HS512","kid":"k1"}"#, GOOD), AlgorithmMismatch),
        ("alg the key's in another casing", hs(r#"{"alg":"hs256","kid":"k1"}"#, GOOD), AlgorithmMismatch),
        ("kid missing", hs(r#"{"alg":"HS256"}"#, GOOD), MissingKeyId),
        ("kid not a string", hs(r#"{"alg":"HS256","kid":1}"#, GOOD), MissingKeyId),
        ("kid unknown", hs(r#"{"alg":"HS256","kid":"k9"}"#, GOOD), UnknownKey),
        ("jku", hs(r#"{"alg":"HS256","kid":"k1","jku":"https://evil.example/jwks"}"#, GOOD), KeyInHeader("jku")),
        ("x5u", hs(r#"{"alg":"HS256","kid":"k1","x5u":"https://evil.example/cert"}"#, GOOD), KeyInHeader("x5u")),
        ("jwk", hs(r#"{"alg":"HS256","kid":"k1","jwk":{"kty":"oct","k":"AAAA"}}"#, GOOD), KeyInHeader("jwk")),
        ("x5c, even null", hs(r#"{"alg":"HS256","kid":"k1","x5c":null}"#, GOOD), KeyInHeader("x5c")),
        ("crit naming a member", hs(r#"{"alg":"HS256","kid":"k1","crit":["exp"],"exp":1}"#, GOOD), CriticalHeader),
        ("crit empty", hs(r#"{"alg":"HS256","kid":"k1","crit":[]}"#, GOOD), CriticalHeader),
        ("crit not an array", hs(r#"{"alg":"HS256","kid":"k1","crit":"exp"}"#, GOOD), CriticalHeader),
        ("payload changed", format!("{header_b64}.{other_payload}.{signature}"), BadSignature),
        ("signed with another key", hmac_parts(SECRET_2, header_b64, payload_b64), BadSignature),
        ("signature truncated", format!("{signing_input}.{}", &signature[..40]), BadSignature),
        ("signature longer than any", format!("{signing_input}.{}", b64([1; 65])), BadSignature),
        ("claims not JSON", hs(H1, "user-1"), ClaimsNotObject),
        ("claims a JSON array", hs(H1, r#"["user-1"]"#), ClaimsNotObject),
        ("claims followed by more JSON", hs(H1, &format!("{GOOD} 1")), ClaimsNotObject),
        ("claim twice", hs(H1, &claims_with(r#","exp":1900000000"#)), DuplicateClaim),
        ("unknown claim twice", hs(H1, &claims_with(r#","x":1,"x":1"#)), DuplicateClaim),
        ("exp missing", hs(H1, r#"{"sub":"user-1","jti":"j-1"}"#), MissingClaim("exp")),
        ("sub missing", hs(H1, r#"{"jti":"j-1","exp":1800000060}"#), MissingClaim("sub")),
        ("jti missing", hs(H1, r#"{"sub":"user-1","exp":1800000060}"#), MissingClaim("jti")),
        ("exp a float", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":1800000060.0}"#), InvalidClaim("exp")),
        ("exp with an exponent", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":1.8e9}"#), InvalidClaim("exp")),
        ("exp a string", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":"1800000060"}"#), InvalidClaim("exp")),
        ("exp beyond i64", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":9223372036854775808}"#), InvalidClaim("exp")),
        ("exp far below i64", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":-1e300}"#), InvalidClaim("exp")),
        ("exp null", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":null}"#), InvalidClaim("exp")),
        ("nbf a float", hs(H1, &claims_with(r#","nbf":1.5"#)), InvalidClaim("nbf")),
        ("iat a string", hs(H1, &claims_with(r#","iat":"now""#)), InvalidClaim("iat")),
        ("sub not a string", hs(H1, r#"{"sub":7,"jti":"j-1","exp":1800000060}"#), InvalidClaim("sub")),
        ("sub empty", hs(H1, r#"{"sub":"","jti":"j-1","exp":1800000060}"#), InvalidClaim("sub")),
        ("jti empty", hs(H1, r#"{"sub":"user-1","jti":"","exp":1800000060}"#), InvalidClaim("jti")),
        ("longer than 8 KiB", hs(H1, &claims_with(&format!(r#","pad":"{}""#, "x".repeat(8192)))), TooLong),
        ("sid not a string", hs(H1, &claims_with(r#","sid":1"#)), InvalidClaim("sid")),
        ("sid empty", hs(H1, &claims_with(r#","sid":"""#)), InvalidClaim("sid")),
        ("expired", hs(H1, r#"{"sub":"user-1","jti":"j-1","exp":1799999999}"#), Expired),
        ("not yet valid", hs(H1, &claims_with(r#","nbf":1800000001"#)), NotYetValid),
    ];
    let policy = policy();
    let wrong: Vec<String> = cases
        .into_iter()
        .filter_map(|(case, token, expected)| {
            let actual = policy.verify(&token, NOW);
            (actual != Err(expected.clone()))
                .then(|| format!("{case}: expected {expected:?}, got {actual:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn alg_none_is_refused_in_any_casing() {
    for alg in ["none", "None", "NONE", "nOnE"] {
        let header = format!(r#"{{"alg":"{alg}","kid":"k1"}}"#);
        check(&policy(), &hs(&header, GOOD), Err(AlgorithmNone));
    }
}
