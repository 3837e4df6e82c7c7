//! Limited-stock events, with the origin and the simulator as real processes: never
//! oversold, units back on failure, late approvals refunded.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::{System, OPERATOR_TOKEN};

const PRICE: i64 = 5000;

fn order(order_id: &str, event_id: &str, amount: i64) -> String {
    json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": amount, "eventId": event_id })
        .to_string()
}

async fn confirm_as(system: &System, user: &str, body: &str) -> (StatusCode, Value) {
    let key = format!("key-{user}");
    let response = system.confirm_at_origin(user, Some(&key), body).await;
    let status = response.status();
    (status, response.json().await.expect("a JSON body"))
}

async fn event(system: &System, event_id: &str) -> Value {
    system
        .operator_get(&format!("/admin/events/{event_id}"))
        .await
}

async fn run_recovery(system: &System) -> Value {
    system.run_recovery_at(&system.origin).await
}

#[tokio::test]
async fn a_hundred_units_for_five_hundred_buyers_sell_exactly_a_hundred() {
    let system = System::backend(&[
        ("ORIGIN_MAX_CONCURRENT_REQUESTS", "1000"),
        ("BULKHEAD_MAX_CONCURRENT", "1000"),
        // 500 at once on two cores: a PG call may wait for the CPU past the slow-call
        // threshold or the timeout, and this test is about the stock, not the guard.
        ("BREAKER_ENABLED", "false"),
        ("GATEWAY_CONCURRENCY", "off"),
        ("GATEWAY_TIMEOUT_MS", "60000"),
        ("DB_ACQUIRE_TIMEOUT_MS", "60000"),
    ])
    .await;
    let (status, _) = system
        .set_event(json!({"eventId": "drop-1", "stock": 100, "amount": PRICE}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let answers = futures_util::future::join_all((0..500).map(|n| {
        let system = &system;
        async move {
            let body = order(&format!("order-{n}"), "drop-1", PRICE);
            confirm_as(system, &format!("user-{n}"), &body).await
        }
    }))
    .await;
    let approved = answers
        .iter()
        .filter(|(status, body)| *status == StatusCode::CREATED && body["status"] == "APPROVED")
        .count();
    let sold_out = answers
        .iter()
        .filter(|(status, body)| *status == StatusCode::CONFLICT && body["code"] == "SOLD_OUT")
        .count();
    assert_eq!(
        (approved, sold_out),
        (100, 400),
        "{:?}",
        answers
            .iter()
            .find(|(s, _)| *s != StatusCode::CREATED && *s != StatusCode::CONFLICT)
    );
    let ledger = system.ledger().await;
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(100));
    assert_eq!(
        ledger["requestCount"], 100,
        "sold-out confirms never reached the PG"
    );
    let drop = event(&system, "drop-1").await;
    assert_eq!(
        (drop["sold"].as_i64(), drop["reserved"].as_i64()),
        (Some(100), Some(0))
    );
}

#[tokio::test]
async fn events_are_set_by_operators_and_their_price_is_enforced() {
    let system = System::backend(&[]).await;
    let bad = [
        json!({"eventId": "e-1", "stock": -1, "amount": PRICE}),
        json!({"eventId": "e-1", "stock": 1, "amount": 0}),
        json!({"eventId": "", "stock": 1, "amount": PRICE}),
        json!({"eventId": "e-1", "stock": 1}),
        json!({"eventId": "e-1", "stock": 1, "amount": PRICE, "extra": true}),
    ];
    for body in bad {
        let (status, refusal) = system.set_event(body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {refusal}");
        assert!(refusal["code"].is_string());
    }
    assert_eq!(
        system
            .set_event(json!({"eventId": "e-1", "stock": 1, "amount": PRICE}))
            .await
            .0,
        StatusCode::OK
    );
    let (status, refusal) =
        confirm_as(&system, "user-1", &order("order-1", "e-1", PRICE + 1)).await;
    assert_eq!(
        (status, refusal["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("AMOUNT_MISMATCH"))
    );
    let (status, _) = confirm_as(&system, "user-2", &order("order-2", "e-1", PRICE)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, refusal) = system
        .set_event(json!({"eventId": "e-1", "stock": 0, "amount": PRICE}))
        .await;
    assert_eq!(
        (status, refusal["code"].as_str()),
        (StatusCode::CONFLICT, Some("STOCK_BELOW_COMMITTED"))
    );
    let (status, view) = system
        .set_event(json!({"eventId": "e-1", "stock": 3, "amount": PRICE}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        view,
        json!({"eventId": "e-1", "stock": 3, "amount": PRICE, "reserved": 0, "sold": 1})
    );
    let missing = system
        .http
        .get(format!("{}/admin/events/nope", system.origin_admin))
        .bearer_auth(OPERATOR_TOKEN)
        .send()
        .await
        .expect("answers");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    for query in ["", "?status=SHIPPED", "?status=FAILED&limit=many"] {
        let refused = system
            .http
            .get(format!("{}/admin/payments{query}", system.origin_admin))
            .bearer_auth(OPERATOR_TOKEN)
            .send()
            .await
            .expect("answers");
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{query}");
        let body: Value = refused.json().await.expect("a JSON refusal");
        assert_eq!(body["code"], "INVALID_REQUEST", "{query}");
    }
    let (status, refusal) =
        confirm_as(&system, "user-3", &order("order-3", "no-such-event", 123)).await;
    assert_eq!(
        (status, refusal["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("EVENT_NOT_FOUND")),
        "an event nobody created has no stock or price to hold a payment to"
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        1,
        "only o-2 reached the PG"
    );
    let stored = system.payments_at(&system.origin).await;
    assert!(
        !stored.contains_key("order-3"),
        "no payment was stored: {stored:?}"
    );
}

#[tokio::test]
async fn unknown_payments_hold_their_units_until_recovery_fails_them() {
    let system = System::backend(&[
        ("GATEWAY_TIMEOUT_MS", "300"),
        ("RECOVERY_INTERVAL_MS", "3600000"),
        ("RECOVERY_MIN_AGE_MS", "0"),
    ])
    .await;
    system
        .set_event(json!({"eventId": "e-1", "stock": 2, "amount": PRICE}))
        .await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 10_000}))
        .await;
    for n in 1..=2 {
        let (status, _) = confirm_as(
            &system,
            &format!("user-{n}"),
            &order(&format!("order-{n}"), "e-1", PRICE),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    let (status, refusal) = confirm_as(&system, "user-3", &order("order-3", "e-1", PRICE)).await;
    assert_eq!(
        (status, refusal["code"].as_str()),
        (StatusCode::CONFLICT, Some("SOLD_OUT"))
    );
    assert_eq!(event(&system, "e-1").await["reserved"], 2);

    system.set_faults(json!({"mode": "NORMAL"})).await;
    for _ in 0..3 {
        run_recovery(&system).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let e = event(&system, "e-1").await;
    assert_eq!(
        (e["reserved"].as_i64(), e["sold"].as_i64()),
        (Some(0), Some(0)),
        "{e}"
    );
    let (status, payment) = confirm_as(&system, "user-4", &order("order-4", "e-1", PRICE)).await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::CREATED, Some("APPROVED"))
    );
    assert_eq!(event(&system, "e-1").await["sold"], 1);
}

#[tokio::test]
async fn a_late_approval_is_cancelled_at_the_pg_and_its_unit_sold_once() {
    let system = System::backend_with_webhooks(&[
        ("GATEWAY_TIMEOUT_MS", "300"),
        ("RECOVERY_INTERVAL_MS", "3600000"),
        ("RECOVERY_MIN_AGE_MS", "0"),
    ])
    .await;
    system
        .set_event(json!({"eventId": "e-1", "stock": 1, "amount": PRICE}))
        .await;
    // A PG that approves 15 s late and, meanwhile, says it has never heard of the order:
    // long enough for three spaced NOT_FOUND answers however slow the machine.
    system
        .set_faults(json!({"mode": "DELAY", "delayMs": 15_000, "pendingVisible": false}))
        .await;
    let (status, _) = confirm_as(&system, "user-1", &order("order-late", "e-1", PRICE)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    for _ in 0..3 {
        run_recovery(&system).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    let failed = system.operator_get("/admin/payments?status=FAILED").await;
    assert_eq!(
        failed["payments"][0]["failureReason"], "NOT_FOUND_AT_PG",
        "{failed}"
    );

    let refunded = eventually(
        "the late approval refunded",
        Duration::from_secs(45),
        Duration::from_millis(100),
        || async {
            let listed = system.operator_get("/admin/payments?status=REFUNDED").await;
            match listed["payments"].as_array().and_then(|l| l.first()) {
                Some(payment) => Ok(payment.clone()),
                None => Err(system.origin_metrics().await),
            }
        },
    )
    .await;
    assert_eq!(refunded["orderId"], "order-late");
    assert!(refunded["recovery"]["flag"]
        .as_str()
        .is_some_and(|f| f.contains("cancelled")));
    let ledger = system.ledger().await;
    assert!(ledger["approvals"][0]["cancelledAt"].is_u64(), "{ledger}");

    system.set_faults(json!({"mode": "NORMAL"})).await;
    let (status, payment) = confirm_as(&system, "user-2", &order("order-next", "e-1", PRICE)).await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::CREATED, Some("APPROVED"))
    );
    let e = event(&system, "e-1").await;
    assert_eq!(
        (e["sold"].as_i64(), e["reserved"].as_i64()),
        (Some(1), Some(0))
    );
    let metrics = system.origin_metrics().await;
    assert!(
        metrics.contains(r#"origin_late_approvals_total{outcome="refunded"} 1"#),
        "{metrics}"
    );
}
