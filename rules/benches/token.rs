//! Access-token verification: our full policy against its floor and two peers.
//!
//! All verify the same HS256 token (`sub`, `jti`, `iat`, `exp`, `iss`, `aud`), minted by
//! `KeySet::mint`. Ours runs the whole policy with issuer and audience configured; the
//! floor is the one HMAC-SHA256 any verifier must compute over the signing input,
//! starting, like ours, from a keyed state. The peers are `jsonwebtoken` (decode with
//! issuer, audience and expiry validation) and jwt-compact's plain validator plus its
//! expiry check. Run: `cargo bench -p rules --bench token`.
//!
//! A benchmark is the rules' caller, so it reads the clock they are given.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use criterion::{criterion_group, criterion_main, Criterion};
use hmac::{Hmac, Mac as _};
use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt as _, TimeOptions, UntrustedToken};
use rules::token::{KeySet, NewAccessToken, Policy};
use serde::Deserialize;
use sha2::Sha256;

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";
const SEED: [u8; 32] = [7; 32];
const ISSUER: &str = "https://auth.example";
const AUDIENCE: &str = "payments";

#[derive(Deserialize)]
#[allow(dead_code)] // read by the peers' deserializers, as a caller's claims would be
struct PeerClaims {
    sub: String,
    jti: String,
    exp: i64,
}

/// jwt-compact reads `exp` into its own `Claims`, beside these.
#[derive(Deserialize)]
#[allow(dead_code)]
struct CompactClaims {
    sub: String,
    jti: String,
}

fn policy() -> Policy {
    let ed = ed25519_compact::KeyPair::from_seed(ed25519_compact::Seed::new(SEED));
    let keys = KeySet::from_jwks_json(&format!(
        r#"[{{"kty":"oct","alg":"HS256","kid":"hs","k":"{}"}},
            {{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","kid":"ed","x":"{}","d":"{}"}}]"#,
        URL_SAFE_NO_PAD.encode(SECRET),
        URL_SAFE_NO_PAD.encode(*ed.pk),
        URL_SAFE_NO_PAD.encode(SEED),
    ))
    .expect("the bench keys are valid");
    Policy {
        keys,
        issuer: Some(ISSUER.into()),
        audience: Some(AUDIENCE.into()),
        leeway_secs: 0,
    }
}

fn verification(c: &mut Criterion) {
    // The peers read the system clock, so the tokens are minted against it too.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let policy = policy();
    let claims = NewAccessToken {
        sub: "user-42",
        jti: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d",
        sid: Some("5f0c2a7d9e1b4c3a8d6e0f1a2b3c4d5e"),
        issued_at: now,
        expires_at: now + 1800,
        issuer: Some(ISSUER),
        audience: Some(AUDIENCE),
    };
    let hs_token = policy.keys.mint("hs", &claims).unwrap();
    let ed_token = policy.keys.mint("ed", &claims).unwrap();
    let (signing_input, _) = hs_token.rsplit_once('.').unwrap();

    let mut group = c.benchmark_group("verify");

    let keyed = Hmac::<Sha256>::new_from_slice(SECRET).unwrap();
    group.bench_function("hmac-sha256 floor", |b| {
        b.iter(|| {
            keyed
                .clone()
                .chain_update(black_box(signing_input))
                .finalize()
        })
    });

    group.bench_function("policy HS256", |b| {
        b.iter(|| policy.verify(black_box(&hs_token), now).unwrap())
    });

    group.bench_function("policy EdDSA", |b| {
        b.iter(|| policy.verify(black_box(&ed_token), now).unwrap())
    });

    let decoding_key = jsonwebtoken::DecodingKey::from_secret(SECRET);
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.leeway = 0;
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[AUDIENCE]);
    validation.set_required_spec_claims(&["exp", "sub", "iss", "aud"]);
    group.bench_function("jsonwebtoken HS256", |b| {
        b.iter(|| {
            jsonwebtoken::decode::<PeerClaims>(black_box(&hs_token), &decoding_key, &validation)
                .unwrap()
        })
    });

    let compact_key = Hs256Key::new(SECRET);
    let at_now = chrono::DateTime::from_timestamp(now, 0).unwrap();
    let time = TimeOptions::new(chrono::Duration::zero(), move || at_now);
    group.bench_function("jwt-compact HS256", |b| {
        b.iter(|| {
            let untrusted = UntrustedToken::new(black_box(&hs_token)).unwrap();
            let token = Hs256
                .validator::<CompactClaims>(&compact_key)
                .validate(&untrusted)
                .unwrap();
            token.claims().validate_expiration(&time).unwrap();
            token
        })
    });

    group.finish();
}

criterion_group!(benches, verification);
criterion_main!(benches);
