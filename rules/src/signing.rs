//! Edge → origin request signing (`docs/design/edge-trust.md`).
//!
//! The origin trusts only the edge. Every forwarded request carries the caller's user
//! id, a timestamp, a random nonce and an HMAC-SHA256 over the canonical string below,
//! under a secret both sides share. Both sides build the string with this one function,
//! so they cannot drift apart.
//!
//! ```text
//! edge-v3\n
//! {METHOD}\n
//! {path and query, exactly as sent}\n
//! {timestamp, epoch milliseconds}\n
//! {nonce}\n
//! {user id, empty when there is none}\n
//! {Idempotency-Key, empty when there is none}\n
//! {X-Request-Id, empty when there is none}\n
//! {the gate's word on a confirm (`crate::pass`), empty when there is none}\n
//! {lowercase hex SHA-256 of the body}
//! ```
//!
//! Fields are separated by `\n`, so a field may not contain a control character:
//! such a request cannot be signed, and a signature over it never verifies. The nonce
//! makes two identical requests in the same millisecond distinguishable, so the origin
//! can refuse replays by nonce without refusing a legitimate twin.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// Header carrying the authenticated user id.
pub const USER_HEADER: &str = "x-edge-user";
/// Header carrying the signing time, epoch milliseconds.
pub const TIMESTAMP_HEADER: &str = "x-edge-timestamp";
/// Header carrying the request's random nonce.
pub const NONCE_HEADER: &str = "x-edge-nonce";
/// Header carrying the lowercase hex HMAC-SHA256 signature.
pub const SIGNATURE_HEADER: &str = "x-edge-signature";
/// Header carrying the client's idempotency key, passed through unchanged.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";
/// Header carrying the request's id (`crate::request_id`), signed so the origin's log
/// names the request the edge answered.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A signature older or newer than this, against the verifier's clock, is stale.
pub const MAX_SKEW_MS: i64 = 30_000;

const VERSION: &str = "edge-v3";
const MAX_FIELD_LEN: usize = 2048;

/// The parts of a request that the signature covers.
#[derive(Debug, Clone, Copy)]
pub struct SignedRequest<'a> {
    pub method: &'a str,
    pub path_and_query: &'a str,
    pub timestamp_ms: i64,
    pub nonce: &'a str,
    pub user_id: &'a str,
    pub idempotency_key: &'a str,
    pub request_id: &'a str,
    /// `crate::pass::Gate::field`, sent in `crate::pass::PASS_HEADER`.
    pub pass: &'a str,
    pub body: &'a [u8],
}

/// Why a request cannot be signed: one of its fields cannot be put in the string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{0}` is too long or contains a control character")]
pub struct UnsignableField(pub &'static str);

/// Why the origin refuses a signature. The reason is for the log, never the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureRejection {
    #[error("signature headers missing or malformed")]
    Malformed,
    #[error("signature timestamp outside the allowed skew")]
    Stale,
    #[error("signature does not match")]
    Mismatch,
}

impl SignedRequest<'_> {
    /// The exact string that is signed.
    pub fn canonical_string(&self) -> Result<String, UnsignableField> {
        let fields = [
            ("method", self.method),
            ("path", self.path_and_query),
            ("nonce", self.nonce),
            ("user", self.user_id),
            ("idempotency key", self.idempotency_key),
            ("request id", self.request_id),
            ("pass", self.pass),
        ];
        for (name, value) in fields {
            if value.len() > MAX_FIELD_LEN || value.chars().any(char::is_control) {
                return Err(UnsignableField(name));
            }
        }
        let body_digest = hex::encode(Sha256::digest(self.body));
        Ok(format!(
            "{VERSION}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{body_digest}",
            self.method,
            self.path_and_query,
            self.timestamp_ms,
            self.nonce,
            self.user_id,
            self.idempotency_key,
            self.request_id,
            self.pass,
        ))
    }

    /// The lowercase hex HMAC-SHA256 of the canonical string under `secret`.
    pub fn sign(&self, secret: &[u8]) -> Result<String, UnsignableField> {
        let mac = self.mac(secret)?;
        Ok(hex::encode(mac.finalize().into_bytes()))
    }

    /// Checks freshness against `now_ms`, then the signature in constant time.
    /// Replays of a fresh signature are the caller's to refuse, by nonce.
    pub fn verify(
        &self,
        secret: &[u8],
        signature_hex: &str,
        now_ms: i64,
    ) -> Result<(), SignatureRejection> {
        if now_ms.abs_diff(self.timestamp_ms) > MAX_SKEW_MS.unsigned_abs() {
            return Err(SignatureRejection::Stale);
        }
        let signature = decode_lower_hex(signature_hex).ok_or(SignatureRejection::Malformed)?;
        let mac = self
            .mac(secret)
            .map_err(|_| SignatureRejection::Malformed)?;
        mac.verify_slice(&signature)
            .map_err(|_| SignatureRejection::Mismatch)
    }

    fn mac(&self, secret: &[u8]) -> Result<Hmac<Sha256>, UnsignableField> {
        let canonical = self.canonical_string()?;
        let mut mac =
            Hmac::<Sha256>::new_from_slice(secret).expect("HMAC-SHA256 accepts keys of any length");
        mac.update(canonical.as_bytes());
        Ok(mac)
    }
}

