//! The PG's webhooks under `GATEWAY_PROVIDER=toss`, against the simulator: an unsigned
//! webhook claiming DONE for a declined payment changes nothing, a cancel webhook settles
//! its payment only as the look-up finds it, bad bodies are 400, a flood costs no more
//! look-ups than the rate at the PG, and a late approval found by a webhook's look-up is
//! refunded under one key, sent again after a 500.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::toss::{confirm_with_test_code, payments, status_and_reason, MANUAL_RECOVERY};
use support::{System, GATEWAY_SECRET_KEY};

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

fn cancelled_for(order_id: &str) -> String {
    json!({
        "eventType": "CANCEL_STATUS_CHANGED",
        "createdAt": "2026-12-02T10:00:00.000000",
        "data": {"orderId": order_id, "paymentKey": format!("pk-{order_id}"),
                 "cancelStatus": "DONE", "cancelAmount": 5000},
    })
    .to_string()
}

#[tokio::test]
async fn a_cancel_webhook_settles_its_payment_only_as_the_look_up_finds_it() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    // Both charged at the PG, their answers lost: UNKNOWN.
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    for order in ["order-still-done", "order-cancelled-at-pg"] {
        assert_eq!(system.confirm_order(order).await.1["status"], "UNKNOWN");
    }
    system.set_faults(json!({"mode": "NORMAL"})).await;
    // One is cancelled at the PG (by its console, say); the other is not.
    let cancel = system
        .http
        .post(format!(
            "{}/v1/payments/pk-order-cancelled-at-pg/cancel",
            system.gateway
        ))
        .basic_auth(GATEWAY_SECRET_KEY, Some(""))
        .header("idempotency-key", "console-cancel-1")
        .json(&json!({"cancelReason": "the customer asked"}))
        .send()
        .await
        .expect("the simulator answers");
    assert_eq!(cancel.status(), StatusCode::OK);
    let asked_before = system.ledger().await["statusQueryCount"].as_u64();

    // Each is said to be cancelled; only the look-up says which is.
    for order in ["order-still-done", "order-cancelled-at-pg"] {
        assert_eq!(
            webhook(&system, cancelled_for(order)).await.status(),
            StatusCode::OK
        );
    }
    eventually(
        "both payments settled by their look-ups",
        Duration::from_secs(10),
        Duration::from_millis(50),
        || async {
            let now = payments(&system).await;
            let settled: Vec<_> = ["order-still-done", "order-cancelled-at-pg"]
                .iter()
                .map(|order| now.get(*order).map(status_and_reason))
                .collect();
            (settled
                == [
                    Some((Some("APPROVED"), None)),
                    Some((Some("FAILED"), Some("CANCELLED_AT_PG"))),
                ])
            .then_some(())
            .ok_or(format!("{settled:?}"))
        },
    )
    .await;
    let asked = system.ledger().await["statusQueryCount"].as_u64();
    assert!(
        asked
            .zip(asked_before)
            .is_some_and(|(now, then)| now >= then + 2),
        "each webhook's payment looked up: {asked_before:?} then {asked:?}"
    );
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
