//! A confirm's answer: approved, declined, rejected, throttled or unknown, and the
//! PaymentIntent id it names.

use serde_json::json;

use super::{approval, bytes, error, intent};
use crate::gateway::stripe::classify::confirm;
use crate::gateway::{Confirmed, GatewayAnswer};

#[test]
fn a_succeeded_payment_intent_is_an_approval_and_its_id_is_kept() {
    assert_eq!(
        confirm(200, &bytes(intent("succeeded", json!("ch_1")))),
        Confirmed {
            answer: GatewayAnswer::Approved(approval()),
            reference: Some("pi_1".into()),
        }
    );
}

#[test]
fn a_decline_is_declined_whether_typed_card_error_or_as_localstripe_types_it() {
    // Stripe: 402 card_error, the PaymentIntent named in the error.
    let stripe = json!({ "error": {
        "type": "card_error", "code": "card_declined", "decline_code": "insufficient_funds",
        "payment_intent": { "id": "pi_2", "status": "requires_payment_method" },
    }});
    assert_eq!(
        confirm(402, &bytes(stripe)),
        Confirmed {
            answer: GatewayAnswer::Declined {
                code: "insufficient_funds".into()
            },
            reference: Some("pi_2".into()),
        }
    );
    // localstripe: 402 invalid_request_error card_declined, no PaymentIntent named.
    let localstripe = json!({ "error": {
        "type": "invalid_request_error", "code": "card_declined", "charge": "ch_1",
        "message": "Your card was declined.",
    }});
    assert_eq!(
        confirm(402, &bytes(localstripe)),
        GatewayAnswer::Declined {
            code: "card_declined".into()
        }
        .into()
    );
    for code in ["expired_card", "incorrect_cvc", "insufficient_funds"] {
        let answer = confirm(402, &error("invalid_request_error", Some(code))).answer;
        assert_eq!(answer, GatewayAnswer::Declined { code: code.into() });
    }
    let answer = confirm(402, &error("card_error", Some("a_new_card_code"))).answer;
    assert_eq!(
        answer,
        GatewayAnswer::Declined {
            code: "a_new_card_code".into()
        }
    );
    let failed = confirm(200, &bytes(intent("requires_payment_method", json!(null))));
    assert_eq!(
        failed.answer,
        GatewayAnswer::Declined {
            code: "insufficient_funds".into()
        }
    );
    let canceled = confirm(200, &bytes(intent("canceled", json!(null)))).answer;
    assert_eq!(
        canceled,
        GatewayAnswer::Declined {
            code: "canceled".into()
        }
    );
}

#[test]
fn our_own_mistakes_are_rejected_never_a_decline() {
    for (status, body, code) in [
        (
            400,
            error("invalid_request_error", Some("parameter_unknown")),
            "parameter_unknown",
        ),
        (
            400,
            error("invalid_request_error", None),
            "invalid_request_error",
        ),
        (
            401,
            error("invalid_request_error", None),
            "invalid_request_error",
        ),
        (
            403,
            error("invalid_request_error", Some("secret_key_required")),
            "secret_key_required",
        ),
        (
            404,
            error("invalid_request_error", Some("resource_missing")),
            "resource_missing",
        ),
    ] {
        assert_eq!(
            confirm(status, &body).answer,
            GatewayAnswer::Rejected {
                status,
                code: code.into()
            }
        );
    }
}

#[test]
fn a_429_is_throttled_with_or_without_a_body() {
    for (body, code) in [
        (
            error("invalid_request_error", Some("rate_limit")),
            "rate_limit",
        ),
        (b"Too Many Requests".to_vec(), "rate_limit"),
    ] {
        assert_eq!(
            confirm(429, &body).answer,
            GatewayAnswer::Throttled { code: code.into() }
        );
    }
}

#[test]
fn what_may_have_charged_or_cannot_be_read_is_unknown() {
    let cases: Vec<(u16, Vec<u8>)> = vec![
        (400, error("idempotency_error", None)),
        (
            400,
            error("invalid_request_error", Some("idempotency_error")),
        ),
        (
            409,
            error("invalid_request_error", Some("idempotency_key_in_use")),
        ),
        (
            402,
            error("invalid_request_error", Some("a_code_in_no_list")),
        ),
        (424, error("api_error", None)),
        (500, error("api_error", None)),
        (503, b"".to_vec()),
        (502, b"<html>Bad Gateway</html>".to_vec()),
        (401, b"Unauthorized".to_vec()),
        (418, error("invalid_request_error", None)),
        (200, b"{\"id\":\"pi_1\",\"status\":\"succ".to_vec()),
        (200, b"not json".to_vec()),
        (
            200,
            bytes(json!({ "id": "pi_1", "status": "succeeded", "currency": "krw" })),
        ),
        (
            200,
            bytes(
                json!({ "id": "pi_1", "status": "succeeded", "amount": 150.5, "currency": "krw" }),
            ),
        ),
        (
            200,
            bytes(
                json!({ "id": "pi_1", "status": "succeeded", "amount": 15_000, "currency": "krw", "metadata": {} }),
            ),
        ),
        (200, bytes(intent("requires_capture", json!(null)))),
        (200, bytes(intent("processing", json!(null)))),
        (200, bytes(intent("requires_action", json!(null)))),
        (200, bytes(intent("requires_confirmation", json!(null)))),
        (200, bytes(intent("a_status_to_come", json!(null)))),
    ];
    for (status, body) in cases {
        let answer = confirm(status, &body).answer;
        assert!(
            matches!(answer, GatewayAnswer::Unknown { .. }),
            "{status} {}: {answer:?}",
            String::from_utf8_lossy(&body)
        );
    }
}

#[test]
fn only_a_payment_intent_id_is_kept_as_the_reference() {
    assert_eq!(
        confirm(500, &bytes(intent("succeeded", json!(null))))
            .reference
            .as_deref(),
        Some("pi_1")
    );
    assert_eq!(
        confirm(200, &bytes(json!({ "id": "ch_1" }))).reference,
        None
    );
    assert_eq!(confirm(200, b"{\"id\":\"pi_1\"").reference, None);
    assert_eq!(
        confirm(402, &error("card_error", Some("card_declined"))).reference,
        None
    );
}
