//! `GATEWAY_PROVIDER=toss` against a Toss API that follows Toss's documents (the
//! simulator, a real process): every class of answer ends at the PG's truth, an approval
//! of another amount is not APPROVED, a forged webhook changes nothing, a webhook flood
//! costs a bounded number of look-ups, and every call carries the right Basic header and
//! every POST its payment's own Idempotency-Key. (A timeout after charging and one
//! without: `recovery.rs`; a late approval refunded: `events.rs`.)

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::{System, GATEWAY_SECRET_KEY};

/// Recovery runs only when a test asks; a PG call times out after 300 ms, so NOT_FOUND
/// answers count 600 ms apart.
const MANUAL_RECOVERY: [(&str, &str); 3] = [
    ("GATEWAY_TIMEOUT_MS", "300"),
    ("RECOVERY_INTERVAL_MS", "3600000"),
    ("RECOVERY_MIN_AGE_MS", "0"),
];

async fn payments(system: &System) -> BTreeMap<String, Value> {
    system.payments_at(&system.origin).await
}

fn status_and_reason(payment: &Value) -> (Option<&str>, Option<&str>) {
    (
        payment["status"].as_str(),
        payment["failureReason"].as_str(),
    )
}

/// A confirm answered with `code`, as Toss's sandbox answers one sent with
/// `TossPayments-Test-Code: code`.
async fn confirm_with_test_code(system: &System, order_id: &str, code: &str) -> Value {
    system
        .set_faults(json!({"mode": "NORMAL", "testCode": code}))
        .await;
    let (_, payment) = system.confirm_order(order_id).await;
    system.set_faults(json!({"mode": "NORMAL"})).await;
    payment
}

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

async fn webhook(system: &System, body: String) -> reqwest::Response {
    system
        .http
        .post(format!("{}/gateway/webhooks/toss", system.origin))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the origin answers")
}

fn done_for(order_id: &str) -> String {
    json!({
        "eventType": "PAYMENT_STATUS_CHANGED",
        "createdAt": "2026-12-02T10:00:00.000000",
        "data": {"orderId": order_id, "paymentKey": format!("pk-{order_id}"), "status": "DONE",
                 "totalAmount": 5000, "currency": "KRW"},
    })
    .to_string()
}

#[tokio::test]
async fn an_unsigned_webhook_claiming_done_for_a_declined_payment_changes_nothing() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    let declined = confirm_with_test_code(&system, "order-declined", "REJECT_CARD_PAYMENT").await;
    assert_eq!(declined["status"], "FAILED");
    let asked_before = system.ledger().await["statusQueryCount"].as_u64();

    assert_eq!(
        webhook(&system, done_for("order-declined")).await.status(),
        StatusCode::OK
    );
    eventually(
        "the webhook's payment looked up",
        Duration::from_secs(10),
        Duration::from_millis(50),
        || async {
            let asked = system.ledger().await["statusQueryCount"].as_u64();
            (asked > asked_before)
                .then_some(())
                .ok_or(format!("{asked:?}"))
        },
    )
    .await;
    let payment = &payments(&system).await["order-declined"];
    assert_eq!(
        status_and_reason(payment),
        (Some("FAILED"), Some("DECLINED"))
    );
    assert_eq!(system.ledger().await["approvals"], json!([]));

    for (body, what) in [
        ("not json".to_owned(), "not JSON"),
        (
            "{\"eventType\":\"PAYMENT_STATUS_CHANGED\"}".to_owned(),
            "no data",
        ),
        (
            format!("{{\"pad\":\"{}\"}}", "x".repeat(20_000)),
            "too large",
        ),
    ] {
        let response = webhook(&system, body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{what}");
    }
}

