//! `POST /v1/payments/confirm`: approvals as Toss's Payment object, the
//! body's limits, declines, repeats refused, and the confirm faults that
//! change what is approved.

use crate::common;

use common::{confirm_body, Sim};
use serde_json::{json, Value};

/// `yyyy-MM-dd'T'HH:mm:ss+09:00`.
fn is_seoul_time(value: &Value) -> bool {
    value.as_str().is_some_and(|text| {
        text.len() == 25
            && text.ends_with("+09:00")
            && text.as_bytes()[..19]
                .iter()
                .enumerate()
                .all(|(i, &b)| match i {
                    4 | 7 => b == b'-',
                    10 => b == b'T',
                    13 | 16 => b == b':',
                    _ => b.is_ascii_digit(),
                })
    })
}

#[tokio::test]
async fn an_approval_is_a_done_payment_object() {
    let sim = Sim::new();
    let payment = sim
        .confirm(confirm_body("order-1", "pk-1", 15_000))
        .await
        .assert_ok();
    assert_eq!(payment["version"], "2022-11-16");
    assert_eq!(payment["paymentKey"], "pk-1");
    assert_eq!(payment["orderId"], "order-1");
    assert_eq!(payment["type"], "NORMAL");
    assert_eq!(payment["method"], "카드");
    assert_eq!(payment["status"], "DONE");
    assert!(is_seoul_time(&payment["requestedAt"]), "{payment}");
    assert!(is_seoul_time(&payment["approvedAt"]), "{payment}");
    for (field, value) in [
        ("totalAmount", json!(15_000)),
        ("balanceAmount", json!(15_000)),
        ("suppliedAmount", json!(13_636)),
        ("vat", json!(1_364)),
        ("taxFreeAmount", json!(0)),
        ("currency", json!("KRW")),
        ("country", json!("KR")),
        ("cancels", Value::Null),
        ("failure", Value::Null),
    ] {
        assert_eq!(payment[field], value, "{field}: {payment}");
    }
    for field in ["mId", "orderName", "lastTransactionKey"] {
        assert!(payment[field].is_string(), "{field}: {payment}");
    }
    assert!(
        payment["card"]["number"]
            .as_str()
            .is_some_and(|n| n.contains('*')),
        "{payment}"
    );
    assert!(payment["receipt"]["url"].is_string(), "{payment}");
    assert!(payment["isPartialCancelable"].is_boolean(), "{payment}");

    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 1);
    let approval = &ledger["approvals"][0];
    assert_eq!(
        (&approval["orderId"], &approval["paymentKey"]),
        (&json!("order-1"), &json!("pk-1"))
    );
    assert_eq!(approval["amount"], 15_000);
    assert_eq!(approval["requestCount"], 1);
    assert!(approval["approvedAt"].is_u64(), "{ledger}");
    assert_eq!(approval["cancelledAt"], Value::Null);
}

#[tokio::test]
async fn a_payment_confirmed_again_is_already_processed_and_charged_once() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    for repeat in [
        confirm_body("order-1", "pk-1", 1000),
        confirm_body("order-2", "pk-1", 5),
    ] {
        sim.confirm(repeat)
            .await
            .assert_error(400, "ALREADY_PROCESSED_PAYMENT");
    }
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 3);
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(1));
    assert_eq!(ledger["approvals"][0]["requestCount"], 3);
}

#[tokio::test]
async fn an_order_paid_under_another_payment_key_is_a_duplicated_order_id() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.confirm(confirm_body("order-1", "pk-2", 1000))
        .await
        .assert_error(400, "DUPLICATED_ORDER_ID");
    sim.get("/v1/payments/pk-2")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
}

#[tokio::test]
async fn a_body_that_is_not_the_confirm_json_is_an_invalid_request() {
    let sim = Sim::new();
    for raw in [
        "{\"orderId\": ".to_owned(),
        "not json".to_owned(),
        json!({ "orderId": "order-1", "amount": 1000 }).to_string(),
        json!({ "paymentKey": "pk-1", "orderId": "order-1", "amount": "1000" }).to_string(),
        json!({ "paymentKey": "pk-1", "orderId": "order-1", "amount": 10.5 }).to_string(),
        confirm_body("order-1", "pk-1", 0).to_string(),
        confirm_body("order-1", "pk-1", -1).to_string(),
        confirm_body("order-1", "", 1).to_string(),
        confirm_body("order-1", &"k".repeat(201), 1).to_string(),
        confirm_body("order-1", &"x".repeat(16 * 1024), 1).to_string(),
    ] {
        let reply = sim.post("/v1/payments/confirm", &[], raw.clone()).await;
        reply.assert_error(400, "INVALID_REQUEST");
    }
    let ledger = sim.ledger().await;
    assert_eq!(
        ledger["requestCount"], 0,
        "refused before being received: {ledger}"
    );
    // 200 characters is still a paymentKey.
    sim.confirm(confirm_body("order-1", &"k".repeat(200), 1))
        .await
        .assert_ok();
}

