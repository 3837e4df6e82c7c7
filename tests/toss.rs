//! `GATEWAY_PROVIDER=toss` against a Toss API that follows Toss's documents (the
//! simulator, a real process): every class of answer ends at the PG's truth, an approval
//! of another amount is not APPROVED, and every call carries the right Basic header and
//! every POST its payment's own Idempotency-Key. (Webhooks, and a refund sent again:
//! `toss_webhooks.rs`; a timeout after charging and one without: `recovery.rs`; a late
//! approval refunded: `events.rs`.)

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use support::toss::{confirm_with_test_code, payments, status_and_reason, MANUAL_RECOVERY};
use support::{System, GATEWAY_SECRET_KEY};

#[tokio::test]
async fn approved_declined_and_not_sent_are_told_apart() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    let (status, approved) = system.confirm_order("order-approved").await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(status_and_reason(&approved), (Some("APPROVED"), None));

    let declined = confirm_with_test_code(&system, "order-declined", "REJECT_CARD_PAYMENT").await;
    assert_eq!(
        status_and_reason(&declined),
        (Some("FAILED"), Some("DECLINED"))
    );
    let expired =
        confirm_with_test_code(&system, "order-expired", "NOT_FOUND_PAYMENT_SESSION").await;
    assert_eq!(
        status_and_reason(&expired),
        (Some("FAILED"), Some("DECLINED"))
    );
    let not_sent = confirm_with_test_code(&system, "order-not-sent", "UNAUTHORIZED_KEY").await;
    assert_eq!(
        status_and_reason(&not_sent),
        (Some("FAILED"), Some("GATEWAY_REJECTED")),
        "our key refused is never the customer's decline"
    );
    let metrics = system.origin_metrics().await;
    assert!(
        metrics.contains(r#"origin_gateway_needs_operator_total{outcome="not_sent"} 1"#),
        "{metrics}"
    );
    let ledger = system.ledger().await;
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_500_after_charging_and_already_processed_are_unknown_then_approved_as_the_pg_says() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "ERROR_500_AFTER_PROCESSING"}))
        .await;
    let (status, payment) = system.confirm_order("order-500").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN"))
    );
    system.set_faults(json!({"mode": "NORMAL"})).await;

    // A confirm of this payment reached Toss before ours (a lost answer): Toss answers
    // ours ALREADY_PROCESSED_PAYMENT, and the payment is charged.
    let direct = system
        .http
        .post(format!("{}/v1/payments/confirm", system.gateway))
        .basic_auth(GATEWAY_SECRET_KEY, Some(""))
        .json(&json!({"paymentKey": "pk-order-twice", "orderId": "order-twice", "amount": 5000}))
        .send()
        .await
        .expect("the simulator answers");
    assert_eq!(direct.status(), StatusCode::OK);
    let (status, payment) = system.confirm_order("order-twice").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN")),
        "ALREADY_PROCESSED_PAYMENT is never a failure"
    );

    let report = system.run_recovery_at(&system.origin).await;
    assert_eq!(report["approved"], 2, "{report}");
    let now = payments(&system).await;
    for order in ["order-500", "order-twice"] {
        assert_eq!(now[order]["status"], "APPROVED", "{order}");
    }
    let ledger = system.ledger().await;
    assert_eq!(
        ledger["approvals"].as_array().map(Vec::len),
        Some(2),
        "one charge per order: {ledger}"
    );
}

#[tokio::test]
async fn already_processed_or_a_code_in_no_list_without_a_charge_ends_failed_never_at_once() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    for (order, code) in [
        ("order-claimed", "ALREADY_PROCESSED_PAYMENT"),
        ("order-new-code", "A_CODE_TOSS_ADDS_NEXT_YEAR"),
    ] {
        let payment = confirm_with_test_code(&system, order, code).await;
        assert_eq!(payment["status"], "UNKNOWN", "{code} is unknown: {payment}");
    }
    for _ in 0..2 {
        let report = system.run_recovery_at(&system.origin).await;
        assert_eq!(report["unresolved"], 2, "{report}");
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let report = system.run_recovery_at(&system.origin).await;
    assert_eq!(report["failed"], 2, "{report}");
    for (order, payment) in payments(&system).await {
        assert_eq!(
            status_and_reason(&payment),
            (Some("FAILED"), Some("NOT_FOUND_AT_PG")),
            "{order}"
        );
    }
}

#[tokio::test]
async fn an_approval_of_another_amount_is_kept_for_an_operator_never_approved() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "NORMAL", "approvedAmountDelta": 100}))
        .await;
    let (status, payment) = system.confirm_order("order-skewed").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN"))
    );
    let report = system.run_recovery_at(&system.origin).await;
    assert_eq!(report["approved"], 0, "{report}");
    let unknown = system.operator_get("/admin/payments?status=UNKNOWN").await;
    let flag = unknown["payments"][0]["recovery"]["flag"]
        .as_str()
        .expect("flagged for an operator");
    assert!(
        flag.contains("5100 KRW") && flag.contains("5000 KRW"),
        "both amounts: {flag}"
    );
    let metrics = system.origin_metrics().await;
    assert!(
        metrics.contains(r#"origin_gateway_needs_operator_total{outcome="approval_mismatch"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn every_call_carries_the_basic_key_and_every_post_its_payment_s_own_key() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    for order in ["order-keys-1", "order-keys-2", "order-keys-3"] {
        system.confirm_order(order).await;
    }
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    system.confirm_order("order-keys-4").await;
    system.set_faults(json!({"mode": "NORMAL"})).await;
    system.run_recovery_at(&system.origin).await;

    let ledger = system.ledger().await;
    let calls = ledger["calls"].as_array().expect("the calls received");
    assert!(calls.len() >= 5, "{ledger}");
    let mut keys = BTreeSet::new();
    for call in calls {
        assert_eq!(call["authorized"], true, "{call}");
        if call["method"] == "POST" {
            let key = call["idempotencyKey"]
                .as_str()
                .expect("a key on every POST");
            assert!(keys.insert(key.to_owned()), "a key used twice: {key}");
        }
    }
    assert_eq!(keys.len(), 4, "one key per order: {keys:?}");
    for (order, key) in [
        "order-keys-1",
        "order-keys-2",
        "order-keys-3",
        "order-keys-4",
    ]
    .iter()
    .zip(&keys)
    {
        assert!(key.starts_with(&format!("{order}:confirm:")), "{key}");
    }
}
