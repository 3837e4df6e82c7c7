//! What a look-up, a search and a refund say became of a payment.

use serde_json::{json, Value};

use super::{approval, bytes, error, intent};
use crate::gateway::stripe::classify::{cancel, look_up, search, search_query};
use crate::gateway::{CancelAnswer, GatewayStatus};

#[test]
fn a_look_up_reads_every_status_and_a_refund_from_the_expanded_charge() {
    for (state, charge, expected) in [
        (
            "succeeded",
            json!("ch_1"),
            GatewayStatus::Approved(approval()),
        ),
        (
            "succeeded",
            json!({ "refunded": false, "amount_refunded": 0 }),
            GatewayStatus::Approved(approval()),
        ),
        (
            "succeeded",
            json!({ "refunded": true, "amount_refunded": 15_000 }),
            GatewayStatus::Cancelled,
        ),
        (
            "requires_payment_method",
            json!(null),
            GatewayStatus::Declined,
        ),
        ("canceled", json!(null), GatewayStatus::Declined),
        ("processing", json!(null), GatewayStatus::Pending),
        ("requires_action", json!(null), GatewayStatus::Pending),
        ("requires_confirmation", json!(null), GatewayStatus::Pending),
        ("requires_capture", json!(null), GatewayStatus::Pending),
    ] {
        assert_eq!(
            look_up(200, &bytes(intent(state, charge.clone()))),
            expected,
            "{state} {charge}"
        );
    }
    for (status, body) in [
        (
            200,
            bytes(intent(
                "succeeded",
                json!({ "refunded": false, "amount_refunded": 5_000 }),
            )),
        ),
        (200, bytes(intent("a_status_to_come", json!(null)))),
        (200, b"[]".to_vec()),
        (
            404,
            error("invalid_request_error", Some("resource_missing")),
        ),
        (404, error("invalid_request_error", None)),
        (401, error("invalid_request_error", None)),
        (500, b"oops".to_vec()),
    ] {
        assert!(
            matches!(look_up(status, &body), GatewayStatus::Unavailable { .. }),
            "{status} {}",
            String::from_utf8_lossy(&body)
        );
    }
}

#[test]
fn a_search_settles_only_on_exactly_one_payment_intent() {
    let found = |intents: Vec<Value>| bytes(json!({ "object": "search_result", "data": intents }));
    let succeeded = intent(
        "succeeded",
        json!({ "refunded": false, "amount_refunded": 0 }),
    );
    assert_eq!(
        search(200, &found(vec![succeeded.clone()])),
        GatewayStatus::Approved(approval())
    );
    let declined = intent("requires_payment_method", json!(null));
    assert_eq!(search(200, &found(vec![declined])), GatewayStatus::Declined);
    for (status, body) in [
        (200, found(vec![])),
        (200, found(vec![succeeded.clone(), succeeded])),
        (404, error("invalid_request_error", None)),
        (200, b"{}".to_vec()),
    ] {
        assert!(
            matches!(search(status, &body), GatewayStatus::Unavailable { .. }),
            "{status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    assert_eq!(
        search_query("order-1").as_deref(),
        Some("metadata['order_id']:'order-1'")
    );
    assert_eq!(search_query("o'r"), None);
    assert_eq!(search_query("o\\r"), None);
}

#[test]
fn a_refund_is_done_only_when_stripe_says_so() {
    let refund = |state: &str| bytes(json!({ "id": "re_1", "object": "refund", "status": state }));
    assert_eq!(cancel(200, &refund("succeeded")), CancelAnswer::Cancelled);
    let already = error("invalid_request_error", Some("charge_already_refunded"));
    assert_eq!(cancel(400, &already), CancelAnswer::Cancelled);
    for (status, body, code) in [
        (200, refund("failed"), "refund_failed"),
        (200, refund("canceled"), "refund_canceled"),
        (
            400,
            error("invalid_request_error", None),
            "invalid_request_error",
        ),
        (
            404,
            error("invalid_request_error", Some("resource_missing")),
            "resource_missing",
        ),
    ] {
        assert_eq!(
            cancel(status, &body),
            CancelAnswer::Refused {
                status,
                code: code.into()
            }
        );
    }
    for (status, body) in [
        (200, refund("pending")),
        (200, refund("requires_action")),
        (200, b"{".to_vec()),
        (
            409,
            error("invalid_request_error", Some("idempotency_key_in_use")),
        ),
        (429, error("invalid_request_error", Some("rate_limit"))),
        (500, error("api_error", None)),
        (400, b"Bad Request".to_vec()),
    ] {
        assert!(
            matches!(cancel(status, &body), CancelAnswer::Unavailable { .. }),
            "{status} {}",
            String::from_utf8_lossy(&body)
        );
    }
}
