//! Idempotency-Key on confirm, with the origin and the simulator as real processes.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::System;

fn order(order_id: &str, amount: i64) -> String {
    json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": amount })
        .to_string()
}

struct Answer {
    status: StatusCode,
    replayed: Option<String>,
    retry_after: Option<String>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

async fn confirm(system: &System, user: &str, key: Option<&str>, body: &str) -> Answer {
    let response = system.confirm_at_origin(user, key, body).await;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    Answer {
        status: response.status(),
        replayed: header("idempotent-replayed"),
        retry_after: header("retry-after"),
        body: response.text().await.expect("a body"),
    }
}

#[tokio::test]
async fn a_key_runs_once_replays_its_answer_and_refuses_another_body() {
    let system = System::backend(&[]).await;
    system
        .set_faults(json!({"mode": "DELAY", "delayMs": 1_500}))
        .await;
    let body = order("order-1", 5000);
    let first = confirm(&system, "user-1", Some("key-1"), &body);
    let duplicate = async {
        eventually(
            "the first confirm reached the PG",
            Duration::from_secs(10),
            Duration::from_millis(20),
            || async {
                let ledger = system.ledger().await;
                if ledger["requestCount"] == 0 {
                    Err(ledger.to_string())
                } else {
                    Ok(())
                }
            },
        )
        .await;
        confirm(&system, "user-1", Some("key-1"), &body).await
    };
    let (first, duplicate) = tokio::join!(first, duplicate);

    assert_eq!(duplicate.status, StatusCode::CONFLICT);
    assert_eq!(duplicate.json()["code"], "IDEMPOTENCY_IN_FLIGHT");
    assert_eq!(duplicate.retry_after.as_deref(), Some("1"));
    assert_eq!(first.status, StatusCode::CREATED);
    assert_eq!(first.json()["status"], "APPROVED");
    assert_eq!(first.replayed, None);

    let replay = confirm(&system, "user-1", Some("key-1"), &body).await;
    assert_eq!(replay.status, StatusCode::CREATED);
    assert_eq!(replay.replayed.as_deref(), Some("true"));
    assert_eq!(
        replay.body, first.body,
        "the stored response, byte for byte"
    );

    let changed = confirm(&system, "user-1", Some("key-1"), &order("order-1", 9000)).await;
    assert_eq!(changed.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(changed.json()["code"], "IDEMPOTENCY_KEY_REUSED");

    assert_eq!(
        system.ledger().await["requestCount"],
        1,
        "one PG call in all"
    );
    let metrics = system.origin_metrics().await;
    for line in [
        r#"origin_idempotency_answers_total{answer="IN_FLIGHT"} 1"#,
        r#"origin_idempotency_answers_total{answer="REPLAYED"} 1"#,
        r#"origin_idempotency_answers_total{answer="KEY_REUSED"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
}

#[tokio::test]
async fn a_key_is_required_and_belongs_to_its_user() {
    let system = System::backend(&[]).await;
    let missing = confirm(&system, "user-1", None, &order("order-1", 5000)).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert_eq!(missing.json()["code"], "IDEMPOTENCY_KEY_REQUIRED");

    let mine = confirm(&system, "user-1", Some("shared"), &order("order-1", 5000)).await;
    let theirs = confirm(&system, "user-2", Some("shared"), &order("order-2", 5000)).await;
    assert_eq!(
        (mine.status, theirs.status),
        (StatusCode::CREATED, StatusCode::CREATED)
    );
    assert_eq!(theirs.replayed, None);
    assert_eq!(theirs.json()["orderId"], "order-2");
    assert_eq!(system.ledger().await["requestCount"], 2);
}

#[tokio::test]
async fn an_unknown_outcome_is_replayed_as_it_was_answered() {
    let system = System::backend(&[("GATEWAY_TIMEOUT_MS", "300")]).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 5_000}))
        .await;
    let body = order("order-1", 5000);
    let first = confirm(&system, "user-1", Some("key-1"), &body).await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    let replay = confirm(&system, "user-1", Some("key-1"), &body).await;
    assert_eq!(
        (replay.status, replay.replayed.as_deref()),
        (StatusCode::ACCEPTED, Some("true"))
    );
    assert_eq!(replay.body, first.body);
    assert_eq!(system.ledger().await["requestCount"], 1, "never sent twice");
}
