//! An identity provider for the end-to-end tests: its keys (`testdata/jwks/`, made once
//! with `openssl`), the key set documents its endpoint serves ([`harness::jwks_server`]),
//! the tokens it signs, and an edge set up to trust it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use harness::jwks_server::JwksServer;
use harness::signed::now_ms;
use rsa::pkcs1v15::SigningKey as RsaSigningKey;
use rsa::signature::{SignatureEncoding as _, Signer as _};
use rsa::{BigUint, RsaPrivateKey};
use serde_json::{json, Value};
use sha2::Sha256;

use super::EdgeSetup;

pub const ISSUER: &str = "https://idp.e2e.example/";
pub const AUDIENCE: &str = "edge-e2e";

/// The private JWK of test key `name` (`rsa-a`, `rsa-b`, `rsa-1024`, `ec-a`).
pub fn private_jwk(name: &str) -> Value {
    let path = harness::workspace().join(format!("testdata/jwks/{name}.private.json"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Its public JWK, as a provider publishes it.
pub fn public_jwk(name: &str) -> Value {
    let mut jwk = private_jwk(name);
    let members = jwk.as_object_mut().expect("a JWK object");
    for private in ["d", "p", "q", "dp", "dq", "qi"] {
        members.remove(private);
    }
    jwk
}

/// A JWK Set of these JWKs.
pub fn key_set(keys: &[Value]) -> String {
    json!({ "keys": keys }).to_string()
}

/// The JWK Set of the public keys `names`.
pub fn key_set_of(names: &[&str]) -> String {
    key_set(
        &names
            .iter()
            .map(|name| public_jwk(name))
            .collect::<Vec<_>>(),
    )
}

/// What the provider says of `sub` for this edge: issuer, audience, ten minutes.
pub fn claims(sub: &str) -> Value {
    let now = now_ms() / 1000;
    json!({ "sub": sub, "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 600 })
}

/// `claims` signed with test key `key` (RS256 or ES256, by its `alg`), its header naming
/// the kid `kid`.
pub fn token_with_kid(key: &str, kid: &str, claims: &Value) -> String {
    let jwk = private_jwk(key);
    let alg = jwk["alg"].as_str().expect("an alg");
    let header = json!({ "alg": alg, "typ": "JWT", "kid": kid });
    let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
    let signature = match alg {
        "RS256" => rsa_signing_key(&jwk).sign(input.as_bytes()).to_vec(),
        _ => {
            let key = p256::ecdsa::SigningKey::from_slice(&bytes(&jwk, "d")).expect("a P-256 key");
            let signature: p256::ecdsa::Signature = key.sign(input.as_bytes());
            signature.to_bytes().to_vec()
        }
    };
    format!("{input}.{}", b64(signature))
}

/// `claims` signed with test key `key`, under its own kid.
pub fn token(key: &str, claims: &Value) -> String {
    token_with_kid(key, key, claims)
}

/// The alg confusion attack: `claims` under the kid `kid` with `alg` HS256, MACed with the
/// bytes of `secret` (an RSA public key's PEM, which anyone can read).
pub fn hs256_with(secret: &[u8], kid: &str, claims: &Value) -> String {
    use hmac::{Hmac, Mac as _};
    let header = json!({ "alg": "HS256", "typ": "JWT", "kid": kid });
    let input = format!("{}.{}", b64(header.to_string()), b64(claims.to_string()));
    let mac = Hmac::<Sha256>::new_from_slice(secret)
        .expect("any key length")
        .chain_update(input.as_bytes())
        .finalize();
    format!("{input}.{}", b64(mac.into_bytes()))
}

/// An edge that trusts the key set at `url` (a [`JwksServer`]'s) and the server's
/// certificate, with `extra` variables over the provider's issuer and audience.
pub fn edge_trusting(url: String, extra: &[(&'static str, &str)]) -> EdgeSetup {
    let mut vars = vec![
        ("JWT_JWKS_URL", url),
        ("JWT_ISSUER", ISSUER.to_owned()),
        ("JWT_AUDIENCE", AUDIENCE.to_owned()),
    ];
    vars.extend(
        extra
            .iter()
            .map(|(name, value)| (*name, (*value).to_owned())),
    );
    EdgeSetup {
        vars,
        trusted_certificates: vec![JwksServer::ca_certificate()],
        ..EdgeSetup::default()
    }
}

fn rsa_signing_key(jwk: &Value) -> RsaSigningKey<Sha256> {
    let number = |member: &str| BigUint::from_bytes_be(&bytes(jwk, member));
    let primes = vec![number("p"), number("q")];
    let key = RsaPrivateKey::from_components(number("n"), number("e"), number("d"), primes)
        .expect("an RSA private key");
    RsaSigningKey::new(key)
}

fn bytes(jwk: &Value, member: &str) -> Vec<u8> {
    let text = jwk[member]
        .as_str()
        .unwrap_or_else(|| panic!("no `{member}` in {jwk}"));
    URL_SAFE_NO_PAD.decode(text).expect("base64url")
}

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}
