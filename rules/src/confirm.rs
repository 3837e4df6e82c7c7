//! The payment confirm request, parsed and validated once.
//!
//! The edge and the origin both refuse bad input with the same words: the edge so a
//! malformed request never costs an origin round trip, the origin because it trusts
//! the edge's signature, not the edge's judgement of a body.

use serde::{Deserialize, Serialize};

/// The largest request body either tier reads.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// The largest amount accepted, in the currency's minor unit.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;

const MAX_ID_LEN: usize = 64;
const MAX_PAYMENT_KEY_LEN: usize = 200;
const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// What `Debug` shows in place of a payment key: the key is a credential at the PG, and
/// debug output ends up in logs and panic messages.
pub const REDACTED: Redacted = Redacted;

/// Prints `<redacted>`.
#[derive(Clone, Copy)]
pub struct Redacted;

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `POST /payments/confirm` body, once it is known to be well formed; its `Debug`
/// never shows the payment key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmRequest {
    pub order_id: String,
    pub payment_key: String,
    pub amount: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
}

impl std::fmt::Debug for ConfirmRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfirmRequest")
            .field("order_id", &self.order_id)
            .field("payment_key", &REDACTED)
            .field("amount", &self.amount)
            .field("event_id", &self.event_id)
            .finish()
    }
}

/// Why a confirm body was refused; the message is safe to show the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidConfirm {
    #[error("request body is larger than {MAX_BODY_BYTES} bytes")]
    TooLarge,
    #[error("request body is not valid JSON for a confirm: {0}")]
    Malformed(String),
    #[error("an Idempotency-Key header is required")]
    MissingIdempotencyKey,
    #[error("`{field}` {problem}")]
    Field {
        field: &'static str,
        problem: &'static str,
    },
}

impl InvalidConfirm {
    /// The stable error code both tiers answer with.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLarge => "BODY_TOO_LARGE",
            Self::MissingIdempotencyKey => "IDEMPOTENCY_KEY_REQUIRED",
            Self::Malformed(_) | Self::Field { .. } => "INVALID_REQUEST",
        }
    }
}

impl ConfirmRequest {
    /// Parses and validates a confirm body.
    pub fn parse(body: &[u8]) -> Result<Self, InvalidConfirm> {
        if body.len() > MAX_BODY_BYTES {
            return Err(InvalidConfirm::TooLarge);
        }
        // serde would also read a struct from a JSON array; a confirm is an object.
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(InvalidConfirm::Malformed("expected a JSON object".into()));
        }
        let request: Self = serde_json::from_slice(body)
            .map_err(|err| InvalidConfirm::Malformed(err.to_string()))?;
        request.validate()?;
        Ok(request)
    }

    fn validate(&self) -> Result<(), InvalidConfirm> {
        check_id("orderId", &self.order_id)?;
        if let Some(event_id) = &self.event_id {
            check_id("eventId", event_id)?;
        }
        if self.payment_key.is_empty()
            || self.payment_key.len() > MAX_PAYMENT_KEY_LEN
            || !self.payment_key.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(InvalidConfirm::Field {
                field: "paymentKey",
                problem: "must be 1 to 200 printable ASCII characters",
            });
        }
        if self.amount <= 0 || self.amount > MAX_AMOUNT {
            return Err(InvalidConfirm::Field {
                field: "amount",
                problem: "must be a positive integer no larger than 10^12",
            });
        }
        Ok(())
    }
}

/// Checks an order id taken from a URL path.
pub fn check_order_id(value: &str) -> Result<(), InvalidConfirm> {
    check_id("orderId", value)
}

/// Checks an event id taken from a URL path.
pub fn check_event_id(value: &str) -> Result<(), InvalidConfirm> {
    check_id("eventId", value)
}

/// Checks the `Idempotency-Key` header of a confirm: present, 1 to 255 visible
/// ASCII characters.
pub fn check_idempotency_key(key: Option<&str>) -> Result<&str, InvalidConfirm> {
    let key = key.ok_or(InvalidConfirm::MissingIdempotencyKey)?;
    if key.is_empty()
        || key.len() > MAX_IDEMPOTENCY_KEY_LEN
        || !key.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(InvalidConfirm::Field {
            field: "Idempotency-Key",
            problem: "must be 1 to 255 visible ASCII characters",
        });
    }
    Ok(key)
}