#[tokio::test]
async fn a_webhook_flood_costs_no_more_look_ups_than_the_rate() {
    let mut vars = MANUAL_RECOVERY.to_vec();
    vars.push(("GATEWAY_WEBHOOK_LOOKUP_RATE", "5/1s"));
    // Twenty timeouts in a row are the setup here, not the breaker's subject.
    vars.push(("BREAKER_ENABLED", "false"));
    let system = System::backend(&vars).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let orders: Vec<String> = (0..20).map(|n| format!("order-flood-{n}")).collect();
    for order in &orders {
        assert_eq!(system.confirm_order(order).await.1["status"], "UNKNOWN");
    }
    system.set_faults(json!({"mode": "NORMAL"})).await;
    let flood_began = harness::signed::now_ms();
    for round in 0..10 {
        for order in &orders {
            assert_eq!(
                webhook(&system, done_for(order)).await.status(),
                StatusCode::OK
            );
        }
        let stranger = format!("order-not-ours-{round}");
        assert_eq!(
            webhook(&system, done_for(&stranger)).await.status(),
            StatusCode::OK
        );
    }
    eventually(
        "every flooded payment approved by its look-up",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || async {
            // Read status by status, a payment moving meanwhile may be in no list yet.
            let now = payments(&system).await;
            let approved = orders
                .iter()
                .filter(|order| {
                    now.get(order.as_str())
                        .is_some_and(|payment| payment["status"] == "APPROVED")
                })
                .count();
            (approved == orders.len())
                .then_some(())
                .ok_or(format!("{approved} approved"))
        },
    )
    .await;
    // At most 5 a second in any second, as the PG saw them arrive.
    let ledger = system.ledger().await;
    let look_ups: Vec<i64> = ledger["calls"]
        .as_array()
        .expect("the calls")
        .iter()
        .filter(|call| call["method"] == "GET")
        .filter_map(|call| call["receivedAt"].as_i64())
        .filter(|&at| at >= flood_began)
        .collect();
    let busiest = look_ups
        .iter()
        .map(|&from| {
            look_ups
                .iter()
                .filter(|&&at| (from..from + 1000).contains(&at))
                .count()
        })
        .max()
        .unwrap_or(0);
    println!(
        "{} look-ups for 210 webhooks; at most {busiest} in one second",
        look_ups.len()
    );
    assert!(busiest <= 6, "{busiest} look-ups in one second");
    assert!(
        look_ups.len() <= 40,
        "each payment looked up about once: {}",
        look_ups.len()
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

#[tokio::test]
async fn a_refund_sent_again_after_a_500_carries_the_same_key() {
    // Recovery every 2 s: a refund the PG could not make is tried again a second later.
    let system = System::backend(&[
        ("GATEWAY_TIMEOUT_MS", "300"),
        ("RECOVERY_INTERVAL_MS", "2000"),
        ("RECOVERY_MIN_AGE_MS", "0"),
    ])
    .await;
    let failed = confirm_with_test_code(&system, "order-late", "UNAUTHORIZED_KEY").await;
    assert_eq!(failed["status"], "FAILED");
    // The PG charges the order after all (a late approval), and cannot cancel at first.
    let direct = system
        .http
        .post(format!("{}/v1/payments/confirm", system.gateway))
        .basic_auth(GATEWAY_SECRET_KEY, Some(""))
        .json(&json!({"paymentKey": "pk-order-late", "orderId": "order-late", "amount": 5000}))
        .send()
        .await
        .expect("the simulator answers");
    assert_eq!(direct.status(), StatusCode::OK);
    system.set_faults(json!({"mode": "ERROR_500"})).await;
    assert_eq!(
        webhook(&system, done_for("order-late")).await.status(),
        StatusCode::OK
    );
    eventually(
        "the late approval's first cancel refused",
        Duration::from_secs(10),
        Duration::from_millis(50),
        || async {
            let metrics = system.origin_metrics().await;
            metrics
                .contains(r#"origin_late_approvals_total{outcome="refund_pending"} 1"#)
                .then_some(())
                .ok_or(metrics)
        },
    )
    .await;
    system.set_faults(json!({"mode": "NORMAL"})).await;
    eventually(
        "the late approval refunded by a later cycle",
        Duration::from_secs(30),
        Duration::from_millis(100),
        || async {
            let now = payments(&system).await;
            let status = now.get("order-late").map(|p| p["status"].clone());
            (status == Some(json!("REFUNDED")))
                .then_some(())
                .ok_or(format!("{status:?}"))
        },
    )
    .await;

    let ledger = system.ledger().await;
    let cancels: Vec<&Value> = ledger["calls"]
        .as_array()
        .expect("the calls")
        .iter()
        .filter(|call| {
            call["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("/cancel"))
        })
        .collect();
    assert!(cancels.len() >= 2, "refused, then made: {ledger}");
    for cancel in &cancels {
        assert_eq!(
            cancel["idempotencyKey"], cancels[0]["idempotencyKey"],
            "one operation, one key"
        );
    }
    assert!(cancels[0]["idempotencyKey"]
        .as_str()
        .is_some_and(|key| key.starts_with("order-late:confirm:") && key.ends_with(":cancel")));
}
