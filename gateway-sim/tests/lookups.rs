//! `GET /v1/payments/{paymentKey}` and `GET /v1/payments/orders/{orderId}`:
//! the Payment object in each status, `NOT_FOUND_PAYMENT` otherwise.

use crate::common;

use std::time::Duration;

use common::{confirm_body, Sim};
use serde_json::{json, Value};

#[tokio::test]
async fn both_look_ups_answer_what_the_confirm_answered() {
    let sim = Sim::new();
    let confirmed = sim
        .confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let by_key = sim.get("/v1/payments/pk-1").await.assert_ok();
    let by_order = sim.get("/v1/payments/orders/order-1").await.assert_ok();
    assert_eq!(by_key, confirmed);
    assert_eq!(by_order, confirmed);
    assert_eq!(sim.ledger().await["statusQueryCount"], 2);
}

#[tokio::test]
async fn an_unknown_payment_is_toss_s_not_found() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    for path in [
        "/v1/payments/pk-2",
        "/v1/payments/orders/order-2",
        "/v1/payments/order-1",
    ] {
        let reply = sim.get(path).await;
        assert_eq!(reply.status, 404);
        assert_eq!(
            reply.json(),
            json!({ "code": "NOT_FOUND_PAYMENT", "message": "존재하지 않는 결제 정보 입니다." })
        );
    }
}

#[tokio::test]
async fn a_cancelled_payment_is_canceled_with_its_cancels() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.cancel("pk-1").await.assert_ok();
    let payment = sim.get("/v1/payments/orders/order-1").await.assert_ok();
    assert_eq!(payment["status"], "CANCELED");
    assert_eq!(payment["balanceAmount"], 0);
    assert_eq!(payment["totalAmount"], 1000);
    assert_eq!(payment["cancels"][0]["cancelAmount"], 1000);
    assert!(payment["approvedAt"].is_string(), "{payment}");
}

#[tokio::test(start_paused = true)]
async fn a_delayed_confirm_is_in_progress_until_decided() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 1000 }))
        .await;
    let confirm = tokio::spawn({
        let sim = sim.clone();
        async move { sim.confirm(confirm_body("order-1", "pk-1", 1000)).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    for path in ["/v1/payments/pk-1", "/v1/payments/orders/order-1"] {
        let payment = sim.get(path).await.assert_ok();
        assert_eq!(payment["status"], "IN_PROGRESS", "{path}");
        assert_eq!(payment["approvedAt"], Value::Null);
        assert_eq!(payment["totalAmount"], 1000);
    }
    assert_eq!(
        sim.ledger().await["approvals"],
        json!([]),
        "not yet processed"
    );

    assert_eq!(
        confirm.await.expect("confirm").assert_ok()["status"],
        "DONE"
    );
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "DONE"
    );
}

#[tokio::test(start_paused = true)]
async fn with_pending_hidden_an_undecided_confirm_is_not_found_until_decided() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 1000, "pendingVisible": false }))
        .await;
    let confirm = tokio::spawn({
        let sim = sim.clone();
        async move { sim.confirm(confirm_body("order-1", "pk-1", 1000)).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    sim.get("/v1/payments/pk-1")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    sim.get("/v1/payments/orders/order-1")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    confirm.await.expect("confirm").assert_ok();
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "DONE"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_look_up_is_counted_as_it_arrives_and_answers_late() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.put_faults(json!({ "mode": "NORMAL", "statusDelayMs": 2_000 }))
        .await;
    let started = tokio::time::Instant::now();
    let query = sim.get("/v1/payments/pk-1");
    let counted = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        sim.ledger().await["statusQueryCount"].clone()
    };
    let (reply, counted) = tokio::join!(query, counted);
    assert_eq!(counted, 1, "counted while it is still held");
    assert_eq!(reply.assert_ok()["status"], "DONE");
    assert!(started.elapsed() >= Duration::from_millis(2_000));
}

#[tokio::test]
async fn unprocessed_confirms_are_never_in_progress() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "HANG_BEFORE_PROCESSING" }))
        .await;
    let hung = tokio::time::timeout(
        Duration::from_millis(100),
        sim.confirm(confirm_body("order-hang", "pk-hang", 10)),
    )
    .await;
    assert!(hung.is_err(), "{hung:?}");
    sim.put_faults(json!({ "mode": "ERROR_500" })).await;
    sim.confirm(confirm_body("order-500", "pk-500", 10)).await;
    for key in ["pk-hang", "pk-500"] {
        sim.get(&format!("/v1/payments/{key}"))
            .await
            .assert_error(404, "NOT_FOUND_PAYMENT");
    }
}

#[tokio::test]
async fn look_ups_ignore_confirm_faults_and_idempotency_keys() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    sim.put_faults(json!({ "mode": "ERROR_500", "testCode": "COMMON_ERROR" }))
        .await;
    let keyed = sim
        .get_with(
            "/v1/payments/pk-1",
            &[("Idempotency-Key", &"k".repeat(400))],
        )
        .await;
    assert_eq!(keyed.assert_ok()["status"], "DONE");
}
