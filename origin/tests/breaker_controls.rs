//! The operator's controls of the approval guard's breaker (`POST /admin/guard/breaker`):
//! forced open, disabled, and back to auto, with who, why and when in `/admin/guard` and
//! the metrics; bad input changes nothing.

use crate::support;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use support::{stub_gateway, Origin, OPERATOR_TOKEN};

fn order(order_id: &str) -> String {
    json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 5000 })
        .to_string()
}

async fn set(origin: &Origin, body: &str) -> (StatusCode, Value) {
    let request = Request::post("/admin/guard/breaker")
        .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    origin.send(request).await
}

async fn confirm(origin: &Origin, order_id: &str) -> (StatusCode, Value) {
    let request = support::signed(
        "POST",
        "/payments/confirm",
        Some(&format!("key-{order_id}")),
        &order(order_id),
    );
    origin.send(request).await
}

#[tokio::test]
async fn forced_open_refuses_disabled_lets_through_and_auto_starts_afresh() {
    // A gateway that fails every call: the breaker alone would open on it.
    let gateway = stub_gateway(StatusCode::INTERNAL_SERVER_ERROR, json!({}), Duration::ZERO).await;
    let origin = Origin::with_gateway(&gateway, Duration::from_secs(3)).await;

    let (status, guard) = set(
        &origin,
        r#"{"state":"FORCED_OPEN","reason":"PG maintenance"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{guard}");
    let control = &guard["breaker"]["control"];
    assert_eq!(control["mode"], "FORCED_OPEN");
    assert_eq!(control["reason"], "PG maintenance");
    assert!(
        control["by"].is_string() && control["atMs"].is_i64(),
        "{control}"
    );
    let (status, payment) = confirm(&origin, "order-forced").await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(payment["failureReason"], "CIRCUIT_OPEN");
    let metrics = origin.metrics_text().await;
    assert!(
        metrics.contains("origin_breaker_mode{guard=\"approve\",mode=\"FORCED_OPEN\"} 1"),
        "{metrics}"
    );

    set(
        &origin,
        r#"{"state":"DISABLED","reason":"the PG says it is fine"}"#,
    )
    .await;
    for n in 0..15 {
        let (_, payment) = confirm(&origin, &format!("order-disabled-{n}")).await;
        assert_eq!(payment["status"], "UNKNOWN", "sent every time: {payment}");
    }
    let (_, guard) = set(&origin, r#"{"state":"AUTO","reason":"back to normal"}"#).await;
    assert_eq!(guard["breaker"]["state"], "CLOSED");
    assert_eq!(
        guard["breaker"]["calls"], 0,
        "nothing was recorded while disabled: {guard}"
    );
}

#[tokio::test]
async fn bad_settings_are_refused_and_change_nothing() {
    let gateway = stub_gateway(StatusCode::OK, json!({}), Duration::ZERO).await;
    let origin = Origin::with_gateway(&gateway, Duration::from_secs(3)).await;
    set(&origin, r#"{"state":"FORCED_OPEN","reason":"drill"}"#).await;
    for body in [
        r#"{"state":"SIDEWAYS","reason":"x"}"#,
        r#"{"state":"AUTO","reason":"  "}"#,
        r#"{"state":"AUTO"}"#,
        "not json",
    ] {
        let (status, refusal) = set(&origin, body).await;
        assert_eq!(
            (status, refusal["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")),
            "{body}"
        );
    }
    let request = Request::get("/admin/guard")
        .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let (_, guard) = origin.send(request).await;
    assert_eq!(guard["breaker"]["control"]["mode"], "FORCED_OPEN");
    assert_eq!(guard["breaker"]["control"]["reason"], "drill");
}
