//! Gateway → origin callbacks (`docs/design/recovery.md`, "signed callbacks").
//!
//! When the payment gateway decides a charge (approved or declined) or cancels one, it
//! tells the origin by `POST`ing a [`CallbackBody`] to the origin's callback URL. The
//! gateway signs it, and the origin checks the signature, with the functions below, so
//! the two cannot drift apart:
//!
//! ```text
//! x-gateway-timestamp: {epoch milliseconds, decimal}
//! x-gateway-signature: {lowercase hex HMAC-SHA256 of "{timestamp}." followed by the body}
//! ```
//!
//! The signature covers the exact body bytes, so the receiver verifies before it parses.
//! A timestamp more than [`MAX_SKEW_MS`] away from the receiver's clock, in either
//! direction, is refused; within that window a callback may arrive more than once (the
//! gateway retries until it gets a 2xx), so a receiver must be idempotent.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Header carrying the signing time, epoch milliseconds in decimal.
pub const TIMESTAMP_HEADER: &str = "x-gateway-timestamp";
/// Header carrying the lowercase hex HMAC-SHA256 signature.
pub const SIGNATURE_HEADER: &str = "x-gateway-signature";

/// A callback signed longer ago than this, or further ahead, is stale: 5 minutes.
pub const MAX_SKEW_MS: i64 = 5 * 60 * 1000;
/// The shortest secret either side accepts, in bytes.
pub const MIN_SECRET_LEN: usize = 32;

/// What the gateway decided about a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CallbackStatus {
    Approved,
    Declined,
    Cancelled,
}

impl CallbackStatus {
    /// The wire spelling: `APPROVED`, `DECLINED` or `CANCELLED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "APPROVED",
            Self::Declined => "DECLINED",
            Self::Cancelled => "CANCELLED",
        }
    }
}

/// The JSON body of a callback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallbackBody {
    pub order_id: String,
    pub status: CallbackStatus,
    /// The charge's amount, in the currency's minor unit.
    pub amount: i64,
    /// When the charge was approved, epoch milliseconds; `None` (JSON `null`) for a
    /// decline. A cancellation carries the time of the approval it takes back.
    pub approved_at: Option<i64>,
}

/// Why a callback is refused. The reason is for the receiver's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallbackRejection {
    #[error("the {TIMESTAMP_HEADER} header is missing")]
    MissingTimestamp,
    #[error("the {TIMESTAMP_HEADER} header is not epoch milliseconds in decimal")]
    MalformedTimestamp,
    #[error("the {SIGNATURE_HEADER} header is missing")]
    MissingSignature,
    #[error("the {SIGNATURE_HEADER} header is not 64 lowercase hex digits")]
    MalformedSignature,
    #[error("the callback timestamp is more than 5 minutes away from now")]
    Stale,
    #[error("the callback signature does not match")]
    Mismatch,
}

/// The lowercase hex HMAC-SHA256 of `"{timestamp_ms}."` followed by `body`.
pub fn sign(secret: &[u8], timestamp_ms: i64, body: &[u8]) -> String {
    hex::encode(mac(secret, timestamp_ms, body).finalize().into_bytes())
}

/// Checks a received callback: both headers present and well formed, the timestamp
/// within [`MAX_SKEW_MS`] of `now_ms`, then the signature over the exact `body`, in
/// constant time.
pub fn verify(
    secret: &[u8],
    timestamp_header: Option<&str>,
    signature_header: Option<&str>,
    body: &[u8],
    now_ms: i64,
) -> Result<(), CallbackRejection> {
    let timestamp_ms =
        parse_timestamp(timestamp_header.ok_or(CallbackRejection::MissingTimestamp)?)
            .ok_or(CallbackRejection::MalformedTimestamp)?;
    let signature = decode_lower_hex(signature_header.ok_or(CallbackRejection::MissingSignature)?)
        .ok_or(CallbackRejection::MalformedSignature)?;
    if now_ms.abs_diff(timestamp_ms) > MAX_SKEW_MS.unsigned_abs() {
        return Err(CallbackRejection::Stale);
    }
    mac(secret, timestamp_ms, body)
        .verify_slice(&signature)
        .map_err(|_| CallbackRejection::Mismatch)
}

