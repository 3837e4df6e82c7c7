//! `PUT /admin/faults` and what each mode does to a confirm, in-process.
//!
//! Faults that act on sockets (`REFUSE_CONNECTIONS`, and the dropped
//! connection that ends `HANG_BEFORE_PROCESSING`) are exercised through a real
//! server in `tests/server.rs`.

use crate::common;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use common::{confirm_body, Sim};
use serde_json::{json, Value};

fn default_faults() -> Value {
    json!({
        "mode": "NORMAL",
        "delayMs": 0,
        "jitterMs": 0,
        "declineRate": 0.0,
        "maxPerSecond": null,
        "capacity": null,
        "lineLimit": null,
        "idempotent": true,
        "durationMs": null,
        "webhooks": true,
        "pendingVisible": true,
        "statusDelayMs": 0,
        "testCode": null,
        "approvedAmountDelta": 0,
    })
}

#[tokio::test]
async fn healthz_reports_ok() {
    let reply = Sim::new().unauthenticated_get("/healthz").await;
    assert_eq!(reply.assert_ok(), json!({ "status": "ok" }));
}

#[tokio::test]
async fn unknown_routes_and_methods_are_json_errors() {
    let sim = Sim::new();
    sim.unauthenticated_get("/v2/nothing")
        .await
        .assert_error(404, "NOT_FOUND");
    let delete = Request::builder()
        .method(Method::DELETE)
        .uri("/healthz")
        .body(Body::empty())
        .expect("valid request");
    sim.send(delete)
        .await
        .assert_error(405, "METHOD_NOT_ALLOWED");
}

#[tokio::test]
async fn faults_start_normal_and_the_ledger_empty() {
    let sim = Sim::new();
    assert_eq!(sim.faults().await, default_faults());
    assert_eq!(
        sim.ledger().await,
        json!({
            "requestCount": 0,
            "statusQueryCount": 0,
            "requests": [],
            "approvals": [],
            "declines": [],
            "webhooks": [],
            "calls": [],
        })
    );
}

#[tokio::test]
async fn put_faults_answers_the_full_setting_and_get_reports_it() {
    let sim = Sim::new();
    let all = json!({
        "mode": "DELAY",
        "delayMs": 20,
        "jitterMs": 5,
        "declineRate": 0.25,
        "maxPerSecond": 7,
        "capacity": 10,
        "lineLimit": 20,
        "idempotent": false,
        "webhooks": false,
        "pendingVisible": false,
        "statusDelayMs": 1500,
        "testCode": "INVALID_CARD_EXPIRATION",
        "approvedAmountDelta": -100,
    });
    let mut expected = all.clone();
    expected["durationMs"] = Value::Null;
    assert_eq!(sim.put_faults(all).await, expected);
    assert_eq!(sim.faults().await, expected);

    // A PUT replaces everything: what it leaves out is back to default.
    assert_eq!(
        sim.put_faults(json!({ "mode": "NORMAL" })).await,
        default_faults()
    );
    assert_eq!(sim.faults().await, default_faults());
    let answer = sim
        .put_faults(json!({ "mode": "ERROR_500_AFTER_PROCESSING", "maxPerSecond": 3 }))
        .await;
    let capped = sim
        .put_faults(json!({ "mode": "NORMAL", "capacity": 4 }))
        .await;
    assert_eq!(capped["lineLimit"], 0, "no line unless one is given");
    assert_eq!(sim.put_faults(capped.clone()).await, capped);
    assert_eq!(
        sim.put_faults(answer.clone()).await,
        answer,
        "takes back what it answered"
    );
}

