//! Wycheproof vectors (`testdata/wycheproof/` of the repository, read at run time).
//!
//! - `ed25519_test.json`: the EdDSA signature check accepts exactly the `valid` vectors.
//!   `acceptable` ones (none in this file today) must be refused: a token verifier gains
//!   nothing from the leniencies that label allows, so strict is the safe side.
//! - `json_web_signature_test.json`, the groups whose key is HS256: the JWS layer
//!   (structure, header, signature; no claims, as these payloads are not claims)
//!   accepts exactly the `valid` vectors, less four known label errors.
//!
//! - the same file's groups whose public key is RS256 or ES256, as an identity
//!   provider's key set: the JWS layer accepts exactly the `valid` vectors (every one
//!   names its key), and no vector of a key the provider's rules refuse is valid (the
//!   `rejectWrongUse` and `rejectWrongKeyOps` groups, whose keys have no `alg`).
//!
//! Every HS256 vector names its key by `kid`, and the test asserts so rather than
//! supplying one: a `kid` cannot be added to a signed header, and a valid vector without
//! one would be a real disagreement with our policy, which requires it.
//!
//! When the vectors are missing, these tests fail and say where they were looked for.

use serde_json::Value as Json;

use crate::token::jws::verify_jws;
use crate::token::keys::Key;
use crate::token::{KeySet, ProviderKeys};

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/wycheproof/");

/// Labelled wrongly in the file (see testdata/README.md): 367 and 370 are
/// labelled invalid yet are byte-identical to the valid 357; 372 and 373 are labelled
/// valid yet hold a `?`, which no strict base64url decoder accepts.
const JWS_LABEL_ERRORS: [u64; 4] = [367, 370, 372, 373];

fn load(file: &str) -> Json {
    let path = format!("{VECTORS}{file}");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("Wycheproof vectors not found at {path} ({err})"));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{path} is not JSON: {err}"))
}

fn text<'a>(value: &'a Json, member: &str) -> &'a str {
    value[member]
        .as_str()
        .unwrap_or_else(|| panic!("`{member}` missing in {value}"))
}

#[test]
fn eddsa_accepts_exactly_the_valid_wycheproof_signatures() {
    let file = load("ed25519_test.json");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for group in file["testGroups"].as_array().unwrap() {
        let public = hex::decode(text(&group["publicKey"], "pk")).unwrap();
        let key = ed25519_compact::PublicKey::from_slice(&public)
            .ok()
            .map(|public| Key::EdDsa {
                public,
                secret: None,
            });
        for test in group["tests"].as_array().unwrap() {
            let message = hex::decode(text(test, "msg")).unwrap();
            let signature = hex::decode(text(test, "sig")).unwrap_or_default();
            let accepted = key
                .as_ref()
                .is_some_and(|key| key.verifies(&message, &signature));
            if accepted != (text(test, "result") == "valid") {
                wrong.push(format!("tcId {}: accepted = {accepted}", test["tcId"]));
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(checked, file["numberOfTests"].as_u64().unwrap());
}

#[test]
fn the_jws_layer_accepts_exactly_the_valid_wycheproof_hs256_tokens() {
    let file = load("json_web_signature_test.json");
    let (mut checked, mut skipped) = (0, 0);
    let mut wrong = Vec::new();
    for group in file["testGroups"].as_array().unwrap() {
        let jwk = &group["private"];
        if jwk["kty"] != "oct" || jwk["alg"] != "HS256" {
            continue;
        }
        let keys = KeySet::from_jwks_json(&format!("[{jwk}]")).unwrap();
        for test in group["tests"].as_array().unwrap() {
            let id = test["tcId"].as_u64().unwrap();
            if JWS_LABEL_ERRORS.contains(&id) {
                skipped += 1;
                continue;
            }
            let valid = text(test, "result") == "valid";
            let token = text(test, "jws");
            if valid {
                assert!(
                    token.split('.').next().is_some_and(names_a_kid),
                    "tcId {id} has no kid"
                );
            }
            let result = verify_jws(token, &keys, None);
            if result.is_ok() != valid {
                wrong.push(format!("tcId {id} ({}): {result:?}", text(test, "comment")));
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(skipped, JWS_LABEL_ERRORS.len());
    assert_eq!(checked, 17 + 1 + 1 + 21 - JWS_LABEL_ERRORS.len());
}

fn names_a_kid(header_b64: &str) -> bool {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header_b64)
        .ok()
        .and_then(|header| serde_json::from_slice::<Json>(&header).ok())
        .is_some_and(|header| header["kid"].is_string())
}

#[test]
fn the_jws_layer_accepts_exactly_the_valid_wycheproof_rs256_and_es256_tokens() {
    let file = load("json_web_signature_test.json");
    let own = KeySet::of(Vec::new());
    let (mut checked, mut groups, mut refused_sets) = (0, 0, 0);
    let mut wrong = Vec::new();
    for group in file["testGroups"].as_array().unwrap() {
        let jwk = &group["public"];
        // Our algorithms' keys, and the keys that name none.
        let ours = matches!(jwk["alg"].as_str(), Some("RS256" | "ES256"));
        let unpinned = jwk.is_object() && jwk["alg"].is_null();
        if !(ours || unpinned) {
            continue;
        }
        groups += 1;
        let provider = ProviderKeys::parse(&format!(r#"{{"keys":[{jwk}]}}"#), &own);
        refused_sets += usize::from(provider.is_err());
        for test in group["tests"].as_array().unwrap() {
            let id = test["tcId"].as_u64().unwrap();
            let token = text(test, "jws");
            let valid = text(test, "result") == "valid";
            let result = match &provider {
                Ok(provider) => verify_jws(token, &own, Some(provider.keys())).map(|_| ()),
                Err(err) => {
                    assert!(!valid, "tcId {id}: a valid vector's key refused: {err}");
                    continue;
                }
            };
            if result.is_ok() != valid {
                wrong.push(format!("tcId {id} ({}): {result:?}", text(test, "comment")));
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // ES256: 15 + 24; RS256: 226 + 5 + RFC 7520's figure twice; the 4 refused sets' own.
    assert_eq!(
        (groups, refused_sets, checked),
        (10, 4, 15 + 24 + 226 + 5 + 2)
    );
}
