//! The approval breaker's look-up probes with the origin and the simulator as real
//! processes: once an open breaker's wait is over, the origin looks up a payment no one
//! has, and only a PG that answers it turns the breaker half-open; a PG whose look-ups
//! stall too keeps it open, and no customer's payment is sent to find out.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::System;

const SMALL_BREAKER: [(&str, &str); 5] = [
    ("BREAKER_WINDOW", "2"),
    ("BREAKER_MIN_CALLS", "2"),
    ("BREAKER_OPEN_MS", "500"),
    ("BREAKER_SLOW_CALL_MS", "500"),
    ("GATEWAY_TIMEOUT_MS", "1000"),
];

/// Opens the breaker: two confirms answered 500, each UNKNOWN.
async fn open_the_breaker(system: &System) {
    for order_id in ["order-1", "order-2"] {
        let (status, payment) = system.confirm_order(order_id).await;
        assert_eq!(
            (status, &payment["status"]),
            (StatusCode::ACCEPTED, &json!("UNKNOWN"))
        );
    }
}

fn state(guard: &Value) -> &str {
    guard["breaker"]["state"].as_str().unwrap_or("?")
}

/// The look-ups the simulator received for ids no payment has.
fn probes(ledger: &Value) -> usize {
    ledger["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|call| {
            call["method"] == "GET"
                && call["path"]
                    .as_str()
                    .is_some_and(|path| path.starts_with("/v1/payments/orders/probe-"))
        })
        .count()
}

#[tokio::test]
async fn an_open_breaker_asks_with_a_look_up_before_any_payment_goes_through() {
    let system = System::backend(&SMALL_BREAKER).await;
    system.set_faults(json!({"mode": "ERROR_500"})).await;
    open_the_breaker(&system).await;
    // Confirms still fail, but the PG answers look-ups: the probe passes.
    let guard = system.guard_until(|g| state(g) == "HALF_OPEN").await;
    let ledger = system.ledger().await;
    assert!(probes(&ledger) >= 1, "{ledger}");
    assert_eq!(ledger["requestCount"], 2, "no payment was a probe: {guard}");
    system.set_faults(json!({"mode": "NORMAL"})).await;
    let (status, payment) = system.confirm_order("order-3").await;
    assert_eq!(
        (status, &payment["status"]),
        (StatusCode::CREATED, &json!("APPROVED"))
    );
}

#[tokio::test]
async fn while_the_whole_pg_stalls_the_breaker_stays_open_and_no_payment_is_sent() {
    let system = System::backend(&SMALL_BREAKER).await;
    system
        .set_faults(json!({"mode": "ERROR_500", "statusDelayMs": 30_000}))
        .await;
    open_the_breaker(&system).await;
    // Open waits of 500 ms, each probe unanswered for its 1 s: several cycles.
    eventually(
        "two probes went unanswered",
        Duration::from_secs(20),
        Duration::from_millis(100),
        || async {
            let ledger = system.ledger().await;
            if probes(&ledger) >= 2 {
                Ok(())
            } else {
                Err(ledger.to_string())
            }
        },
    )
    .await;
    let (status, refused) = system.confirm_order("order-3").await;
    assert_eq!(
        (status, &refused["failureReason"]),
        (StatusCode::CREATED, &json!("CIRCUIT_OPEN"))
    );
    let guard = system.operator_get("/admin/guard").await;
    assert_eq!(state(&guard), "OPEN", "{guard}");
    let transitions = guard["breaker"]["transitions"].as_array().expect("a list");
    assert!(
        transitions.iter().all(|t| t["to"] != "HALF_OPEN"),
        "{guard}"
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        2,
        "no payment was sent"
    );
}
