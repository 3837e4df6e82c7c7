//! What the Toss tests (`toss.rs`, `toss_webhooks.rs`) share: recovery run by hand, the
//! payments as operators list them, and a confirm answered with one of Toss's test codes.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::System;

/// Recovery runs only when a test asks; a PG call times out after 300 ms, so NOT_FOUND
/// answers count 600 ms apart; any payment may be asked about at once.
pub const MANUAL_RECOVERY: [(&str, &str); 3] = [
    ("GATEWAY_TIMEOUT_MS", "300"),
    ("RECOVERY_INTERVAL_MS", "3600000"),
    ("RECOVERY_MIN_AGE_MS", "0"),
];

pub async fn payments(system: &System) -> BTreeMap<String, Value> {
    system.payments_at(&system.origin).await
}

pub fn status_and_reason(payment: &Value) -> (Option<&str>, Option<&str>) {
    (
        payment["status"].as_str(),
        payment["failureReason"].as_str(),
    )
}

/// A confirm answered with `code`, as Toss's sandbox answers one sent with
/// `TossPayments-Test-Code: code`.
pub async fn confirm_with_test_code(system: &System, order_id: &str, code: &str) -> Value {
    system
        .set_faults(json!({"mode": "NORMAL", "testCode": code}))
        .await;
    let (_, payment) = system.confirm_order(order_id).await;
    system.set_faults(json!({"mode": "NORMAL"})).await;
    payment
}
