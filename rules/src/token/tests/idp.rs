//! An identity provider's fixtures: the test keys of `testdata/jwks/` (made once with
//! `openssl`, see its README), their public JWKs, key set documents made of them, and
//! tokens signed with them. RSA keys are never generated here: that is slow unoptimised.

use rsa::pkcs1v15::SigningKey as RsaSigningKey;
use rsa::signature::{SignatureEncoding as _, Signer as _};
use rsa::{BigUint, RsaPrivateKey};
use serde_json::Value as Json;

use super::*;

pub(super) const RSA_A: &str = include_str!("../../../../testdata/jwks/rsa-a.private.json");
pub(super) const RSA_B: &str = include_str!("../../../../testdata/jwks/rsa-b.private.json");
pub(super) const RSA_1024: &str = include_str!("../../../../testdata/jwks/rsa-1024.private.json");
pub(super) const EC_A: &str = include_str!("../../../../testdata/jwks/ec-a.private.json");
/// The RSA key `rsa-a`'s public key as PEM: what an attacker would HMAC with.
pub(super) const RSA_A_PUBLIC_PEM: &str =
    include_str!("../../../../testdata/jwks/rsa-a.public.pem");

pub(super) const ISSUER: &str = "https://idp.example";
pub(super) const AUDIENCE: &str = "payments";

const PRIVATE_MEMBERS: [&str; 6] = ["d", "p", "q", "dp", "dq", "qi"];

fn json(text: &str) -> Json {
    serde_json::from_str(text).unwrap()
}

/// The public JWK of a private one, with `changes` applied (`null` removes a member).
pub(super) fn public_jwk(private: &str, changes: Json) -> Json {
    let mut jwk = json(private);
    let members = jwk.as_object_mut().unwrap();
    for member in PRIVATE_MEMBERS {
        members.remove(member);
    }
    for (name, value) in changes.as_object().unwrap() {
        match value {
            Json::Null => members.remove(name),
            value => members.insert(name.clone(), value.clone()),
        };
    }
    jwk
}

/// A JWK Set document of these keys.
pub(super) fn document(keys: &[Json]) -> String {
    serde_json::json!({ "keys": keys }).to_string()
}

/// The provider's keys `rsa-a` and `ec-a`, beside the fixtures' own keys.
pub(super) fn provider() -> ProviderKeys {
    let keys = [
        public_jwk(RSA_A, serde_json::json!({})),
        public_jwk(EC_A, serde_json::json!({})),
    ];
    ProviderKeys::parse(&document(&keys), &keys_own()).unwrap()
}

/// The fixtures' own key set (`k1`, `k2`, `ed`, `ed-pub`).
pub(super) fn keys_own() -> KeySet {
    keys()
}

/// A policy that requires the provider's issuer and audience.
pub(super) fn provider_policy() -> Policy {
    Policy {
        issuer: Some(ISSUER.into()),
        audience: Some(AUDIENCE.into()),
        ..policy()
    }
}

/// Claims the provider would issue, with `extra` members.
pub(super) fn idp_claims(extra: &str) -> String {
    format!(r#"{{"sub":"user-1","iss":"{ISSUER}","aud":"{AUDIENCE}","exp":1800000060{extra}}}"#)
}

fn number(jwk: &Json, member: &str) -> BigUint {
    let text = jwk[member].as_str().unwrap();
    BigUint::from_bytes_be(&URL_SAFE_NO_PAD.decode(text).unwrap())
}

/// A token of this header and these claims, signed RS256 with the private JWK `private`.
pub(super) fn rs256(private: &str, header: &str, claims: &str) -> String {
    let jwk = json(private);
    let primes = vec![number(&jwk, "p"), number(&jwk, "q")];
    let key = RsaPrivateKey::from_components(
        number(&jwk, "n"),
        number(&jwk, "e"),
        number(&jwk, "d"),
        primes,
    )
    .unwrap();
    let input = format!("{}.{}", b64(header), b64(claims));
    let signature = RsaSigningKey::<Sha256>::new(key).sign(input.as_bytes());
    format!("{input}.{}", b64(signature.to_vec()))
}

/// A token of this header and these claims, signed ES256 (RFC 6979, so deterministic)
/// with the private JWK `private`.
pub(super) fn es256(private: &str, header: &str, claims: &str) -> String {
    let jwk = json(private);
    let d = URL_SAFE_NO_PAD.decode(jwk["d"].as_str().unwrap()).unwrap();
    let key = p256::ecdsa::SigningKey::from_slice(&d).unwrap();
    let input = format!("{}.{}", b64(header), b64(claims));
    let signature: p256::ecdsa::Signature = key.sign(input.as_bytes());
    format!("{input}.{}", b64(signature.to_bytes()))
}