/// Order and event ids travel in URL paths and log lines, so they are kept plain, and
/// never dots alone: `.` and `..` in a path are not names but steps up and across.
fn check_id(field: &'static str, value: &str) -> Result<(), InvalidConfirm> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    if value.is_empty() || value.len() > MAX_ID_LEN || !value.bytes().all(plain) {
        return Err(InvalidConfirm::Field {
            field,
            problem: "must be 1 to 64 characters of letters, digits, '-', '_' or '.'",
        });
    }
    if value.bytes().all(|b| b == b'.') {
        return Err(InvalidConfirm::Field {
            field,
            problem: "must not be dots alone",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(body: &str, expected: Result<(), &str>) {
        let got = ConfirmRequest::parse(body.as_bytes()).map(|_| ());
        match (got, expected) {
            (Ok(()), Ok(())) => {}
            (Err(err), Err(fragment)) => assert!(
                err.to_string().contains(fragment),
                "{body}: `{err}` does not mention `{fragment}`"
            ),
            (got, expected) => panic!("{body}: got {got:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn a_well_formed_confirm_is_accepted() {
        let parsed = ConfirmRequest::parse(
            br#"{"orderId":"order-1","paymentKey":"pk_1","amount":15000,"eventId":"drop.7","extra":true}"#,
        )
        .unwrap();
        assert_eq!(
            parsed,
            ConfirmRequest {
                order_id: "order-1".into(),
                payment_key: "pk_1".into(),
                amount: 15000,
                event_id: Some("drop.7".into()),
            }
        );
        check(r#"{"orderId":"o","paymentKey":"k","amount":1}"#, Ok(()));
    }

    #[test]
    fn debug_output_never_shows_the_payment_key() {
        let parsed =
            ConfirmRequest::parse(br#"{"orderId":"o-1","paymentKey":"pk_secret","amount":5}"#)
                .unwrap();
        let shown = format!("{parsed:?}");
        assert!(!shown.contains("pk_secret"), "{shown}");
        assert!(
            shown.contains("payment_key: <redacted>") && shown.contains("o-1"),
            "{shown}"
        );
    }

    #[test]
    fn malformed_or_mistyped_bodies_are_refused() {
        check("", Err("not valid JSON"));
        check("{", Err("not valid JSON"));
        check("[]", Err("not valid JSON"));
        check(r#"["o","k",1]"#, Err("expected a JSON object"));
        check(r#"{"paymentKey":"k","amount":1}"#, Err("orderId"));
        check(r#"{"orderId":"o","amount":1}"#, Err("paymentKey"));
        check(r#"{"orderId":"o","paymentKey":"k"}"#, Err("amount"));
        check(
            r#"{"orderId":7,"paymentKey":"k","amount":1}"#,
            Err("not valid JSON"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":"1"}"#,
            Err("not valid JSON"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":1.5}"#,
            Err("not valid JSON"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":1e30}"#,
            Err("not valid JSON"),
        );
    }

    #[test]
    fn amounts_must_be_positive_and_bounded() {
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":0}"#,
            Err("`amount`"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":-100}"#,
            Err("`amount`"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":1000000000000}"#,
            Ok(()),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":1000000000001}"#,
            Err("`amount`"),
        );
    }

    #[test]
    fn ids_and_keys_must_be_plain_and_short() {
        check(
            r#"{"orderId":"","paymentKey":"k","amount":1}"#,
            Err("`orderId`"),
        );
        check(
            r#"{"orderId":"a/b","paymentKey":"k","amount":1}"#,
            Err("`orderId`"),
        );
        for dots in [".", "..", "..."] {
            let body = format!(r#"{{"orderId":"{dots}","paymentKey":"k","amount":1}}"#);
            check(&body, Err("`orderId` must not be dots alone"));
            let body =
                format!(r#"{{"orderId":"o","paymentKey":"k","amount":1,"eventId":"{dots}"}}"#);
            check(&body, Err("`eventId` must not be dots alone"));
            assert!(check_order_id(dots).is_err());
            assert!(check_event_id(dots).is_err());
        }
        check(r#"{"orderId":"a..b","paymentKey":"k","amount":1}"#, Ok(()));
        check(
            r#"{"orderId":"o","paymentKey":"","amount":1}"#,
            Err("`paymentKey`"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"a b","amount":1}"#,
            Err("`paymentKey`"),
        );
        check(
            r#"{"orderId":"o","paymentKey":"k","amount":1,"eventId":""}"#,
            Err("`eventId`"),
        );
        let long = "x".repeat(65);
        check(
            &format!(r#"{{"orderId":"{long}","paymentKey":"k","amount":1}}"#),
            Err("`orderId`"),
        );
    }

    #[test]
    fn idempotency_keys_must_be_present_visible_and_short() {
        assert_eq!(check_idempotency_key(Some("k-1")), Ok("k-1"));
        assert_eq!(
            check_idempotency_key(None),
            Err(InvalidConfirm::MissingIdempotencyKey)
        );
        for bad in ["", "a b", "é", &"k".repeat(256)] {
            assert!(check_idempotency_key(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_refusal_has_its_stable_code() {
        assert_eq!(InvalidConfirm::TooLarge.code(), "BODY_TOO_LARGE");
        assert_eq!(
            InvalidConfirm::MissingIdempotencyKey.code(),
            "IDEMPOTENCY_KEY_REQUIRED"
        );
        assert_eq!(
            InvalidConfirm::Malformed(String::new()).code(),
            "INVALID_REQUEST"
        );
    }

    #[test]
    fn an_oversized_body_is_refused_before_parsing() {
        let body = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(ConfirmRequest::parse(&body), Err(InvalidConfirm::TooLarge));
    }
}