#[tokio::test]
async fn an_order_id_outside_toss_s_limits_is_an_invalid_order_id() {
    let sim = Sim::new();
    for order_id in [
        "o-1",
        "12345",
        &"o".repeat(65),
        "order 1",
        "order/1",
        "주문-000001",
        "",
    ] {
        sim.confirm(confirm_body(order_id, "pk-1", 1000))
            .await
            .assert_error(400, "INVALID_ORDER_ID");
    }
    for order_id in ["123456", &"o".repeat(64), "Order_1-x"] {
        let payment_key = format!("pk-{}", order_id.len());
        sim.confirm(confirm_body(order_id, &payment_key, 1000))
            .await
            .assert_ok();
    }
}

#[tokio::test]
async fn a_decline_is_reject_card_payment_and_an_aborted_payment() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "declineRate": 1.0 }))
        .await;
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(403, "REJECT_CARD_PAYMENT");
    let payment = sim.get("/v1/payments/pk-1").await.assert_ok();
    assert_eq!(payment["status"], "ABORTED");
    assert_eq!(payment["failure"]["code"], "REJECT_CARD_PAYMENT");
    assert_eq!(payment["approvedAt"], Value::Null);

    // Declined once, declined for good: no roll for a repeat.
    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(400, "ALREADY_PROCESSED_PAYMENT");
    let ledger = sim.ledger().await;
    assert_eq!(ledger["approvals"], json!([]));
    assert_eq!(ledger["declines"][0]["paymentKey"], "pk-1");
    assert_eq!(ledger["declines"][0]["requestCount"], 2);
    // The buyer may pay the order with another card.
    sim.confirm(confirm_body("order-1", "pk-2", 1000))
        .await
        .assert_ok();
}

#[tokio::test]
async fn decline_rate_zero_approves_every_order() {
    let sim = Sim::new();
    for n in 0..20 {
        let order_id = format!("order-{n}");
        sim.confirm(confirm_body(&order_id, &format!("pk-{n}"), 10))
            .await
            .assert_ok();
    }
    let ledger = sim.ledger().await;
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(20));
    assert_eq!(ledger["declines"], json!([]));
}

#[tokio::test]
async fn approved_amount_delta_approves_and_charges_another_amount() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "approvedAmountDelta": 100 }))
        .await;
    let payment = sim
        .confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    assert_eq!(
        (&payment["totalAmount"], &payment["balanceAmount"]),
        (&json!(1100), &json!(1100))
    );
    sim.put_faults(json!({ "mode": "NORMAL", "approvedAmountDelta": -1 }))
        .await;
    let payment = sim
        .confirm(confirm_body("order-2", "pk-2", 1000))
        .await
        .assert_ok();
    assert_eq!(payment["totalAmount"], 999);
    let amounts: Vec<_> = sim.ledger().await["approvals"]
        .as_array()
        .expect("approvals")
        .iter()
        .map(|a| a["amount"].clone())
        .collect();
    assert_eq!(amounts, [json!(1100), json!(999)]);
}

#[tokio::test]
async fn over_max_per_second_is_forbidden_consecutive_request() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "maxPerSecond": 2 }))
        .await;
    for n in 1..=2 {
        sim.confirm(confirm_body(&format!("order-{n}"), &format!("pk-{n}"), 10))
            .await
            .assert_ok();
    }
    sim.confirm(confirm_body("order-3", "pk-3", 10))
        .await
        .assert_error(403, "FORBIDDEN_CONSECUTIVE_REQUEST");
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 3, "the refused confirm is received");
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(2));
    sim.get("/v1/payments/pk-3")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
}

#[tokio::test]
async fn not_idempotent_charges_every_repeat_whatever_its_key() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "idempotent": false }))
        .await;
    let body = confirm_body("order-1", "pk-1", 1000);
    sim.confirm_keyed("confirm:order-1", body.clone())
        .await
        .assert_ok();
    sim.confirm_keyed("confirm:order-1", body.clone())
        .await
        .assert_ok();
    sim.confirm(body).await.assert_ok();
    let ledger = sim.ledger().await;
    let approvals = ledger["approvals"].as_array().expect("approvals");
    assert_eq!(approvals.len(), 3, "triple charge: {ledger}");
    assert!(approvals
        .iter()
        .all(|a| a["orderId"] == "order-1" && a["requestCount"] == 1));
}
