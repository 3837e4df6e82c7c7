//! The compact JWS layer (RFC 7515 §7.1): structure, protected header, signature —
//! and nothing about claims, so it can be held against JWS test vectors on its own.
//!
//! Strict wherever RFC 7515 leaves room, because every leniency is a second way for one
//! token to be read: exactly three parts, each canonical unpadded base64url (padding and
//! non-zero trailing bits refused, so one token has one spelling); a non-empty
//! signature; a header that is one JSON object without duplicate members; the algorithm
//! pinned by the key that `kid` names; no member that fetches a key (`jku`, `x5u`) or
//! carries one (`jwk`, `x5c`); no `crit`, since we understand no extension.
//!
//! `kid` is looked up in the edge's own keys, then in the identity provider's, when there
//! is a set of them; no kid is in both (the provider's set is refused when loaded if it
//! names one of `JWT_KEYS`), so a kid names one key.
//!
//! The work is done once, cheapest first: split, decode the signature and the header,
//! read the header in one pass, find the key, check the signature over the signing input
//! exactly as received. Only then is the payload decoded, so an unsigned payload costs
//! one MAC and no more.

use std::borrow::Cow;
use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::{DecodeSliceError, Engine as _};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::json::{Members, Name, Value};
use super::keys::{Key, KeySet};
use super::public_keys::MAX_RSA_BITS;
use super::{KeySource, TokenRejection};

/// The longest signature any key here makes (RS256 with the largest modulus taken);
/// anything longer is wrong for all.
const MAX_SIGNATURE_BYTES: usize = MAX_RSA_BITS / 8;
/// Headers up to this long (ours are under 50 bytes) are decoded on the stack.
const HEADER_BUFFER_BYTES: usize = 256;

/// A token whose signature holds.
#[derive(Debug)]
pub(crate) struct Verified<'t> {
    /// The payload, decoded.
    pub(crate) payload: Vec<u8>,
    /// Whose key it was.
    pub(crate) source: KeySource,
    /// What the signature covers: `header.payload` as received.
    pub(crate) signing_input: &'t str,
}

/// Checks `token` as a compact JWS signed by one of `keys`, or of `provider`'s.
pub(crate) fn verify_jws<'t>(
    token: &'t str,
    keys: &KeySet,
    provider: Option<&KeySet>,
) -> Result<Verified<'t>, TokenRejection> {
    let (header_b64, rest) = token.split_once('.').ok_or(TokenRejection::NotCompact)?;
    let (payload_b64, signature_b64) = rest.split_once('.').ok_or(TokenRejection::NotCompact)?;
    if signature_b64.contains('.') {
        return Err(TokenRejection::NotCompact);
    }
    if signature_b64.is_empty() {
        return Err(TokenRejection::EmptySignature);
    }
    let mut signature = [0_u8; MAX_SIGNATURE_BYTES];
    let signature = match URL_SAFE_NO_PAD.decode_slice(signature_b64, &mut signature) {
        Ok(len) => &signature[..len],
        Err(DecodeSliceError::OutputSliceTooSmall) => return Err(TokenRejection::BadSignature),
        Err(DecodeSliceError::DecodeError(_)) => {
            return Err(TokenRejection::BadBase64("signature"))
        }
    };
    let mut header = [0_u8; HEADER_BUFFER_BYTES];
    let long_header;
    let header = match URL_SAFE_NO_PAD.decode_slice(header_b64, &mut header) {
        Ok(len) => &header[..len],
        Err(DecodeSliceError::OutputSliceTooSmall) => {
            long_header = decode(header_b64, "header")?;
            &long_header[..]
        }
        Err(DecodeSliceError::DecodeError(_)) => return Err(TokenRejection::BadBase64("header")),
    };
    let (key, source) = Header::parse(header)?.key(keys, provider)?;
    let signing_input = &token[..header_b64.len() + 1 + payload_b64.len()];
    if !key.verifies(signing_input.as_bytes(), signature) {
        return Err(TokenRejection::BadSignature);
    }
    Ok(Verified {
        payload: decode(payload_b64, "payload")?,
        source,
        signing_input,
    })
}

fn decode(part: &str, name: &'static str) -> Result<Vec<u8>, TokenRejection> {
    URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| TokenRejection::BadBase64(name))
}

/// The protected header, reduced to what decides the key and the algorithm.
#[derive(Default)]
struct Header<'h> {
    /// `None` when absent or not a string; likewise `kid`.
    alg: Option<Cow<'h, str>>,
    kid: Option<Cow<'h, str>>,
    /// The first member present that would let the token choose its own key.
    key_in_header: Option<&'static str>,
    crit: bool,
}

/// The members the header reader knows; the discriminant is the duplicate-check bit.
#[derive(Clone, Copy)]
enum Member {
    Alg,
    Kid,
    Typ,
    Jku,
    X5u,
    Jwk,
    X5c,
    Crit,
}

impl Member {
    fn of(name: &str) -> Option<Member> {
        Some(match name {
            "alg" => Member::Alg,
            "kid" => Member::Kid,
            "typ" => Member::Typ,
            "jku" => Member::Jku,
            "x5u" => Member::X5u,
            "jwk" => Member::Jwk,
            "x5c" => Member::X5c,
            "crit" => Member::Crit,
            _ => return None,
        })
    }
}

