//! `POST /v1/payments/{paymentKey}/cancel`: a full cancel, and each refusal.

use crate::common;

use std::time::Duration;

use common::{cancel_body, confirm_body, Sim};
use serde_json::{json, Value};

#[tokio::test]
async fn cancel_answers_the_canceled_payment_and_keeps_the_approval() {
    let sim = Sim::new();
    let confirmed = sim
        .confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let payment = sim
        .cancel_with("pk-1", &[], cancel_body("고객 변심"))
        .await
        .assert_ok();
    assert_eq!(payment["status"], "CANCELED");
    assert_eq!(payment["balanceAmount"], 0);
    assert_eq!(payment["approvedAt"], confirmed["approvedAt"]);
    let cancel = &payment["cancels"][0];
    assert_eq!(cancel["cancelReason"], "고객 변심");
    assert_eq!(cancel["cancelAmount"], 1000);
    assert_eq!(cancel["cancelStatus"], "DONE");
    assert!(
        cancel["transactionKey"].is_string() && cancel["canceledAt"].is_string(),
        "{cancel}"
    );
    assert_eq!(payment["lastTransactionKey"], cancel["transactionKey"]);

    let ledger = sim.ledger().await;
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(1));
    assert!(ledger["approvals"][0]["cancelledAt"].is_u64(), "{ledger}");
    assert_eq!(ledger["requestCount"], 1, "cancels are not confirms");
}

#[tokio::test]
async fn a_second_cancel_is_already_canceled_payment() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.cancel("pk-1").await.assert_ok();
    let cancelled_at = sim.ledger().await["approvals"][0]["cancelledAt"].clone();
    sim.cancel("pk-1")
        .await
        .assert_error(400, "ALREADY_CANCELED_PAYMENT");
    assert_eq!(
        sim.ledger().await["approvals"][0]["cancelledAt"],
        cancelled_at
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_declined_and_in_progress_payments_are_refused() {
    let sim = Sim::new();
    sim.cancel("pk-none")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    sim.put_faults(json!({ "mode": "NORMAL", "declineRate": 1.0 }))
        .await;
    sim.confirm(confirm_body("order-1", "pk-1", 1000)).await;
    sim.cancel("pk-1")
        .await
        .assert_error(403, "NOT_CANCELABLE_PAYMENT");

    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 300 }))
        .await;
    let gave_up = tokio::time::timeout(
        Duration::from_millis(100),
        sim.confirm(confirm_body("order-2", "pk-2", 1000)),
    )
    .await;
    assert!(gave_up.is_err());
    sim.cancel("pk-2")
        .await
        .assert_error(403, "NOT_CANCELABLE_PAYMENT");
    tokio::time::sleep(Duration::from_millis(400)).await;
    sim.cancel("pk-2").await.assert_ok();
}

#[tokio::test]
async fn a_cancel_needs_a_reason_and_takes_the_whole_balance() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    for body in [
        json!({}),
        json!({ "cancelReason": "" }),
        json!({ "cancelReason": "x".repeat(201) }),
        json!({ "cancelReason": 5 }),
        json!({ "cancelReason": "refund", "cancelAmount": 0 }),
        json!({ "cancelReason": "refund", "cancelAmount": "1000" }),
    ] {
        sim.cancel_with("pk-1", &[], body)
            .await
            .assert_error(400, "INVALID_REQUEST");
    }
    let raw = sim.post("/v1/payments/pk-1/cancel", &[], "not json").await;
    raw.assert_error(400, "INVALID_REQUEST");
    let partial = json!({ "cancelReason": "refund", "cancelAmount": 400 });
    sim.cancel_with("pk-1", &[], partial)
        .await
        .assert_error(403, "NOT_ALLOWED_PARTIAL_REFUND");
    let too_much = json!({ "cancelReason": "refund", "cancelAmount": 1001 });
    sim.cancel_with("pk-1", &[], too_much)
        .await
        .assert_error(403, "NOT_CANCELABLE_AMOUNT");
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "DONE"
    );

    let whole = json!({ "cancelReason": "refund", "cancelAmount": 1000, "currency": "KRW" });
    assert_eq!(
        sim.cancel_with("pk-1", &[], whole).await.assert_ok()["status"],
        "CANCELED"
    );
}

#[tokio::test]
async fn non_idempotent_cancel_takes_back_every_charge() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "idempotent": false }))
        .await;
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.cancel("pk-1").await.assert_ok();
    let ledger = sim.ledger().await;
    let approvals = ledger["approvals"].as_array().expect("approvals");
    assert_eq!(approvals.len(), 2, "{ledger}");
    assert!(
        approvals.iter().all(|a| a["cancelledAt"].is_u64()),
        "{ledger}"
    );
}

#[tokio::test]
async fn cancel_is_answered_at_once_whatever_the_confirm_faults() {
    let sim = Sim::new();
    for (n, faults) in [
        json!({ "mode": "DELAY", "delayMs": 5000 }),
        json!({ "mode": "HANG_BEFORE_PROCESSING" }),
        json!({ "mode": "HANG_AFTER_PROCESSING" }),
        json!({ "mode": "ERROR_500_AFTER_PROCESSING" }),
        json!({ "mode": "NORMAL", "maxPerSecond": 1, "testCode": "COMMON_ERROR" }),
    ]
    .into_iter()
    .enumerate()
    {
        sim.put_faults(json!({ "mode": "NORMAL" })).await;
        let payment_key = format!("pk-{n}");
        sim.confirm(confirm_body(&format!("order-{n}"), &payment_key, 1000))
            .await
            .assert_ok();
        sim.put_faults(faults.clone()).await;
        let answer = tokio::time::timeout(Duration::from_secs(1), sim.cancel(&payment_key))
            .await
            .unwrap_or_else(|_| panic!("cancel held under {faults}"));
        assert_eq!(answer.assert_ok()["status"], "CANCELED", "{faults}");
    }
}

#[tokio::test]
async fn cancel_under_error_500_answers_500_and_does_nothing() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.put_faults(json!({ "mode": "ERROR_500" })).await;
    let key = [("Idempotency-Key", "cancel-1")];
    sim.cancel_with("pk-1", &key, cancel_body("refund"))
        .await
        .assert_error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING");
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "DONE"
    );
    assert_eq!(
        sim.ledger().await["approvals"][0]["cancelledAt"],
        Value::Null
    );
    // Nothing was kept under the key: the retry cancels.
    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    let retried = sim.cancel_with("pk-1", &key, cancel_body("refund")).await;
    assert_eq!(retried.assert_ok()["status"], "CANCELED");
}
