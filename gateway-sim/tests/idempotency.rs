//! `Idempotency-Key` as Toss honours it: the first answer replayed byte for
//! byte, the body no part of the key, 409 while the first is processed, and
//! keys released when nothing was kept.

use crate::common;

use std::time::Duration;

use common::{cancel_body, confirm_body, Sim};
use serde_json::json;

#[tokio::test]
async fn a_repeat_replays_the_first_answer_byte_for_byte_and_charges_nothing() {
    let sim = Sim::new();
    let first = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    first.assert_ok();
    let repeat = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    assert_eq!(repeat, first);

    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 2, "the repeat is received");
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(1));
    assert_eq!(ledger["approvals"][0]["requestCount"], 2);
}

#[tokio::test]
async fn the_body_is_ignored_so_a_key_reused_for_another_order_replays_the_first() {
    let sim = Sim::new();
    let first = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    let other_order = sim
        .confirm_keyed("key-1", confirm_body("order-2", "pk-2", 5000))
        .await;
    assert_eq!(other_order, first);
    assert_eq!(other_order.json()["orderId"], "order-1");
    sim.get("/v1/payments/pk-2")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    assert_eq!(
        sim.ledger().await["approvals"].as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn refusals_are_replayed_too() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let refused = sim
        .confirm_keyed("key-2", confirm_body("order-1", "pk-1", 1000))
        .await;
    refused.assert_error(400, "ALREADY_PROCESSED_PAYMENT");
    sim.put_faults(json!({ "mode": "NORMAL", "declineRate": 1.0 }))
        .await;
    let declined = sim
        .confirm_keyed("key-3", confirm_body("order-3", "pk-3", 1000))
        .await;
    declined.assert_error(403, "REJECT_CARD_PAYMENT");
    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    assert_eq!(
        sim.confirm_keyed("key-2", confirm_body("order-9", "pk-9", 1))
            .await,
        refused
    );
    assert_eq!(
        sim.confirm_keyed("key-3", confirm_body("order-3", "pk-3", 1000))
            .await,
        declined
    );
}

#[tokio::test]
async fn a_key_over_300_characters_is_an_invalid_idempotency_key() {
    let sim = Sim::new();
    for key in ["k".repeat(301), String::new()] {
        sim.confirm_keyed(&key, confirm_body("order-1", "pk-1", 1000))
            .await
            .assert_error(400, "INVALID_IDEMPOTENCY_KEY");
        sim.cancel_with("pk-1", &[("Idempotency-Key", &key)], cancel_body("refund"))
            .await
            .assert_error(400, "INVALID_IDEMPOTENCY_KEY");
    }
    assert_eq!(sim.ledger().await["requestCount"], 0);
    sim.confirm_keyed(&"k".repeat(300), confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
}

#[tokio::test(start_paused = true)]
async fn while_the_first_is_processed_a_repeat_is_idempotent_request_processing() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 1000 }))
        .await;
    let first = tokio::spawn({
        let sim = sim.clone();
        async move {
            sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let meanwhile = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    meanwhile.assert_error(409, "IDEMPOTENT_REQUEST_PROCESSING");

    let first = first.await.expect("the first confirm");
    first.assert_ok();
    let after = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    assert_eq!(after, first);
    assert_eq!(
        sim.ledger().await["approvals"].as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test(start_paused = true)]
async fn a_key_is_kept_even_when_the_client_stops_waiting() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 1000 }))
        .await;
    let gave_up = tokio::time::timeout(
        Duration::from_millis(100),
        sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000)),
    )
    .await;
    assert!(gave_up.is_err(), "answered before the delay");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let replay = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    assert_eq!(replay.assert_ok()["status"], "DONE");
    assert_eq!(sim.ledger().await["approvals"][0]["requestCount"], 2);
}

#[tokio::test(start_paused = true)]
async fn during_hang_after_processing_the_kept_answer_is_replayed_at_once() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "HANG_AFTER_PROCESSING", "delayMs": 60_000 }))
        .await;
    let held = tokio::spawn({
        let sim = sim.clone();
        async move {
            sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = tokio::time::Instant::now();
    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    let replay = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(replay.assert_ok()["status"], "DONE");
    assert_eq!(held.await.expect("the held confirm"), replay);
}

#[tokio::test]
async fn an_unprocessed_confirm_leaves_its_key_free() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "NORMAL", "maxPerSecond": 1 }))
        .await;
    sim.confirm(confirm_body("order-0", "pk-0", 1))
        .await
        .assert_ok();
    sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(403, "FORBIDDEN_CONSECUTIVE_REQUEST");
    sim.put_faults(json!({ "mode": "ERROR_500" })).await;
    sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING");
    sim.put_faults(json!({ "mode": "HANG_BEFORE_PROCESSING" }))
        .await;
    let hung = tokio::time::timeout(
        Duration::from_millis(200),
        sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000)),
    )
    .await;
    assert!(hung.is_err(), "a hung confirm was answered: {hung:?}");

    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    let processed = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    assert_eq!(processed.assert_ok()["status"], "DONE", "processed afresh");
}

#[tokio::test]
async fn a_500_after_processing_is_not_kept_so_a_retry_meets_the_charge() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "ERROR_500_AFTER_PROCESSING" }))
        .await;
    sim.confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(500, "FAILED_INTERNAL_SYSTEM_PROCESSING");
    assert_eq!(
        sim.get("/v1/payments/pk-1").await.assert_ok()["status"],
        "DONE"
    );

    sim.put_faults(json!({ "mode": "NORMAL" })).await;
    let retried = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    retried.assert_error(400, "ALREADY_PROCESSED_PAYMENT");
    let again = sim
        .confirm_keyed("key-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    assert_eq!(again, retried, "the refusal is kept");
    let ledger = sim.ledger().await;
    assert_eq!(
        ledger["approvals"].as_array().map(Vec::len),
        Some(1),
        "charged once: {ledger}"
    );
}

#[tokio::test]
async fn a_cancel_under_a_key_is_replayed_not_refused() {
    let sim = Sim::new();
    sim.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let key = [("Idempotency-Key", "cancel:order-1:1")];
    let first = sim.cancel_with("pk-1", &key, cancel_body("refund")).await;
    assert_eq!(first.assert_ok()["status"], "CANCELED");
    let repeat = sim
        .cancel_with("pk-1", &key, cancel_body("another reason"))
        .await;
    assert_eq!(repeat, first);
    sim.cancel("pk-1")
        .await
        .assert_error(400, "ALREADY_CANCELED_PAYMENT");
    // The confirm's key and the cancel's live apart.
    let confirm_key = sim
        .confirm_keyed("cancel:order-1:1", confirm_body("order-2", "pk-2", 10))
        .await;
    confirm_key.assert_ok();
}
