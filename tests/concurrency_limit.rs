//! The PG guard's concurrency limit with the origin and the simulator as real processes:
//! a call past the limit waits for a slot, then is refused unsent (`CONCURRENCY_LIMITED`)
//! and tells the edge to hold its gated rooms; `/admin/guard` and the metrics show it.

use crate::support;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::calls::paused_for;
use support::System;

#[tokio::test]
async fn a_call_past_the_limit_is_refused_unsent_after_its_wait_and_pauses_the_rooms() {
    let system = System::backend(&[
        ("GATEWAY_TIMEOUT_MS", "4000"),
        ("GATEWAY_CONCURRENCY", "fixed:1"),
        ("GATEWAY_CONCURRENCY_MAX_WAIT_MS", "300"),
    ])
    .await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 30_000}))
        .await;
    let held = system.confirm_response("order-1");
    let checks = async {
        let guard = system
            .guard_until(|g| g["concurrency"]["inFlight"] == 1)
            .await;
        let refused = system.confirm_response("order-2").await;
        let paused = paused_for(&refused);
        let payment: Value = refused.json().await.expect("JSON");
        let metrics = system.origin_metrics().await;
        (guard, paused, payment, metrics)
    };
    let (first, (guard, paused, refused, metrics)) = tokio::join!(held, checks);

    let limit = &guard["concurrency"];
    assert_eq!(
        (&limit["mode"], &limit["limit"], &limit["maxWaitMs"]),
        (&json!("fixed"), &json!(1), &json!(300)),
        "{guard}"
    );
    assert_eq!(
        (
            refused["status"].as_str(),
            refused["failureReason"].as_str()
        ),
        (Some("FAILED"), Some("CONCURRENCY_LIMITED")),
        "{refused}"
    );
    assert_eq!(paused, Some(300), "the edge holds its gated rooms one wait");
    for line in [
        r#"origin_gateway_concurrency_limit{guard="approve"} 1"#,
        r#"origin_guard_refusals_total{guard="approve",reason="CONCURRENCY_LIMITED"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
    assert_eq!(
        first.status(),
        StatusCode::ACCEPTED,
        "the held call timed out"
    );
    let ledger = system.ledger().await;
    let sent: Vec<&str> = ledger["requests"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|entry| entry["orderId"].as_str())
        .collect();
    assert_eq!(sent, ["order-1"], "the refused call never reached the PG");
    let after = system.operator_get("/admin/guard").await;
    assert_eq!(after["refusals"]["CONCURRENCY_LIMITED"], 1);
    assert_eq!(after["concurrency"]["waiting"], 0);
}

#[tokio::test]
async fn the_limit_is_adaptive_by_default_and_starts_at_its_floor() {
    let system = System::backend(&[]).await;
    let guard = system.operator_get("/admin/guard").await;
    let limit = &guard["concurrency"];
    assert_eq!(
        (
            &limit["mode"],
            &limit["limit"],
            &limit["floor"],
            &limit["ceiling"]
        ),
        (&json!("adaptive"), &json!(2), &json!(2), &json!(50)),
        "{guard}"
    );
    let (status, payment) = system.confirm_order("order-1").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::CREATED, Some("APPROVED"))
    );
    let off = System::backend(&[("GATEWAY_CONCURRENCY", "off")]).await;
    let guard = off.operator_get("/admin/guard").await;
    assert_eq!(
        guard["concurrency"],
        json!({"mode": "off", "inFlight": 0, "waiting": 0, "maxWaitMs": 2000})
    );
}
