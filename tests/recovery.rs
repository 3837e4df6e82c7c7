//! Recovery and the PG's webhooks, with the origin and the simulator as real processes:
//! every payment ends as the PG says. (Crashes: `crash.rs`; every Toss outcome:
//! `toss.rs`.)

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::System;

/// Recovery runs only when a test asks; a PG call times out after 300 ms, so NOT_FOUND
/// answers count 600 ms apart.
const MANUAL_RECOVERY: [(&str, &str); 3] = [
    ("GATEWAY_TIMEOUT_MS", "300"),
    ("RECOVERY_INTERVAL_MS", "3600000"),
    ("RECOVERY_MIN_AGE_MS", "1000"),
];

async fn confirm(system: &System, order_id: &str) -> (StatusCode, Value) {
    system.confirm_order(order_id).await
}

async fn run_recovery(system: &System) -> Value {
    system.run_recovery_at(&system.origin).await
}

/// Every payment the origin holds, by order id, as operators list them.
async fn payments(system: &System) -> BTreeMap<String, Value> {
    system.payments_at(&system.origin).await
}

#[tokio::test]
async fn an_unknown_payment_converges_to_the_approval_the_pg_recorded() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let (status, payment) = confirm(&system, "order-1").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN"))
    );

    let report = run_recovery(&system).await;
    assert_eq!(
        (report["examined"].as_u64(), report["approved"].as_u64()),
        (Some(1), Some(1))
    );
    let recovered = &payments(&system).await["order-1"];
    let ledger = system.ledger().await;
    assert_eq!(recovered["status"], "APPROVED");
    // Toss gives `approvedAt` to the second.
    let pg_approved_at = ledger["approvals"][0]["approvedAt"]
        .as_i64()
        .expect("a time");
    assert_eq!(
        recovered["approvedAt"].as_i64(),
        Some(pg_approved_at - pg_approved_at % 1000)
    );
    assert_eq!(
        run_recovery(&system).await["examined"],
        0,
        "nothing left to do"
    );
}

#[tokio::test]
async fn a_payment_the_pg_never_processed_fails_only_at_the_third_spaced_not_found() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 10_000}))
        .await;
    assert_eq!(confirm(&system, "order-1").await.0, StatusCode::ACCEPTED);

    let mut counted = Vec::new();
    for _ in 0..2 {
        let report = run_recovery(&system).await;
        assert_eq!(report["unresolved"], 1, "{report}");
        assert_eq!(
            run_recovery(&system).await["examined"],
            0,
            "not due again yet"
        );
        let unknown = system.operator_get("/admin/payments?status=UNKNOWN").await;
        counted.push(unknown["payments"][0]["recovery"]["notFoundCount"].clone());
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    assert_eq!(counted, [json!(1), json!(2)]);
    let report = run_recovery(&system).await;
    assert_eq!(report["failed"], 1, "{report}");
    let failed = &payments(&system).await["order-1"];
    assert_eq!(
        (failed["status"].as_str(), failed["failureReason"].as_str()),
        (Some("FAILED"), Some("NOT_FOUND_AT_PG"))
    );
    assert_eq!(system.ledger().await["approvals"], json!([]));
}

#[tokio::test]
async fn a_webhook_settles_the_payment_while_the_pg_still_holds_the_answer() {
    let system = System::backend_with_webhooks(&[("GATEWAY_TIMEOUT_MS", "1500")]).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let (status, payment) = confirm(&system, "order-1").await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::CREATED, Some("APPROVED"))
    );
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000, "declineRate": 1.0}))
        .await;
    let (status, payment) = confirm(&system, "order-2").await;
    assert_eq!(
        (
            status,
            payment["status"].as_str(),
            payment["failureReason"].as_str()
        ),
        (StatusCode::CREATED, Some("FAILED"), Some("DECLINED"))
    );
    let metrics = system.origin_metrics().await;
    let looked_up = r#"origin_gateway_webhooks_total{outcome="looked_up"} 2"#;
    assert!(metrics.contains(looked_up), "{metrics}");
}

#[tokio::test]
async fn origin_recover_once_runs_a_cycle_and_reports_it() {
    let system = System::backend(&MANUAL_RECOVERY).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    confirm(&system, "order-1").await;
    let printed = system.origin_cli(&["recover", "--once"]);
    let report: Value = serde_json::from_str(&printed).expect("a JSON report");
    assert_eq!(report["approved"], 1, "{printed}");
    assert_eq!(payments(&system).await["order-1"]["status"], "APPROVED");
}