impl<'h> Header<'h> {
    fn parse(json: &'h [u8]) -> Result<Header<'h>, TokenRejection> {
        // UTF-8 is checked once for the whole header, not again string by string.
        match std::str::from_utf8(json).map(serde_json::from_str::<ParsedHeader<'h>>) {
            Ok(Ok(ParsedHeader(header))) => header,
            _ => Err(TokenRejection::HeaderNotObject),
        }
    }

    /// The key this header names and whose it is, provided the header may be trusted to
    /// name one.
    fn key<'k>(
        &self,
        keys: &'k KeySet,
        provider: Option<&'k KeySet>,
    ) -> Result<(&'k Key, KeySource), TokenRejection> {
        let alg = self
            .alg
            .as_deref()
            .ok_or(TokenRejection::MissingAlgorithm)?;
        if alg.eq_ignore_ascii_case("none") {
            return Err(TokenRejection::AlgorithmNone);
        }
        if let Some(member) = self.key_in_header {
            return Err(TokenRejection::KeyInHeader(member));
        }
        if self.crit {
            return Err(TokenRejection::CriticalHeader);
        }
        let kid = self.kid.as_deref().ok_or(TokenRejection::MissingKeyId)?;
        let (key, source) = match keys.get(kid) {
            Some(key) => (key, KeySource::Edge),
            None => provider
                .and_then(|provider| provider.get(kid))
                .map(|key| (key, KeySource::Provider))
                .ok_or(TokenRejection::UnknownKey)?,
        };
        if alg != key.algorithm().name() {
            return Err(TokenRejection::AlgorithmMismatch);
        }
        Ok((key, source))
    }
}

/// A header read in one pass; a duplicate member is a rejection, not a parse error.
struct ParsedHeader<'h>(Result<Header<'h>, TokenRejection>);

impl<'de> Deserialize<'de> for ParsedHeader<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(HeaderVisitor)
    }
}

struct HeaderVisitor;

impl<'de> Visitor<'de> for HeaderVisitor {
    type Value = ParsedHeader<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JWS header object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParsedHeader<'de>, A::Error> {
        let mut header = Header::default();
        let mut members = Members::default();
        let mut duplicate = false;
        while let Some(Name(name)) = map.next_key()? {
            let member = Member::of(&name);
            let first = match member {
                Some(member) => members.first_known(member as u32),
                None => members.first_other(name),
            };
            duplicate |= !first;
            match member.filter(|_| first) {
                Some(Member::Alg) => header.alg = map.next_value::<Value<'de>>()?.into_str(),
                Some(Member::Kid) => header.kid = map.next_value::<Value<'de>>()?.into_str(),
                Some(Member::Crit) => {
                    map.next_value::<IgnoredAny>()?;
                    header.crit = true;
                }
                Some(member @ (Member::Jku | Member::X5u | Member::Jwk | Member::X5c)) => {
                    map.next_value::<IgnoredAny>()?;
                    header.key_in_header.get_or_insert(match member {
                        Member::Jku => "jku",
                        Member::X5u => "x5u",
                        Member::Jwk => "jwk",
                        _ => "x5c",
                    });
                }
                Some(Member::Typ) | None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ParsedHeader(if duplicate {
            Err(TokenRejection::DuplicateHeaderMember)
        } else {
            Ok(header)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_decoding_refuses_padding_and_non_zero_trailing_bits() {
        let decodes = |text: &str| URL_SAFE_NO_PAD.decode(text).ok();
        assert_eq!(decodes("QQ"), Some(b"A".to_vec()));
        assert_eq!(decodes("QQ=="), None, "padding");
        assert_eq!(
            decodes("QR"),
            None,
            "trailing bits that decode to the same byte"
        );
        assert_eq!(decodes("QUI"), Some(b"AB".to_vec()));
        assert_eq!(
            decodes("QUJ"),
            None,
            "trailing bits that decode to the same bytes"
        );
        assert_eq!(decodes("Q"), None, "a length no encoding has");
        assert_eq!(decodes("-_8"), Some(vec![0xfb, 0xff]));
        assert_eq!(decodes("+/8"), None, "the standard alphabet");
        assert_eq!(decodes("Q Q"), None, "whitespace");
    }

    #[test]
    fn a_signature_of_the_longest_length_fits_the_buffer() {
        let longest = URL_SAFE_NO_PAD.encode([0xa5; MAX_SIGNATURE_BYTES]);
        let longer = URL_SAFE_NO_PAD.encode([0xa5; MAX_SIGNATURE_BYTES + 1]);
        let mut buffer = [0_u8; MAX_SIGNATURE_BYTES];
        assert_eq!(
            URL_SAFE_NO_PAD.decode_slice(&longest, &mut buffer),
            Ok(MAX_SIGNATURE_BYTES)
        );
        assert_eq!(
            URL_SAFE_NO_PAD.decode_slice(&longer, &mut buffer),
            Err(DecodeSliceError::OutputSliceTooSmall)
        );
    }
}
