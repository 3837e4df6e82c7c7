//! The PG guard with the origin and the simulator as real processes: what each device
//! makes of a payment, and that what it refuses never reaches the PG.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use harness::eventually::eventually;
use harness::signed::now_ms;
use reqwest::StatusCode;
use rules::signing::SignedRequest;
use serde_json::{json, Value};
use support::calls::paused_for;
use support::System;

async fn confirm(system: &System, order_id: &str) -> (StatusCode, Value) {
    system.confirm_order(order_id).await
}

fn outcome(answer: &(StatusCode, Value)) -> (u16, &str, &str) {
    let (status, body) = answer;
    (
        status.as_u16(),
        body["status"].as_str().unwrap_or("-"),
        body["failureReason"].as_str().unwrap_or("-"),
    )
}

/// The orders the simulator received, and those it approved.
async fn ledger_orders(system: &System) -> (BTreeSet<String>, BTreeSet<String>) {
    let ledger = system.ledger().await;
    let orders = |list: &str| -> BTreeSet<String> {
        ledger[list]
            .as_array()
            .expect("a list")
            .iter()
            .map(|entry| entry["orderId"].as_str().expect("an order").to_owned())
            .collect()
    };
    (orders("requests"), orders("approvals"))
}

fn set(orders: &[&str]) -> BTreeSet<String> {
    orders.iter().map(|o| (*o).to_owned()).collect()
}

async fn recent_payments(system: &System) -> reqwest::Response {
    let nonce = format!("{:032x}", now_ms());
    system
        .signed_origin_request(SignedRequest {
            method: "GET",
            path_and_query: "/payments",
            timestamp_ms: now_ms(),
            nonce: &nonce,
            user_id: "user-1",
            idempotency_key: "",
            request_id: "",
            pass: "",
            body: b"",
        })
        .send()
        .await
        .expect("the origin answers")
}

#[tokio::test]
async fn a_pg_that_holds_the_answer_makes_the_payment_unknown_after_the_timeout() {
    let system = System::backend(&[("GATEWAY_TIMEOUT_MS", "400")]).await;
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let processed = confirm(&system, "order-after").await;
    assert_eq!(outcome(&processed), (202, "UNKNOWN", "-"));
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 10_000}))
        .await;
    let held = confirm(&system, "order-before").await;
    assert_eq!(outcome(&held), (202, "UNKNOWN", "-"));

    let (received, approved) = ledger_orders(&system).await;
    assert_eq!(
        received,
        set(&["order-after", "order-before"]),
        "both arrived"
    );
    assert_eq!(approved, set(&["order-after"]), "only one was processed");
}

#[tokio::test]
async fn a_full_bulkhead_refuses_at_once_and_the_rest_of_the_api_keeps_answering() {
    let system = System::backend(&[
        ("GATEWAY_TIMEOUT_MS", "4000"),
        ("BULKHEAD_MAX_CONCURRENT", "2"),
        // The bulkhead alone: the limit would make the third call wait.
        ("GATEWAY_CONCURRENCY", "off"),
    ])
    .await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 30_000}))
        .await;
    let held = async { tokio::join!(confirm(&system, "order-1"), confirm(&system, "order-2")) };
    let checks = async {
        system.guard_until(|g| g["inFlight"] == 2).await;
        let mut refused = Vec::new();
        for order_id in ["order-3", "order-4", "order-5"] {
            refused.push(confirm(&system, order_id).await);
        }
        let read = recent_payments(&system).await;
        let metrics = system.origin_metrics().await;
        let guard = system.operator_get("/admin/guard").await;
        (refused, read.status(), metrics, guard)
    };
    let ((first, second), (refused, read_status, metrics, guard)) = tokio::join!(held, checks);

    for answer in &refused {
        assert_eq!(outcome(answer), (201, "FAILED", "BULKHEAD_FULL"));
    }
    assert_eq!(read_status, StatusCode::OK, "the unrelated read answers");
    assert_eq!(guard["inFlight"], 2, "answered while both calls were held");
    assert_eq!(guard["bulkhead"]["available"], 0);
    assert_eq!(guard["refusals"]["BULKHEAD_FULL"], 3);
    for line in [
        r#"origin_gateway_in_flight{guard="approve"} 2"#,
        r#"origin_guard_refusals_total{guard="approve",reason="BULKHEAD_FULL"} 3"#,
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
    assert_eq!(outcome(&first), (202, "UNKNOWN", "-"));
    assert_eq!(outcome(&second), (202, "UNKNOWN", "-"));
    let (received, _) = ledger_orders(&system).await;
    assert_eq!(
        received,
        set(&["order-1", "order-2"]),
        "refused orders never reached the PG"
    );
}

