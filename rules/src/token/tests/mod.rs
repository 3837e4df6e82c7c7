//! The token rules as the spec states them, one behaviour per test, on shared fixtures:
//! a key set with two HS256 keys (rotation), an EdDSA key that signs and one that only
//! verifies; tokens written byte for byte, so that each test can break exactly one thing.
//!
//! - `rejections` — one line per reason to refuse.
//! - `policy` — the boundaries of `exp`/`nbf`, key rotation, algorithm pinning, `iss`/`aud`.
//! - `mint` — minting, and that what is minted verifies.
//! - `vectors` — the Wycheproof vectors.
//! - `idp` — an identity provider's keys (`testdata/jwks/`), documents and tokens;
//!   `provider` — its key set document; `provider_tokens` — its tokens;
//!   `key_cache` — when its key set is fetched.
//! - `verified` — tokens kept once verified, and when they stop answering.

mod idp;
mod key_cache;
mod mint;
mod policy;
mod provider;
mod provider_tokens;
mod rejections;
mod vectors;
mod verified;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_compact::{KeyPair, Seed};
use hmac::{Hmac, Mac as _};
use sha2::Sha256;

use super::TokenRejection::*;
use super::*;

const NOW: i64 = 1_800_000_000;
const SECRET_1: &[u8] = b"0123456789abcdef0123456789abcdef";
const SECRET_2: &[u8] = b"fedcba9876543210fedcba9876543210";
const SEED: [u8; 32] = [7; 32];
const VERIFY_ONLY_SEED: [u8; 32] = [9; 32];

const H1: &str = r#"{"alg":"HS256","typ":"JWT","kid":"k1"}"#;
const H2: &str = r#"{"alg":"HS256","typ":"JWT","kid":"k2"}"#;
const HED: &str = r#"{"alg":"EdDSA","typ":"JWT","kid":"ed"}"#;
const GOOD: &str = r#"{"sub":"user-1","jti":"j-1","exp":1800000060}"#;

fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn keys() -> KeySet {
    let ed = KeyPair::from_seed(Seed::new(SEED));
    let verify_only = KeyPair::from_seed(Seed::new(VERIFY_ONLY_SEED));
    KeySet::from_jwks_json(&format!(
        r#"[{{"kty":"oct","alg":"HS256","kid":"k1","k":"{}"}},
            {{"kty":"oct","alg":"HS256","kid":"k2","k":"{}"}},
            {{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"ed","x":"{}","d":"{}"}},
            {{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"ed-pub","x":"{}"}}]"#,
        b64(SECRET_1),
        b64(SECRET_2),
        b64(*ed.pk),
        b64(SEED),
        b64(*verify_only.pk),
    ))
    .unwrap()
}

fn policy() -> Policy {
    Policy {
        keys: keys(),
        issuer: None,
        audience: None,
        leeway_secs: 0,
    }
}

/// A token of exactly these encoded parts, HMAC-signed with `secret`.
fn hmac_parts(secret: &[u8], header_b64: &str, payload_b64: &str) -> String {
    let input = format!("{header_b64}.{payload_b64}");
    let mac = Hmac::<Sha256>::new_from_slice(secret)
        .unwrap()
        .chain_update(&input)
        .finalize();
    format!("{input}.{}", b64(mac.into_bytes()))
}

/// A token of this header and these claims, signed with the secret of `k1`.
fn hs(header: &str, claims: &str) -> String {
    hmac_parts(SECRET_1, &b64(header), &b64(claims))
}

/// A token of this header and these claims, signed with the Ed25519 key `seed`.
fn eddsa(seed: [u8; 32], header: &str, claims: &str) -> String {
    let input = format!("{}.{}", b64(header), b64(claims));
    let signature = KeyPair::from_seed(Seed::new(seed)).sk.sign(&input, None);
    format!("{input}.{}", b64(*signature))
}

fn claims_with(extra: &str) -> String {
    format!(r#"{{"sub":"user-1","jti":"j-1","exp":1800000060{extra}}}"#)
}

fn accepted(exp: i64) -> Result<AccessClaims, TokenRejection> {
    Ok(AccessClaims {
        sub: "user-1".into(),
        jti: "j-1".into(),
        exp,
        sid: None,
        iat: None,
        source: KeySource::Edge,
    })
}

fn check(policy: &Policy, token: &str, expected: Result<AccessClaims, TokenRejection>) {
    assert_eq!(policy.verify(token, NOW), expected, "{token}");
}

/// The same base64url text with non-zero trailing bits: the same bytes to a lax decoder.
fn with_trailing_bits(part: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    assert_ne!(part.len() % 4, 0, "{part} has no trailing bits");
    let (head, last) = part.split_at(part.len() - 1);
    let index = ALPHABET
        .iter()
        .position(|c| *c == last.as_bytes()[0])
        .unwrap();
    format!("{head}{}", ALPHABET[index + 1] as char)
}
