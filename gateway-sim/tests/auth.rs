//! Every Toss API route wants `Authorization: Basic base64(secretKey + ":")`,
//! and every call is recorded as it arrived.

use crate::common;

use axum::body::Body;
use axum::http::{header, Request};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use common::{basic, cancel_body, confirm_body, Sim};
use gateway_sim::config::DEFAULT_SECRET_KEY;
use serde_json::{json, Value};

/// Each Toss route, as (method, path, body).
const ROUTES: [(&str, &str, &str); 4] = [
    (
        "POST",
        "/v1/payments/confirm",
        r#"{"paymentKey":"pk-1","orderId":"order-1","amount":1000}"#,
    ),
    ("GET", "/v1/payments/pk-1", ""),
    ("GET", "/v1/payments/orders/order-1", ""),
    (
        "POST",
        "/v1/payments/pk-1/cancel",
        r#"{"cancelReason":"refund"}"#,
    ),
];

fn request(method: &str, path: &str, body: &str, authorization: Option<&str>) -> Request<Body> {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(authorization) = authorization {
        request = request.header(header::AUTHORIZATION, authorization);
    }
    request
        .body(Body::from(body.to_owned()))
        .expect("valid request")
}

#[tokio::test]
async fn every_route_refuses_a_malformed_authorization_with_400() {
    let sim = Sim::new();
    let no_colon = format!("Basic {}", STANDARD.encode(DEFAULT_SECRET_KEY));
    let bearer = format!("Bearer {DEFAULT_SECRET_KEY}");
    for (method, path, body) in ROUTES {
        for authorization in [
            None,
            Some(no_colon.as_str()),
            Some(bearer.as_str()),
            Some("Basic %%%"),
        ] {
            let reply = sim.send(request(method, path, body, authorization)).await;
            reply.assert_error(400, "INCORRECT_BASIC_AUTH_FORMAT");
        }
    }
    let ledger = sim.ledger().await;
    assert_eq!(ledger["requestCount"], 0, "nothing got in: {ledger}");
    assert_eq!(ledger["statusQueryCount"], 0);
}

#[tokio::test]
async fn every_route_refuses_another_key_with_401() {
    let sim = Sim::new();
    for (method, path, body) in ROUTES {
        for other in [
            basic("test_sk_someone_else"),
            basic("live_sk_zXLkKEypNArWmo50nX3lmeaxYG5R"),
        ] {
            let reply = sim.send(request(method, path, body, Some(&other))).await;
            reply.assert_error(401, "UNAUTHORIZED_KEY");
        }
    }
    assert_eq!(sim.ledger().await["approvals"], json!([]));
}

#[tokio::test]
async fn the_configured_key_is_let_in_and_others_are_not() {
    let live = Sim::with_key("live_sk_merchant");
    live.confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_ok();
    let with_default = Sim::serving(
        gateway_sim::SimState::new(
            gateway_sim::config::SecretKey::new("live_sk_merchant").expect("key"),
            None,
        )
        .expect("state"),
        DEFAULT_SECRET_KEY,
    );
    with_default
        .confirm(confirm_body("order-1", "pk-1", 1000))
        .await
        .assert_error(401, "UNAUTHORIZED_KEY");
}

#[tokio::test]
async fn auth_is_checked_before_the_body() {
    let sim = Sim::new();
    let reply = sim
        .send(request("POST", "/v1/payments/confirm", "not json", None))
        .await;
    reply.assert_error(400, "INCORRECT_BASIC_AUTH_FORMAT");
    let reply = sim
        .send(request(
            "POST",
            "/v1/payments/confirm",
            "not json",
            Some(&basic("test_sk_x")),
        ))
        .await;
    reply.assert_error(401, "UNAUTHORIZED_KEY");
}

#[tokio::test]
async fn every_toss_call_is_recorded_as_it_arrived() {
    let sim = Sim::new();
    sim.confirm_keyed("confirm:order-1", confirm_body("order-1", "pk-1", 1000))
        .await;
    sim.get_with(
        "/v1/payments/pk-1",
        &[("Idempotency-Key", "ignored-on-get")],
    )
    .await;
    sim.get("/v1/payments/orders/order-1").await;
    sim.cancel_with(
        "pk-1",
        &[("Idempotency-Key", "cancel:order-1")],
        cancel_body("refund"),
    )
    .await;
    let refused = request(
        "POST",
        "/v1/payments/confirm",
        "{}",
        Some(&basic("test_sk_x")),
    );
    sim.send(refused).await;
    sim.post(
        "/v1/payments/confirm",
        &[("TossPayments-Test-Code", "INVALID_CARD_EXPIRATION")],
        confirm_body("order-2", "pk-2", 10).to_string(),
    )
    .await;
    // Not the Toss API: neither checked nor recorded.
    sim.unauthenticated_get("/v1/settlements?date=2024-05-01")
        .await;
    sim.ledger().await;

    let calls = sim.ledger().await["calls"].clone();
    let seen: Vec<_> = calls
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            (
                c["method"].as_str().unwrap_or_default().to_owned(),
                c["path"].as_str().unwrap_or_default().to_owned(),
                c["idempotencyKey"].clone(),
                c["authorized"].clone(),
                c["testCode"].clone(),
            )
        })
        .collect();
    let call = |method: &str, path: &str, key: Value, authorized: bool, code: Value| {
        (
            method.to_owned(),
            path.to_owned(),
            key,
            json!(authorized),
            code,
        )
    };
    assert_eq!(
        seen,
        [
            call(
                "POST",
                "/v1/payments/confirm",
                json!("confirm:order-1"),
                true,
                Value::Null
            ),
            call(
                "GET",
                "/v1/payments/pk-1",
                json!("ignored-on-get"),
                true,
                Value::Null
            ),
            call(
                "GET",
                "/v1/payments/orders/order-1",
                Value::Null,
                true,
                Value::Null
            ),
            call(
                "POST",
                "/v1/payments/pk-1/cancel",
                json!("cancel:order-1"),
                true,
                Value::Null
            ),
            call(
                "POST",
                "/v1/payments/confirm",
                Value::Null,
                false,
                Value::Null
            ),
            call(
                "POST",
                "/v1/payments/confirm",
                Value::Null,
                true,
                json!("INVALID_CARD_EXPIRATION")
            ),
        ]
    );
    assert!(
        calls[0]["receivedAt"].as_u64().is_some_and(|at| at > 0),
        "{calls}"
    );
}
