//! An identity provider's public keys: RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518
//! §3.3) and ES256 (ECDSA on P-256 with SHA-256, §3.4), read from their JWK members
//! (§6.2, §6.3) — for verification only, so the crates' signing paths and randomness
//! never run here.
//!
//! Refused when loaded, naming the member: an RSA modulus under 2048 bits (RFC 7518
//! §3.3 requires 2048) or over 4096 (the `rsa` crate's bound, so no key makes a
//! verification expensive), an exponent that is even, 1 or over 2^33 − 1, an EC point
//! whose coordinates are not 32 bytes each or not on P-256. A signature is checked
//! exactly as JWS writes it: for RS256 as long as the modulus, for ES256 the 64 bytes of
//! `r ‖ s` — never DER.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use p256::ecdsa::signature::Verifier as _;
use rsa::traits::PublicKeyParts as _;
use rsa::{BigUint, RsaPublicKey};
use sha2::Sha256;

use super::jwk::Jwk;
use super::keys::Key;

/// RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used".
pub(crate) const MIN_RSA_BITS: usize = 2048;
/// The largest modulus the `rsa` crate takes by default, and so the longest signature.
pub(crate) const MAX_RSA_BITS: usize = RsaPublicKey::MAX_SIZE;

/// An RSA public key pinned to RS256.
pub(crate) struct Rs256Key(rsa::pkcs1v15::VerifyingKey<Sha256>);

/// A P-256 public key pinned to ES256.
pub(crate) struct Es256Key(p256::ecdsa::VerifyingKey);

impl Rs256Key {
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let key: &RsaPublicKey = self.0.as_ref();
        signature.len() == key.size()
            && rsa::pkcs1v15::Signature::try_from(signature)
                .is_ok_and(|signature| self.0.verify(message, &signature).is_ok())
    }
}

impl Es256Key {
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        p256::ecdsa::Signature::from_slice(signature)
            .is_ok_and(|signature| self.0.verify(message, &signature).is_ok())
    }
}

/// An RS256 key of `jwk`: `kty` RSA, `n` and `e`, no private member.
pub(crate) fn rs256(jwk: &Jwk) -> Result<Key, &'static str> {
    if jwk.kty.as_deref() != Some("RSA") {
        return Err("`kty` RSA for an RS256 key");
    }
    let n = jwk
        .n
        .as_deref()
        .and_then(unsigned)
        .ok_or("`n`: the modulus, in unpadded base64url")?;
    if n.bits() < MIN_RSA_BITS {
        return Err("`n`: a modulus of at least 2048 bits");
    }
    if n.bits() > MAX_RSA_BITS {
        return Err("`n`: a modulus of at most 4096 bits");
    }
    let e = jwk
        .e
        .as_deref()
        .and_then(unsigned)
        .ok_or("`e`: the public exponent, in unpadded base64url")?;
    let public = RsaPublicKey::new(n, e)
        .map_err(|_| "`e`: an odd exponent from 3 to 2^33 - 1, below an odd modulus `n`")?;
    Ok(Key::Rs256(Rs256Key(rsa::pkcs1v15::VerifyingKey::new(
        public,
    ))))
}

/// An ES256 key of `jwk`: `kty` EC, `crv` P-256, `x` and `y`, no private member.
pub(crate) fn es256(jwk: &Jwk) -> Result<Key, &'static str> {
    if jwk.kty.as_deref() != Some("EC") || jwk.crv.as_deref() != Some("P-256") {
        return Err("`kty` EC and `crv` P-256 for an ES256 key");
    }
    let coordinate = |value: Option<&str>| {
        value
            .and_then(|text| URL_SAFE_NO_PAD.decode(text).ok())
            .and_then(|bytes| <[u8; 32]>::try_from(bytes.as_slice()).ok())
    };
    let point = coordinate(jwk.x.as_deref())
        .zip(coordinate(jwk.y.as_deref()))
        .map(|(x, y)| p256::EncodedPoint::from_affine_coordinates(&x.into(), &y.into(), false))
        .and_then(|point| p256::ecdsa::VerifyingKey::from_encoded_point(&point).ok())
        .ok_or("`x` and `y`: a point of P-256, each coordinate 32 bytes in unpadded base64url")?;
    Ok(Key::Es256(Es256Key(point)))
}

/// A big-endian unsigned integer in canonical unpadded base64url; not empty.
fn unsigned(text: &str) -> Option<BigUint> {
    let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
    (!bytes.is_empty()).then(|| BigUint::from_bytes_be(&bytes))
}