#[tokio::test]
async fn invalid_faults_are_a_bad_request_naming_the_field_and_change_nothing() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 5 }))
        .await;
    let in_force = sim.faults().await;
    for (body, named) in [
        (json!({ "mode": "SLOW" }), "SLOW"),
        (json!({ "mode": "normal" }), "normal"),
        (json!({ "delayMs": 10 }), "mode"),
        (
            json!({ "mode": "NORMAL", "declineRate": 1.5 }),
            "declineRate",
        ),
        (
            json!({ "mode": "NORMAL", "declineRate": -0.1 }),
            "declineRate",
        ),
        (
            json!({ "mode": "NORMAL", "declineRate": "0.5" }),
            "declineRate",
        ),
        (json!({ "mode": "DELAY", "delayMs": -1 }), "delayMs"),
        (json!({ "mode": "DELAY", "delayMs": 600_001 }), "delayMs"),
        (json!({ "mode": "DELAY", "delayMs": 1.5 }), "delayMs"),
        (json!({ "mode": "DELAY", "jitterMs": -5 }), "jitterMs"),
        (
            json!({ "mode": "NORMAL", "maxPerSecond": 0 }),
            "maxPerSecond",
        ),
        (
            json!({ "mode": "NORMAL", "maxPerSecond": -2 }),
            "maxPerSecond",
        ),
        (json!({ "mode": "NORMAL", "capacity": 0 }), "capacity"),
        (json!({ "mode": "NORMAL", "capacity": -1 }), "capacity"),
        (json!({ "mode": "NORMAL", "capacity": 10_001 }), "capacity"),
        (json!({ "mode": "NORMAL", "capacity": "10" }), "capacity"),
        (
            json!({ "mode": "NORMAL", "capacity": 2, "lineLimit": -1 }),
            "lineLimit",
        ),
        (
            json!({ "mode": "NORMAL", "capacity": 2, "lineLimit": 10_001 }),
            "lineLimit",
        ),
        (json!({ "mode": "NORMAL", "lineLimit": 5 }), "lineLimit"),
        (
            json!({ "mode": "NORMAL", "idempotent": "no" }),
            "idempotent",
        ),
        (json!({ "mode": "NORMAL", "webhooks": 1 }), "webhooks"),
        (json!({ "mode": "NORMAL", "callbacks": false }), "callbacks"),
        (
            json!({ "mode": "NORMAL", "statusDelayMs": -1 }),
            "statusDelayMs",
        ),
        (json!({ "mode": "NORMAL", "testCode": 5 }), "testCode"),
        (
            json!({ "mode": "NORMAL", "approvedAmountDelta": 1.5 }),
            "approvedAmountDelta",
        ),
        (json!({ "mode": "REFUSE_CONNECTIONS" }), "durationMs"),
        (
            json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 0 }),
            "durationMs",
        ),
        (
            json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 600_001 }),
            "durationMs",
        ),
        (json!({ "mode": "DELAY", "durationMs": 100 }), "durationMs"),
    ] {
        let reply = sim.put_faults_raw(body.to_string()).await;
        reply.assert_error(400, "INVALID_FAULTS");
        let message = reply.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains(named), "{body}: {message}");
    }
    for raw in ["not json", "{\"mode\": ", "", "[]"] {
        sim.put_faults_raw(raw)
            .await
            .assert_error(400, "INVALID_FAULTS");
    }
    assert_eq!(sim.faults().await, in_force);
}

#[tokio::test]
async fn refuse_connections_needs_the_simulator_own_server() {
    let sim = Sim::new();
    let reply = sim
        .put_faults_raw(json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 500 }).to_string())
        .await;
    reply.assert_error(409, "REFUSAL_UNAVAILABLE");
    assert_eq!(sim.faults().await, default_faults());
}

#[tokio::test(start_paused = true)]
async fn delay_answers_after_at_least_delay_ms() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 200, "jitterMs": 50 }))
        .await;
    let started = tokio::time::Instant::now();
    let payment = sim
        .confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let waited = started.elapsed();
    assert!((200..=250).contains(&waited.as_millis()), "{waited:?}");
    assert_eq!(payment["status"], "DONE");
}

#[tokio::test(start_paused = true)]
async fn delay_still_processes_when_the_client_gives_up_and_declines_too() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 300, "declineRate": 1.0 }))
        .await;
    let answer = tokio::time::timeout(
        Duration::from_millis(100),
        sim.confirm(confirm_body("order-1", "pk-1", 1000)),
    )
    .await;
    assert!(answer.is_err(), "answered before the delay: {answer:?}");
    assert_eq!(sim.ledger().await["requestCount"], 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "ABORTED"
    );
}

#[tokio::test]
async fn error_500_is_received_but_not_processed() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "ERROR_500" })).await;
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING");
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["requests"][0]["orderId"], "order-1");
    assert_eq!(ledger["approvals"], json!([]));
    sim.get("/v1/payments/pk-1")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");

    // Once the fault is lifted the same payment is processed normally.
    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    assert_eq!(
        sim.confirm(confirm_body("order-1", "pk-1", 1000))
            .await
            .assert_ok()["status"],
        "DONE"
    );
}

#[tokio::test]
async fn error_500_after_processing_charges_then_answers_500() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "ERROR_500_AFTER_PROCESSING" }))
        .await;
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING");
    let ledger = sim.ledger().await;
    assert_eq!(
        ledger["approvals"][0]["orderId"], "order-1",
        "charged: {ledger}"
    );
    assert_eq!(
        sim.get("/v1/payments/orders/order-1").await.assert_ok()["status"],
        "DONE"
    );
}

#[tokio::test]
async fn hang_before_processing_receives_but_never_processes() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "HANG_BEFORE_PROCESSING" }))
        .await;
    let answer = tokio::time::timeout(
        Duration::from_millis(300),
        sim.confirm(confirm_body("order-1", "pk-1", 1000)),
    )
    .await;
    assert!(answer.is_err(), "a hung confirm was answered: {answer:?}");
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["approvals"], json!([]));
    assert_eq!(ledger["declines"], json!([]));
    sim.get("/v1/payments/pk-1")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
}

#[tokio::test(start_paused = true)]
async fn hang_after_processing_approves_then_holds_the_answer_delay_ms() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "HANG_AFTER_PROCESSING", "delayMs": 2000 }))
        .await;
    let started = tokio::time::Instant::now();
    let held = tokio::spawn({
        let sim = sim.clone();
        async move { sim.confirm(confirm_body("order-1", "pk-1", 1000)).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!held.is_finished(), "the answer came at once");
    assert_eq!(sim.ledger().await["approvals"][0]["orderId"], "order-1");
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "DONE"
    );

    let payment = held.await.expect("the held confirm").assert_ok();
    assert!(started.elapsed() >= Duration::from_millis(2000));
    assert_eq!(payment["status"], "DONE");
}