/// Whether what crosses a signed link to `url` stays private: `https://` to any host, or
/// plain `http://` that never leaves the machine — the signature protects integrity only,
/// and passwords and payment keys cross these links. An authority with userinfo
/// (`http://127.0.0.1@elsewhere`) is refused outright.
pub fn private_link(url: &str) -> bool {
    let (secure, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => return false,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    !host.is_empty() && (secure || loopback)
}

/// Only the encoding `sign` produces is accepted, so one signature has one spelling.
fn decode_lower_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 || text.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    hex::decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_private_over_https_or_on_this_machine_only() {
        for url in [
            "https://origin.example.com",
            "https://origin.example.com:8443/base",
            "http://127.0.0.1:8080",
            "http://127.5.6.7",
            "http://localhost:8080",
            "http://LOCALHOST",
            "http://[::1]:8080/",
        ] {
            assert!(private_link(url), "{url}");
        }
        for url in [
            "http://origin.example.com",
            "http://10.0.0.5:8080",
            "http://127.0.0.1.nip.io",
            "http://127.0.0.1@origin.example.com",
            "http://[::2]:8080",
            "http://",
            "https://",
            "ftp://127.0.0.1",
            "127.0.0.1:8080",
        ] {
            assert!(!private_link(url), "{url}");
        }
    }

    const SECRET: &[u8] = b"a shared secret of the edge and the origin";
    const NOW: i64 = 1_800_000_000_000;

    fn request(body: &[u8]) -> SignedRequest<'_> {
        SignedRequest {
            method: "POST",
            path_and_query: "/payments/confirm",
            timestamp_ms: NOW,
            nonce: "6f1c0a9e3b7d4f21a8c5e0d2b4f6a8c1",
            user_id: "user-42",
            idempotency_key: "key-1",
            request_id: "req-7",
            pass: "claimed drop-1 5 order-1",
            body,
        }
    }

    #[test]
    fn canonical_string_lists_every_field_in_order() {
        let canonical = request(b"").canonical_string().unwrap();
        assert_eq!(
            canonical,
            "edge-v3\nPOST\n/payments/confirm\n1800000000000\n\
             6f1c0a9e3b7d4f21a8c5e0d2b4f6a8c1\nuser-42\nkey-1\nreq-7\n\
             claimed drop-1 5 order-1\n\
             e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_signature_verifies_within_the_skew() {
        let req = request(b"{}");
        let signature = req.sign(SECRET).unwrap();
        assert_eq!(req.verify(SECRET, &signature, NOW), Ok(()));
        assert_eq!(req.verify(SECRET, &signature, NOW + MAX_SKEW_MS), Ok(()));
        assert_eq!(req.verify(SECRET, &signature, NOW - MAX_SKEW_MS), Ok(()));
    }

    #[test]
    fn a_signature_older_or_newer_than_the_skew_is_stale() {
        let req = request(b"{}");
        let signature = req.sign(SECRET).unwrap();
        let stale = Err(SignatureRejection::Stale);
        assert_eq!(req.verify(SECRET, &signature, NOW + MAX_SKEW_MS + 1), stale);
        assert_eq!(req.verify(SECRET, &signature, NOW - MAX_SKEW_MS - 1), stale);
    }

    #[test]
    fn changing_any_covered_field_breaks_the_signature() {
        let original = request(b"{\"amount\":1000}");
        let signature = original.sign(SECRET).unwrap();
        let tampered = [
            SignedRequest {
                method: "GET",
                ..original
            },
            SignedRequest {
                path_and_query: "/payments/confirm?x=1",
                ..original
            },
            SignedRequest {
                timestamp_ms: NOW + 1,
                ..original
            },
            SignedRequest {
                nonce: "another",
                ..original
            },
            SignedRequest {
                user_id: "user-43",
                ..original
            },
            SignedRequest {
                idempotency_key: "key-2",
                ..original
            },
            SignedRequest {
                request_id: "req-8",
                ..original
            },
            SignedRequest {
                pass: "replay-only",
                ..original
            },
            SignedRequest {
                body: b"{\"amount\":9000}",
                ..original
            },
        ];
        for req in tampered {
            assert_eq!(
                req.verify(SECRET, &signature, NOW),
                Err(SignatureRejection::Mismatch),
                "{req:?}"
            );
        }
        assert_eq!(
            original.verify(b"another secret", &signature, NOW),
            Err(SignatureRejection::Mismatch)
        );
    }

    #[test]
    fn a_field_with_a_newline_cannot_be_signed() {
        let req = SignedRequest {
            user_id: "user-42\nkey-1",
            ..request(b"")
        };
        assert_eq!(req.sign(SECRET), Err(UnsignableField("user")));
    }

    #[test]
    fn signatures_in_another_spelling_are_malformed() {
        let req = request(b"");
        let signature = req.sign(SECRET).unwrap();
        for spelling in [
            signature.to_uppercase(),
            signature[..62].to_string(),
            format!("{signature}00"),
            String::new(),
            "zz".repeat(32),
        ] {
            assert_eq!(
                req.verify(SECRET, &spelling, NOW),
                Err(SignatureRejection::Malformed),
                "{spelling}"
            );
        }
    }
}
