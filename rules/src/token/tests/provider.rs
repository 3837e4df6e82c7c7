//! The identity provider's key set document: what is loaded, what is skipped, and one
//! line per reason to refuse the whole document.

use serde_json::{json, Value as Json};

use super::idp::*;
use super::*;

fn parse(keys: &[Json]) -> Result<ProviderKeys, JwksError> {
    ProviderKeys::parse(&document(keys), &keys_own())
}

fn check(keys: &[Json], expected: Result<(), JwksError>) {
    assert_eq!(parse(keys).map(|_| ()), expected, "{}", document(keys));
}

fn unusable(kid: &str, expected: &'static str) -> Result<(), JwksError> {
    Err(JwksError::Unusable {
        kid: kid.into(),
        expected,
    })
}

#[test]
fn rs256_es256_and_eddsa_public_keys_are_loaded_in_order() {
    let x = b64(*KeyPair::from_seed(Seed::new(SEED)).pk);
    let ed = json!({"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"idp-ed","x":x});
    let loaded = parse(&[
        public_jwk(RSA_A, json!({})),
        public_jwk(EC_A, json!({})),
        ed,
    ])
    .unwrap();
    let kids: Vec<&str> = loaded.keys().kids().collect();
    assert_eq!(kids, ["rsa-a", "ec-a", "idp-ed"]);
    assert_eq!(loaded.skipped(), []);
}

#[test]
fn keys_not_for_signing_or_of_other_algorithms_are_skipped_with_their_reason() {
    let loaded = parse(&[
        public_jwk(RSA_B, json!({"use":"enc","kid":null,"alg":"RSA-OAEP"})),
        public_jwk(RSA_B, json!({"kid":"ps","alg":"PS256"})),
        json!({"kty":"EC","crv":"P-384","kid":"p384","alg":"ES384","x":"AA","y":"AA"}),
        public_jwk(RSA_A, json!({})),
    ])
    .unwrap();
    assert_eq!(loaded.keys().kids().collect::<Vec<_>>(), ["rsa-a"]);
    let skipped: Vec<String> = loaded
        .skipped()
        .iter()
        .map(|skipped| format!("{}: {}", skipped.key, skipped.reason))
        .collect();
    assert_eq!(
        skipped,
        [
            "number 1: its `use` is `enc`, not `sig`",
            "ps: its `alg` PS256 is not RS256, ES256 or EdDSA",
            "p384: its `alg` ES384 is not RS256, ES256 or EdDSA",
        ]
    );
}

#[test]
#[rustfmt::skip]
fn a_document_with_one_bad_key_is_refused_naming_the_key_and_what_was_expected() {
    let rsa = |changes: Json| public_jwk(RSA_A, changes);
    let ec = |changes: Json| public_jwk(EC_A, changes);
    let private_rsa: Json = serde_json::from_str(RSA_A).unwrap();
    let private_ec: Json = serde_json::from_str(EC_A).unwrap();
    let secret = json!({"kty":"oct","alg":"HS256","kid":"hs","k":b64(SECRET_1)});
    let unkeyed_secret = json!({"kty":"oct","alg":"HS256","kid":"hs"});
    let (n, e) = (rsa(json!({}))["n"].clone(), rsa(json!({}))["e"].clone());
    check(&[rsa(json!({"kid":null}))], Err(JwksError::MissingKid(1)));
    check(&[ec(json!({})), rsa(json!({"kid":""}))], Err(JwksError::MissingKid(2)));
    check(&[rsa(json!({"alg":null}))], Err(JwksError::MissingAlg("rsa-a".into())));
    check(&[private_rsa], Err(JwksError::PrivateMember { kid: "rsa-a".into(), member: "d" }));
    check(&[private_ec], Err(JwksError::PrivateMember { kid: "ec-a".into(), member: "d" }));
    check(&[rsa(json!({"qi":"AQAB"}))], Err(JwksError::PrivateMember { kid: "rsa-a".into(), member: "qi" }));
    check(&[secret], Err(JwksError::PrivateMember { kid: "hs".into(), member: "k" }));
    check(&[unkeyed_secret], Err(JwksError::SharedSecret("hs".into())));
    check(&[rsa(json!({})), ec(json!({"kid":"rsa-a"}))], Err(JwksError::DuplicateKid("rsa-a".into())));
    check(&[rsa(json!({"kid":"k1"}))], Err(JwksError::KidOfJwtKeys("k1".into())));
    check(&[public_jwk(RSA_1024, json!({}))], unusable("rsa-1024", "`n`: a modulus of at least 2048 bits"));
    check(&[rsa(json!({"kty":"EC"}))], unusable("rsa-a", "`kty` RSA for an RS256 key"));
    check(&[rsa(json!({"n":null}))], unusable("rsa-a", "`n`: the modulus, in unpadded base64url"));
    check(&[rsa(json!({"n":format!("{}=", n.as_str().unwrap())}))], unusable("rsa-a", "`n`: the modulus, in unpadded base64url"));
    check(&[rsa(json!({"e":null}))], unusable("rsa-a", "`e`: the public exponent, in unpadded base64url"));
    let odd_e = "`e`: an odd exponent from 3 to 2^33 - 1, below an odd modulus `n`";
    check(&[rsa(json!({"e":"AQ"}))], unusable("rsa-a", odd_e)); // 1
    check(&[rsa(json!({"e":"AQAA"}))], unusable("rsa-a", odd_e)); // 65536, even
    check(&[rsa(json!({"e":"AgAAAAE"}))], unusable("rsa-a", odd_e)); // 2^33 + 1
    check(&[rsa(json!({"e":n.clone()}))], unusable("rsa-a", odd_e));
    let huge = b64([0xff_u8; 4096 / 8 + 1]);
    check(&[rsa(json!({"n":huge,"e":e}))], unusable("rsa-a", "`n`: a modulus of at most 4096 bits"));
    check(&[ec(json!({"crv":"P-384"}))], unusable("ec-a", "`kty` EC and `crv` P-256 for an ES256 key"));
    let point = "`x` and `y`: a point of P-256, each coordinate 32 bytes in unpadded base64url";
    check(&[ec(json!({"y":ec(json!({}))["x"].clone()}))], unusable("ec-a", point));
    check(&[ec(json!({"x":"AAAA"}))], unusable("ec-a", point));
    check(&[ec(json!({"y":null}))], unusable("ec-a", point));
}

#[test]
#[rustfmt::skip]
fn a_document_that_is_not_a_key_set_or_has_no_key_to_use_is_refused() {
    let own = keys_own();
    let refused = |text: &str| ProviderKeys::parse(text, &own).err().map(|err| err.to_string());
    assert_eq!(refused("<html>not json</html>"), Some("the key set is not JSON (expected value at line 1 column 1)".into()));
    assert_eq!(refused(r#"{"keys":"#), Some("the key set is not JSON (EOF while parsing a value at line 1 column 8)".into()));
    assert_eq!(refused("{}"), Some("expected a JWK Set, an object with a `keys` array of JWK objects (missing field `keys` at line 1 column 2)".into()));
    assert_eq!(refused(r#"{"keys":[1]}"#), Some("expected a JWK Set, an object with a `keys` array of JWK objects (invalid type: integer `1`, expected struct Jwk at line 1 column 10)".into()));
    assert_eq!(refused(r#"{"keys":[]}"#), Some("the key set has no RS256, ES256 or EdDSA signing key (0 skipped)".into()));
    let only_enc = document(&[public_jwk(RSA_A, json!({"use":"enc"}))]);
    assert!(matches!(ProviderKeys::parse(&only_enc, &own), Err(JwksError::NoUsableKey(1))));
    let many = vec![public_jwk(RSA_A, json!({"use":"enc"})); MAX_PROVIDER_KEYS + 1];
    assert!(matches!(parse(&many), Err(JwksError::TooManyKeys(65))));
}

#[test]
fn the_messages_name_the_key_and_the_expectation() {
    let err = parse(&[public_jwk(RSA_1024, json!({}))]).err().unwrap();
    assert_eq!(
        err.to_string(),
        "key `rsa-1024`: expected `n`: a modulus of at least 2048 bits"
    );
    let err = parse(&[public_jwk(RSA_A, json!({"kid":null}))])
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "key number 1 (from 1) has no `kid`; expected every key to name itself"
    );
}