#[tokio::test]
async fn a_failing_pg_opens_the_breaker_and_probes_close_it_when_it_is_back() {
    let system = System::backend(&[
        ("BREAKER_WINDOW", "4"),
        ("BREAKER_MIN_CALLS", "4"),
        ("BREAKER_OPEN_MS", "5000"),
        ("BREAKER_HALF_OPEN_CALLS", "2"),
    ])
    .await;
    system.set_faults(json!({"mode": "ERROR_500"})).await;
    for n in 1..=4 {
        let answer = confirm(&system, &format!("order-{n}")).await;
        assert_eq!(outcome(&answer), (202, "UNKNOWN", "-"), "order-{n}");
    }
    for n in 5..=7 {
        let answer = confirm(&system, &format!("order-{n}")).await;
        assert_eq!(
            outcome(&answer),
            (201, "FAILED", "CIRCUIT_OPEN"),
            "order-{n}"
        );
    }
    assert_eq!(
        system.ledger().await["requestCount"],
        4,
        "nothing sent while open"
    );

    system.set_faults(json!({"mode": "NORMAL"})).await;
    system
        .guard_until(|g| g["breaker"]["state"] == "HALF_OPEN")
        .await;
    for n in 8..=9 {
        let answer = confirm(&system, &format!("order-{n}")).await;
        assert_eq!(outcome(&answer), (201, "APPROVED", "-"), "probe o-{n}");
    }
    let guard = system.operator_get("/admin/guard").await;
    assert_eq!(guard["breaker"]["state"], "CLOSED");
    let transitions: Vec<(&str, &str)> = guard["breaker"]["transitions"]
        .as_array()
        .expect("transitions")
        .iter()
        .map(|t| (t["from"].as_str().unwrap(), t["to"].as_str().unwrap()))
        .collect();
    assert_eq!(
        transitions,
        [
            ("CLOSED", "OPEN"),
            ("OPEN", "HALF_OPEN"),
            ("HALF_OPEN", "CLOSED")
        ]
    );
    let (received, approved) = ledger_orders(&system).await;
    assert_eq!(
        received,
        set(&["order-1", "order-2", "order-3", "order-4", "order-8", "order-9"])
    );
    assert_eq!(approved, set(&["order-8", "order-9"]));
    let metrics = system.origin_metrics().await;
    for line in [
        r#"origin_breaker_state{guard="approve",state="CLOSED"} 1"#,
        r#"origin_breaker_transitions_total{guard="approve",from="HALF_OPEN",to="CLOSED"} 1"#,
        r#"origin_guard_refusals_total{guard="approve",reason="CIRCUIT_OPEN"} 3"#,
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
}

/// A payment the breaker refused tells the edge how long the breaker is expected to stay
/// open; an answer from the PG, and a replay, say nothing of the kind.
#[tokio::test]
async fn a_payment_the_breaker_refused_says_how_long_payments_stay_paused() {
    let system = System::backend(&[
        ("BREAKER_WINDOW", "3"),
        ("BREAKER_MIN_CALLS", "3"),
        ("BREAKER_OPEN_MS", "60000"),
    ])
    .await;
    assert_eq!(
        paused_for(&system.confirm_response("order-0").await),
        None,
        "approved"
    );
    system.set_faults(json!({"mode": "ERROR_500"})).await;
    for order in ["order-1", "order-2"] {
        assert_eq!(
            paused_for(&system.confirm_response(order).await),
            None,
            "sent, UNKNOWN"
        );
    }
    let refused = system.confirm_response("order-3").await;
    let paused = paused_for(&refused).expect("the header");
    assert!((50_000..=60_000).contains(&paused), "{paused} ms");
    let payment: Value = refused.json().await.expect("JSON");
    assert_eq!(payment["failureReason"], "CIRCUIT_OPEN");
    assert_eq!(
        paused_for(&system.confirm_response("order-3").await),
        None,
        "a replay"
    );
}

#[tokio::test]
async fn refused_connections_are_known_failures_that_open_the_breaker() {
    let system = System::backend(&[("BREAKER_WINDOW", "2"), ("BREAKER_MIN_CALLS", "2")]).await;
    system
        .set_faults(json!({"mode": "REFUSE_CONNECTIONS", "durationMs": 5_000}))
        .await;
    for order_id in ["order-1", "order-2"] {
        let answer = confirm(&system, order_id).await;
        assert_eq!(outcome(&answer), (201, "FAILED", "GATEWAY_UNREACHABLE"));
    }
    let answer = confirm(&system, "order-3").await;
    assert_eq!(outcome(&answer), (201, "FAILED", "CIRCUIT_OPEN"));
}

#[tokio::test]
async fn a_slow_pg_opens_the_breaker_though_every_call_succeeds() {
    let system = System::backend(&[
        ("BREAKER_WINDOW", "2"),
        ("BREAKER_MIN_CALLS", "2"),
        ("BREAKER_SLOW_CALL_MS", "200"),
        ("BREAKER_SLOW_CALL_RATE", "100"),
    ])
    .await;
    system
        .set_faults(json!({"mode": "DELAY", "delayMs": 300}))
        .await;
    for order_id in ["order-1", "order-2"] {
        let answer = confirm(&system, order_id).await;
        assert_eq!(outcome(&answer), (201, "APPROVED", "-"));
    }
    let answer = confirm(&system, "order-3").await;
    assert_eq!(outcome(&answer), (201, "FAILED", "CIRCUIT_OPEN"));
}

#[tokio::test]
async fn the_limiter_refuses_what_is_over_its_rate_before_sending_it() {
    for limiter in ["token-bucket", "sliding-window"] {
        let system = System::backend(&[("LIMITER", limiter), ("LIMITER_RATE", "2/1m")]).await;
        let answers = [
            confirm(&system, "order-1").await,
            confirm(&system, "order-2").await,
            confirm(&system, "order-3").await,
        ];
        let outcomes: Vec<_> = answers.iter().map(outcome).collect();
        assert_eq!(
            outcomes,
            [
                (201, "APPROVED", "-"),
                (201, "APPROVED", "-"),
                (201, "FAILED", "RATE_LIMITED")
            ],
            "{limiter}"
        );
        let (received, _) = ledger_orders(&system).await;
        assert_eq!(received, set(&["order-1", "order-2"]), "{limiter}");
    }
}

#[tokio::test]
async fn past_its_request_cap_the_api_sheds_at_once_while_metrics_answer() {
    let system = System::backend(&[
        ("GATEWAY_TIMEOUT_MS", "3000"),
        ("ORIGIN_MAX_CONCURRENT_REQUESTS", "2"),
    ])
    .await;
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 30_000}))
        .await;
    let held = async { tokio::join!(confirm(&system, "order-1"), confirm(&system, "order-2")) };
    let checks = async {
        eventually(
            "both calls in flight",
            Duration::from_secs(10),
            Duration::from_millis(50),
            || async {
                let metrics = system.origin_metrics().await;
                if metrics.contains(r#"origin_gateway_in_flight{guard="approve"} 2"#) {
                    Ok(())
                } else {
                    Err(metrics)
                }
            },
        )
        .await;
        let shed = recent_payments(&system).await;
        let retry_after = shed.headers().get("retry-after").cloned();
        let answer = (shed.status(), shed.json::<Value>().await.expect("JSON"));
        (answer, retry_after, system.origin_metrics().await)
    };
    let (_, ((status, body), retry_after, metrics)) = tokio::join!(held, checks);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["code"], "BUSY");
    assert_eq!(retry_after.expect("Retry-After"), "1");
    let shed_count = r#"origin_http_requests_total{method="GET",route="/payments",status="503"} 1"#;
    assert!(metrics.contains(shed_count), "{metrics}");
    assert_eq!(recent_payments(&system).await.status(), StatusCode::OK);
}