fn mac(secret: &[u8], timestamp_ms: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret).expect("HMAC-SHA256 accepts keys of any length");
    mac.update(timestamp_ms.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// Only the spelling `sign` signs over is accepted — digits, no sign, no leading zero —
/// so one timestamp has one spelling.
fn parse_timestamp(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: i64 = text.parse().ok()?;
    (value.to_string() == text).then_some(value)
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

    const SECRET: &[u8] = b"a secret the gateway shares with the origin";
    const NOW: i64 = 1_800_000_000_000;
    const BODY: &[u8] =
        br#"{"orderId":"o-1","status":"APPROVED","amount":1000,"approvedAt":1800000000000}"#;

    fn check(
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        now_ms: i64,
    ) -> Result<(), CallbackRejection> {
        verify(SECRET, timestamp, signature, body, now_ms)
    }

    #[test]
    fn a_signed_callback_verifies() {
        let signature = sign(SECRET, NOW, BODY);
        assert_eq!(signature.len(), 64);
        assert_eq!(
            check(Some(&NOW.to_string()), Some(&signature), BODY, NOW),
            Ok(())
        );
    }

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // `printf %s "1.{}" | openssl dgst -sha256 -hmac key`
        assert_eq!(
            sign(b"key", 1, b"{}"),
            "1ba6b8171186efc613e8bcc0cbdab2748f24984d7c5a84faa2637afa0e40d224"
        );
    }

    #[test]
    fn missing_headers_are_refused() {
        let signature = sign(SECRET, NOW, BODY);
        let timestamp = NOW.to_string();
        assert_eq!(
            check(None, Some(&signature), BODY, NOW),
            Err(CallbackRejection::MissingTimestamp)
        );
        assert_eq!(
            check(Some(&timestamp), None, BODY, NOW),
            Err(CallbackRejection::MissingSignature)
        );
    }

    #[test]
    fn timestamps_in_another_spelling_are_malformed() {
        let signature = sign(SECRET, NOW, BODY);
        for spelling in [
            String::new(),
            format!("+{NOW}"),
            format!("0{NOW}"),
            format!(" {NOW}"),
            format!("{NOW}.0"),
            "-1".to_owned(),
            "soon".to_owned(),
            "99999999999999999999".to_owned(),
        ] {
            assert_eq!(
                check(Some(&spelling), Some(&signature), BODY, NOW),
                Err(CallbackRejection::MalformedTimestamp),
                "{spelling:?}"
            );
        }
    }

    #[test]
    fn signatures_in_another_spelling_are_malformed() {
        let signature = sign(SECRET, NOW, BODY);
        let timestamp = NOW.to_string();
        for spelling in [
            signature.to_uppercase(),
            signature[..62].to_owned(),
            format!("{signature}00"),
            String::new(),
            "zz".repeat(32),
        ] {
            assert_eq!(
                check(Some(&timestamp), Some(&spelling), BODY, NOW),
                Err(CallbackRejection::MalformedSignature),
                "{spelling:?}"
            );
        }
    }

    #[test]
    fn a_timestamp_within_five_minutes_either_way_is_fresh() {
        let signature = sign(SECRET, NOW, BODY);
        let timestamp = NOW.to_string();
        for now in [NOW + MAX_SKEW_MS, NOW - MAX_SKEW_MS] {
            assert_eq!(check(Some(&timestamp), Some(&signature), BODY, now), Ok(()));
        }
    }

    #[test]
    fn a_timestamp_outside_the_window_is_stale_even_when_signed() {
        let signature = sign(SECRET, NOW, BODY);
        let timestamp = NOW.to_string();
        for now in [NOW + MAX_SKEW_MS + 1, NOW - MAX_SKEW_MS - 1] {
            assert_eq!(
                check(Some(&timestamp), Some(&signature), BODY, now),
                Err(CallbackRejection::Stale)
            );
        }
    }

    #[test]
    fn a_body_changed_by_one_byte_does_not_verify() {
        let signature = sign(SECRET, NOW, BODY);
        let timestamp = NOW.to_string();
        let mut tampered = BODY.to_vec();
        let last_digit = tampered.len() - 2;
        tampered[last_digit] ^= 1;
        assert_eq!(
            check(Some(&timestamp), Some(&signature), &tampered, NOW),
            Err(CallbackRejection::Mismatch)
        );
    }

    #[test]
    fn another_timestamp_or_secret_does_not_verify() {
        let signature = sign(SECRET, NOW, BODY);
        assert_eq!(
            check(Some(&(NOW + 1).to_string()), Some(&signature), BODY, NOW),
            Err(CallbackRejection::Mismatch)
        );
        assert_eq!(
            verify(
                b"another secret of at least 32 bytes",
                Some(&NOW.to_string()),
                Some(&signature),
                BODY,
                NOW
            ),
            Err(CallbackRejection::Mismatch)
        );
    }

    #[test]
    fn every_rejection_gives_a_reason() {
        for rejection in [
            CallbackRejection::MissingTimestamp,
            CallbackRejection::MalformedTimestamp,
            CallbackRejection::MissingSignature,
            CallbackRejection::MalformedSignature,
            CallbackRejection::Stale,
            CallbackRejection::Mismatch,
        ] {
            assert!(!rejection.to_string().is_empty(), "{rejection:?}");
        }
        assert!(CallbackRejection::MissingSignature
            .to_string()
            .contains(SIGNATURE_HEADER));
    }

    #[test]
    fn the_body_is_camel_case_with_screaming_statuses() {
        let approved = CallbackBody {
            order_id: "o-1".into(),
            status: CallbackStatus::Approved,
            amount: 1000,
            approved_at: Some(NOW),
        };
        let json = serde_json::to_vec(&approved).expect("serializable");
        assert_eq!(json, BODY);
        let declined: CallbackBody = serde_json::from_str(
            r#"{"orderId":"o-2","status":"DECLINED","amount":5,"approvedAt":null}"#,
        )
        .expect("a declined callback parses");
        assert_eq!(declined.status, CallbackStatus::Declined);
        assert_eq!(declined.approved_at, None);
        let cancelled: CallbackBody = serde_json::from_str(
            r#"{"orderId":"o-1","status":"CANCELLED","amount":1000,"approvedAt":1}"#,
        )
        .expect("a cancelled callback parses");
        assert_eq!(cancelled.status, CallbackStatus::Cancelled);
    }

    #[test]
    fn as_str_is_the_wire_spelling_and_unknown_statuses_are_refused() {
        for status in [
            CallbackStatus::Approved,
            CallbackStatus::Declined,
            CallbackStatus::Cancelled,
        ] {
            assert_eq!(
                serde_json::to_value(status).expect("serializable"),
                status.as_str()
            );
        }
        let unknown = serde_json::from_str::<CallbackBody>(
            r#"{"orderId":"o-1","status":"REFUNDED","amount":1,"approvedAt":null}"#,
        );
        assert!(unknown.is_err());
    }
}
