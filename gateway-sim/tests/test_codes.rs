//! `TossPayments-Test-Code` and the `testCode` fault: the error asked for,
//! with Toss's status, and nothing charged.

use crate::common;

use common::{confirm_body, Sim};
use serde_json::json;

const TEST_CODE: &str = "TossPayments-Test-Code";

async fn confirm_with_code(sim: &Sim, code: &str, order_id: &str) -> common::Reply {
    let body = confirm_body(order_id, &format!("pk-{order_id}"), 1000);
    sim.post(
        "/v1/payments/confirm",
        &[(TEST_CODE, code)],
        body.to_string(),
    )
    .await
}

/// (code, Toss's status for it), one of each kind.
const CODES: [(&str, u16); 10] = [
    ("INVALID_CARD_EXPIRATION", 400),
    ("PROVIDER_ERROR", 400),
    ("UNAUTHORIZED_KEY", 401),
    ("REJECT_CARD_COMPANY", 403),
    ("NOT_FOUND_PAYMENT_SESSION", 404),
    ("NOT_FOUND_TERMINAL_ID", 404),
    ("IDEMPOTENT_REQUEST_PROCESSING", 409),
    ("FAILED_PAYMENT_INTERNAL_SYSTEM_PROCESSING", 500),
    ("UNKNOWN_PAYMENT_ERROR", 500),
    ("A_CODE_IN_NO_LIST", 400),
];

#[tokio::test]
async fn a_test_code_header_answers_that_error_without_charging() {
    let sim = Sim::new();
    for (n, (code, status)) in CODES.iter().enumerate() {
        confirm_with_code(&sim, code, &format!("order-{n}"))
            .await
            .assert_error(*status, code);
    }
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], CODES.len(), "each was received");
    assert_eq!(ledger["approvals"], json!([]));
    assert_eq!(ledger["declines"], json!([]));
    sim.get("/v1/payments/orders/order-0")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
}

#[tokio::test]
async fn the_test_code_fault_applies_to_every_confirm_as_the_header_would() {
    let sim = Sim::new();
    for (n, (code, status)) in CODES.iter().enumerate() {
        sim.put_faults(json!({ "mode": "NORMAL", "testCode": code }))
            .await;
        let order_id = format!("order-{n}");
        let by_fault = sim
            .confirm(confirm_body(&order_id, &format!("pk-{n}"), 1000))
            .await;
        by_fault.assert_error(*status, code);
        let by_header = confirm_with_code(&Sim::new(), code, &order_id).await;
        assert_eq!(by_fault, by_header, "one code path");
    }
    assert_eq!(sim.ledger().await["approvals"], json!([]));
    sim.put_faults(json!({ "mode": "NORMAL", "testCode": null }))
        .await;
    sim.confirm(confirm_body("order-x", "pk-x", 1000))
        .await
        .assert_ok();
}

#[tokio::test]
async fn a_header_wins_over_the_fault() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "testCode": "REJECT_CARD_COMPANY" }))
        .await;
    confirm_with_code(&sim, "INVALID_STOPPED_CARD", "order-1")
        .await
        .assert_error(400, "INVALID_STOPPED_CARD");
}

#[tokio::test]
async fn a_live_key_ignores_the_header_and_the_fault() {
    let sim = Sim::with_key("live_sk_merchant");
    confirm_with_code(&sim, "INVALID_CARD_EXPIRATION", "order-1")
        .await
        .assert_ok();
    sim.put_faults(json!({ "mode": "NORMAL", "testCode": "REJECT_CARD_COMPANY" }))
        .await;
    sim.confirm(confirm_body("order-2", "pk-2", 1000))
        .await
        .assert_ok();
    let calls = sim.ledger().await["calls"].clone();
    assert_eq!(
        calls[0]["testCode"], "INVALID_CARD_EXPIRATION",
        "recorded all the same"
    );
}

#[tokio::test]
async fn a_test_code_answer_is_kept_under_its_key_unless_a_5xx() {
    let sim = Sim::new();
    let body = confirm_body("order-1", "pk-1", 1000).to_string();
    let keyed = |code| [("Idempotency-Key", "key-1"), (TEST_CODE, code)];
    let first = sim
        .post(
            "/v1/payments/confirm",
            &keyed("REJECT_CARD_COMPANY"),
            body.clone(),
        )
        .await;
    first.assert_error(403, "REJECT_CARD_COMPANY");
    let replay = sim
        .post(
            "/v1/payments/confirm",
            &[("Idempotency-Key", "key-1")],
            body.clone(),
        )
        .await;
    assert_eq!(replay, first);

    let server_error = [("Idempotency-Key", "key-2"), (TEST_CODE, "COMMON_ERROR")];
    sim.post("/v1/payments/confirm", &server_error, body.clone())
        .await
        .assert_error(500, "COMMON_ERROR");
    let retried = sim
        .post(
            "/v1/payments/confirm",
            &[("Idempotency-Key", "key-2")],
            body,
        )
        .await;
    assert_eq!(retried.assert_ok()["status"], "DONE");
}

#[tokio::test]
async fn a_header_that_is_no_error_code_is_an_invalid_request() {
    let sim = Sim::new();
    for code in ["invalid_card", "", "A CODE", "코드"] {
        confirm_with_code(&sim, code, "order-1")
            .await
            .assert_error(400, "INVALID_REQUEST");
    }
    for code in ["lower", "", "A-B"] {
        let reply = sim
            .put_faults_raw(json!({ "mode": "NORMAL", "testCode": code }).to_string())
            .await;
        reply.assert_error(400, "INVALID_FAULTS");
    }
}
