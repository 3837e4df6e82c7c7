//! Drives the router in-process, as the payment system's clients would see it.
//!
//! Faults that act on sockets (`REFUSE_CONNECTIONS`, and the dropped
//! connection that ends `HANG_BEFORE_PROCESSING`) are exercised through a
//! real server in `tests/server.rs`.

use std::time::{Duration, Instant};

use axum::body::{to_bytes, Body};
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use gateway_sim::{app, SimState};
use serde_json::{json, Value};
use tower::ServiceExt;

const BODY_LIMIT: usize = 16 * 1024;

async fn send(router: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("router is infallible");
    let status = response.status();
    let bytes = to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body readable");
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|err| {
        panic!(
            "status {status}: body is not JSON ({err}): {:?}",
            String::from_utf8_lossy(&bytes)
        )
    });
    (status, body)
}

async fn get(router: &Router, path: &str) -> (StatusCode, Value) {
    let request = Request::get(path)
        .body(Body::empty())
        .expect("valid request");
    send(router, request).await
}

async fn post_raw(router: &Router, body: impl Into<Body>) -> (StatusCode, Value) {
    let request = Request::post("/v1/payments/confirm")
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.into())
        .expect("valid request");
    send(router, request).await
}

async fn confirm(router: &Router, body: Value) -> (StatusCode, Value) {
    post_raw(router, body.to_string()).await
}

async fn cancel(router: &Router, order_id: &str) -> (StatusCode, Value) {
    let request = Request::post(format!("/v1/payments/{order_id}/cancel"))
        .body(Body::empty())
        .expect("valid request");
    send(router, request).await
}

async fn put_faults_raw(router: &Router, body: impl Into<Body>) -> (StatusCode, Value) {
    let request = Request::put("/admin/faults")
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.into())
        .expect("valid request");
    send(router, request).await
}

/// Puts `faults` in force, asserting they were accepted.
async fn put_faults(router: &Router, faults: Value) -> Value {
    let (status, body) = put_faults_raw(router, faults.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// A client that gives up after `patience`: `None` when it did.
async fn confirm_within(
    router: &Router,
    body: Value,
    patience: Duration,
) -> Option<(StatusCode, Value)> {
    tokio::time::timeout(patience, confirm(router, body))
        .await
        .ok()
}

fn confirm_body(order_id: &str, payment_key: &str, amount: i64) -> Value {
    json!({ "paymentKey": payment_key, "orderId": order_id, "amount": amount })
}

fn router() -> Router {
    app(SimState::default())
}

fn assert_error(response: &(StatusCode, Value), status: StatusCode, code: &str) {
    let (actual_status, body) = response;
    assert_eq!(*actual_status, status, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert!(body["message"].is_string(), "{body}");
}

#[tokio::test]
async fn healthz_reports_ok() {
    let (status, body) = get(&router(), "/healthz").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({ "status": "ok" }));
}

#[tokio::test]
async fn confirm_approves_a_new_order() {
    let (status, body) = confirm(&router(), confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["orderId"], "o-1");
    assert_eq!(body["status"], "APPROVED");
    assert!(body["approvedAt"].as_u64().is_some_and(|t| t > 0), "{body}");
}

#[tokio::test]
async fn repeat_confirm_returns_first_result_and_is_counted() {
    let router = router();
    let (_, first) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    let (status, repeat) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(repeat, first);

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 2);
    assert_eq!(ledger["approvals"][0]["requestCount"], 2);
}

#[tokio::test]
async fn repeat_with_different_amount_or_key_is_an_order_conflict() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    let other_amount = confirm(&router, confirm_body("o-1", "pk-1", 999)).await;
    assert_error(&other_amount, StatusCode::CONFLICT, "ORDER_CONFLICT");
    let other_key = confirm(&router, confirm_body("o-1", "pk-2", 1000)).await;
    assert_error(&other_key, StatusCode::CONFLICT, "ORDER_CONFLICT");

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 3);
    assert_eq!(ledger["approvals"][0]["amount"], 1000);
    assert_eq!(ledger["approvals"][0]["requestCount"], 1);
}

#[tokio::test]
async fn payment_lookup_returns_status_and_amount() {
    let router = router();
    let (_, confirmation) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    let (status, body) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({
            "orderId": "o-1",
            "status": "APPROVED",
            "amount": 1000,
            "approvedAt": confirmation["approvedAt"],
        })
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_status_query_is_counted_as_it_arrives_and_answers_late() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    put_faults(&router, json!({ "mode": "NORMAL", "statusDelayMs": 2_000 })).await;
    let started = tokio::time::Instant::now();
    let query = get(&router, "/v1/payments/o-1");
    let counted = async {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        get(&router, "/admin/ledger").await.1["statusQueryCount"].clone()
    };
    let ((status, body), counted) = tokio::join!(query, counted);
    assert_eq!(counted, 1, "counted while it is still held");
    assert_eq!(
        (status, &body["status"]),
        (StatusCode::OK, &json!("APPROVED"))
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(2_000));
    let invalid = put_faults_raw(&router, r#"{"mode":"NORMAL","statusDelayMs":-1}"#).await;
    assert_eq!(invalid.0, StatusCode::BAD_REQUEST, "{}", invalid.1);
}

#[tokio::test]
async fn payment_lookup_of_unknown_order_is_not_found() {
    let response = get(&router(), "/v1/payments/nope").await;
    assert_error(&response, StatusCode::NOT_FOUND, "NOT_FOUND");
}

#[tokio::test]
async fn admin_ledger_lists_requests_and_approvals_in_order() {
    let router = router();
    confirm(&router, confirm_body("o-2", "pk-2", 200)).await;
    confirm(&router, confirm_body("o-1", "pk-1", 100)).await;

    let (status, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ledger["requestCount"], 2);
    assert_eq!(ledger["requests"][0]["orderId"], "o-2");
    assert_eq!(ledger["requests"][1]["orderId"], "o-1");
    assert!(ledger["requests"][0]["receivedAt"].is_u64(), "{ledger}");
    let approval = &ledger["approvals"][1];
    assert_eq!(approval["orderId"], "o-1");
    assert_eq!(approval["amount"], 100);
    assert_eq!(approval["requestCount"], 1);
    assert!(approval["approvedAt"].is_u64(), "{ledger}");
    assert_eq!(approval["cancelledAt"], Value::Null, "{ledger}");
}

#[tokio::test]
async fn admin_ledger_starts_empty() {
    let (status, ledger) = get(&router(), "/admin/ledger").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        ledger,
        json!({
            "requestCount": 0,
            "statusQueryCount": 0,
            "requests": [],
            "approvals": [],
            "declines": [],
            "callbacks": [],
        })
    );
}

#[tokio::test]
async fn malformed_json_is_a_bad_request() {
    let response = post_raw(&router(), "{\"orderId\": ").await;
    assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
}

#[tokio::test]
async fn missing_field_is_a_bad_request() {
    let body = json!({ "orderId": "o-1", "amount": 1000 });
    let response = confirm(&router(), body).await;
    assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
}

#[tokio::test]
async fn wrong_typed_amount_is_a_bad_request() {
    for amount in [json!("1000"), json!(10.5)] {
        let body = json!({ "paymentKey": "pk-1", "orderId": "o-1", "amount": amount });
        let response = confirm(&router(), body).await;
        assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
    }
}

#[tokio::test]
async fn zero_or_negative_amount_is_a_bad_request() {
    for amount in [0, -1] {
        let response = confirm(&router(), confirm_body("o-1", "pk-1", amount)).await;
        assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
    }
}

#[tokio::test]
async fn empty_order_id_or_payment_key_is_a_bad_request() {
    for body in [confirm_body("", "pk-1", 1), confirm_body("o-1", "", 1)] {
        let response = confirm(&router(), body).await;
        assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
    }
}

#[tokio::test]
async fn oversized_body_is_a_bad_request() {
    let padding = "x".repeat(BODY_LIMIT);
    let body = json!({ "paymentKey": padding, "orderId": "o-1", "amount": 1 });
    let response = confirm(&router(), body).await;
    assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
}

#[tokio::test]
async fn missing_json_content_type_is_a_bad_request() {
    let request = Request::post("/v1/payments/confirm")
        .body(Body::from(confirm_body("o-1", "pk-1", 1).to_string()))
        .expect("valid request");
    let response = send(&router(), request).await;
    assert_error(&response, StatusCode::BAD_REQUEST, "BAD_REQUEST");
}

#[tokio::test]
async fn rejected_confirms_are_not_recorded() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 0)).await;
    post_raw(&router, "not json").await;
    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 0);
}

#[tokio::test]
async fn unknown_route_is_a_json_not_found() {
    let response = get(&router(), "/v2/nothing").await;
    assert_error(&response, StatusCode::NOT_FOUND, "NOT_FOUND");
}

#[tokio::test]
async fn wrong_method_is_a_json_method_not_allowed() {
    let request = Request::builder()
        .method(Method::DELETE)
        .uri("/healthz")
        .body(Body::empty())
        .expect("valid request");
    let response = send(&router(), request).await;
    assert_error(
        &response,
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
    );
}

fn default_faults() -> Value {
    json!({
        "mode": "NORMAL",
        "delayMs": 0,
        "jitterMs": 0,
        "declineRate": 0.0,
        "maxPerSecond": null,
        "idempotent": true,
        "durationMs": null,
        "callbacks": true,
        "pendingVisible": true,
        "statusDelayMs": 0,
    })
}

#[tokio::test]
async fn faults_start_normal() {
    let (status, body) = get(&router(), "/admin/faults").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, default_faults());
}

#[tokio::test]
async fn put_faults_answers_the_full_setting_and_get_reports_it() {
    let router = router();
    let all = json!({
        "mode": "DELAY",
        "delayMs": 20,
        "jitterMs": 5,
        "declineRate": 0.25,
        "maxPerSecond": 7,
        "idempotent": false,
        "callbacks": false,
        "pendingVisible": false,
        "statusDelayMs": 1500,
    });
    let answer = put_faults(&router, all).await;
    let expected = json!({
        "mode": "DELAY",
        "delayMs": 20,
        "jitterMs": 5,
        "declineRate": 0.25,
        "maxPerSecond": 7,
        "idempotent": false,
        "durationMs": null,
        "callbacks": false,
        "pendingVisible": false,
        "statusDelayMs": 1500,
    });
    assert_eq!(answer, expected);
    assert_eq!(get(&router, "/admin/faults").await.1, expected);

    // A PUT replaces everything: what it leaves out is back to default.
    let answer = put_faults(&router, json!({ "mode": "NORMAL" })).await;
    assert_eq!(answer, default_faults());
    assert_eq!(get(&router, "/admin/faults").await.1, default_faults());
}

#[tokio::test]
async fn put_faults_takes_back_what_get_answered() {
    let router = router();
    let answer = put_faults(&router, json!({ "mode": "ERROR_500", "maxPerSecond": 3 })).await;
    assert_eq!(put_faults(&router, answer.clone()).await, answer);
}

#[tokio::test]
async fn invalid_faults_are_a_bad_request_and_change_nothing() {
    let router = router();
    put_faults(&router, json!({ "mode": "DELAY", "delayMs": 5 })).await;
    let in_force = get(&router, "/admin/faults").await.1;

    let bad_bodies = [
        json!({ "mode": "SLOW" }),
        json!({ "mode": "normal" }),
        json!({ "delayMs": 10 }),
        json!({ "mode": "NORMAL", "declineRate": 1.5 }),
        json!({ "mode": "NORMAL", "declineRate": -0.1 }),
        json!({ "mode": "NORMAL", "declineRate": "0.5" }),
        json!({ "mode": "DELAY", "delayMs": -1 }),
        json!({ "mode": "DELAY", "delayMs": 600_001 }),
        json!({ "mode": "DELAY", "delayMs": 1.5 }),
        json!({ "mode": "DELAY", "jitterMs": -5 }),
        json!({ "mode": "NORMAL", "maxPerSecond": 0 }),
        json!({ "mode": "NORMAL", "maxPerSecond": -2 }),
        json!({ "mode": "NORMAL", "idempotent": "no" }),
        json!({ "mode": "NORMAL", "callbacks": 1 }),
        json!({ "mode": "NORMAL", "retries": 3 }),
        json!({ "mode": "REFUSE_CONNECTIONS" }),
        json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 0 }),
        json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": -1 }),
        json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 600_001 }),
        json!({ "mode": "DELAY", "durationMs": 100 }),
        json!([]),
    ];
    for body in bad_bodies {
        let response = put_faults_raw(&router, body.to_string()).await;
        assert_error(&response, StatusCode::BAD_REQUEST, "INVALID_FAULTS");
        assert!(
            response.1["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{body}: {}",
            response.1
        );
    }
    for raw in ["not json", "{\"mode\": ", ""] {
        let response = put_faults_raw(&router, raw).await;
        assert_error(&response, StatusCode::BAD_REQUEST, "INVALID_FAULTS");
    }
    let no_content_type = Request::put("/admin/faults")
        .body(Body::from(json!({ "mode": "NORMAL" }).to_string()))
        .expect("valid request");
    let response = send(&router, no_content_type).await;
    assert_error(&response, StatusCode::BAD_REQUEST, "INVALID_FAULTS");

    assert_eq!(get(&router, "/admin/faults").await.1, in_force);
}

#[tokio::test]
async fn invalid_faults_messages_name_the_field() {
    let router = router();
    for (body, field) in [
        (
            json!({ "mode": "NORMAL", "declineRate": 2.0 }),
            "declineRate",
        ),
        (json!({ "mode": "DELAY", "delayMs": -1 }), "delayMs"),
        (
            json!({ "mode": "NORMAL", "maxPerSecond": 0 }),
            "maxPerSecond",
        ),
        (json!({ "mode": "REFUSE_CONNECTIONS" }), "durationMs"),
        (json!({ "mode": "SLOW" }), "SLOW"),
        (json!({ "mode": "NORMAL", "retries": 3 }), "retries"),
    ] {
        let (_, answer) = put_faults_raw(&router, body.to_string()).await;
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{body}: {message}");
    }
}

#[tokio::test]
async fn refuse_connections_needs_the_simulator_own_server() {
    let router = router();
    let response = put_faults_raw(
        &router,
        json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 500 }).to_string(),
    )
    .await;
    assert_error(&response, StatusCode::CONFLICT, "REFUSAL_UNAVAILABLE");
    assert_eq!(get(&router, "/admin/faults").await.1, default_faults());
}

#[tokio::test]
async fn delay_answers_after_at_least_delay_ms() {
    let router = router();
    put_faults(
        &router,
        json!({ "mode": "DELAY", "delayMs": 200, "jitterMs": 50 }),
    )
    .await;

    let started = Instant::now();
    let (status, body) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "APPROVED");

    let (_, ledger) = get(&router, "/admin/ledger").await;
    let received_at = ledger["requests"][0]["receivedAt"].as_u64().expect("time");
    let approved_at = ledger["approvals"][0]["approvedAt"].as_u64().expect("time");
    assert!(
        approved_at >= received_at + 200,
        "received at arrival, approved after the delay: {ledger}"
    );
}

#[tokio::test]
async fn delay_still_processes_when_the_client_gives_up() {
    let router = router();
    put_faults(&router, json!({ "mode": "DELAY", "delayMs": 300 })).await;

    let answer = confirm_within(
        &router,
        confirm_body("o-1", "pk-1", 1000),
        Duration::from_millis(100),
    )
    .await;
    assert!(answer.is_none(), "answered before the delay: {answer:?}");
    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["approvals"], json!([]), "not yet processed");

    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(payment["status"], "APPROVED");
}

#[tokio::test]
async fn error_500_is_recorded_but_not_processed() {
    let router = router();
    put_faults(&router, json!({ "mode": "ERROR_500" })).await;

    let response = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_error(&response, StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL");

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["requests"][0]["orderId"], "o-1");
    assert_eq!(ledger["approvals"], json!([]));
    let lookup = get(&router, "/v1/payments/o-1").await;
    assert_error(&lookup, StatusCode::NOT_FOUND, "NOT_FOUND");

    // Once the fault is lifted the same order is processed normally.
    put_faults(&router, json!({ "mode": "NORMAL" })).await;
    let (status, body) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "APPROVED");
}

#[tokio::test]
async fn hang_before_processing_records_but_never_processes() {
    let router = router();
    put_faults(&router, json!({ "mode": "HANG_BEFORE_PROCESSING" })).await;

    let answer = confirm_within(
        &router,
        confirm_body("o-1", "pk-1", 1000),
        Duration::from_millis(300),
    )
    .await;
    assert!(answer.is_none(), "a hung confirm was answered: {answer:?}");

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["requests"][0]["orderId"], "o-1");
    assert_eq!(ledger["approvals"], json!([]));
    assert_eq!(ledger["declines"], json!([]));
    let lookup = get(&router, "/v1/payments/o-1").await;
    assert_error(&lookup, StatusCode::NOT_FOUND, "NOT_FOUND");
}

#[tokio::test]
async fn hang_after_processing_approves_then_holds_the_answer() {
    let router = router();
    put_faults(&router, json!({ "mode": "HANG_AFTER_PROCESSING" })).await;

    let answer = confirm_within(
        &router,
        confirm_body("o-1", "pk-1", 1000),
        Duration::from_millis(300),
    )
    .await;
    assert!(answer.is_none(), "a held answer arrived: {answer:?}");

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["approvals"][0]["orderId"], "o-1");
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(payment["status"], "APPROVED");
}

#[tokio::test]
async fn hang_after_processing_answers_once_delay_ms_is_over() {
    let router = router();
    put_faults(
        &router,
        json!({ "mode": "HANG_AFTER_PROCESSING", "delayMs": 200 }),
    )
    .await;

    let started = Instant::now();
    let (status, body) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "APPROVED");
}

#[tokio::test]
async fn decline_rate_one_declines_every_new_order() {
    let router = router();
    put_faults(&router, json!({ "mode": "NORMAL", "declineRate": 1.0 })).await;

    let (status, body) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({ "orderId": "o-1", "status": "DECLINED", "approvedAt": null })
    );
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(
        payment,
        json!({ "orderId": "o-1", "status": "DECLINED", "amount": 1000 })
    );

    // A repeat replays the decline, even once declines are off.
    put_faults(&router, json!({ "mode": "NORMAL", "declineRate": 0.0 })).await;
    let (_, repeat) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(repeat, body);

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 2);
    assert_eq!(ledger["approvals"], json!([]));
    assert_eq!(ledger["declines"][0]["orderId"], "o-1");
    assert_eq!(ledger["declines"][0]["requestCount"], 2);
}

#[tokio::test]
async fn decline_rate_zero_approves_every_order() {
    let router = router();
    put_faults(&router, json!({ "mode": "NORMAL", "declineRate": 0.0 })).await;
    for n in 0..20 {
        let (_, body) = confirm(&router, confirm_body(&format!("o-{n}"), "pk", 10)).await;
        assert_eq!(body["status"], "APPROVED", "{body}");
    }
    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(20));
    assert_eq!(ledger["declines"], json!([]));
}

#[tokio::test]
async fn decline_rate_applies_in_delay_mode_too() {
    let router = router();
    put_faults(
        &router,
        json!({ "mode": "DELAY", "delayMs": 10, "declineRate": 1.0 }),
    )
    .await;
    let (_, body) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(body["status"], "DECLINED");
}

#[tokio::test]
async fn max_per_second_refuses_the_confirm_over_the_cap() {
    let router = router();
    put_faults(&router, json!({ "mode": "NORMAL", "maxPerSecond": 2 })).await;

    for order_id in ["o-1", "o-2"] {
        let (status, _) = confirm(&router, confirm_body(order_id, "pk", 10)).await;
        assert_eq!(status, StatusCode::OK);
    }
    let third = confirm(&router, confirm_body("o-3", "pk", 10)).await;
    assert_error(&third, StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 3, "the refused confirm is received");
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(2));
    let lookup = get(&router, "/v1/payments/o-3").await;
    assert_error(&lookup, StatusCode::NOT_FOUND, "NOT_FOUND");
}

#[tokio::test]
async fn not_idempotent_charges_every_repeat() {
    let router = router();
    put_faults(&router, json!({ "mode": "NORMAL", "idempotent": false })).await;

    let (_, first) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (status, second) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(second["status"], "APPROVED");
    assert!(
        second["approvedAt"].as_u64() > first["approvedAt"].as_u64(),
        "a fresh approval: {first} then {second}"
    );

    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 2);
    let approvals = ledger["approvals"].as_array().expect("approvals");
    assert_eq!(approvals.len(), 2, "double charge: {ledger}");
    assert!(approvals.iter().all(|a| a["orderId"] == "o-1"));
    assert!(approvals.iter().all(|a| a["requestCount"] == 1));
}

#[tokio::test]
async fn delay_reports_pending_until_decided() {
    let router = router();
    put_faults(&router, json!({ "mode": "DELAY", "delayMs": 300 })).await;

    let answer = confirm_within(
        &router,
        confirm_body("o-1", "pk-1", 1000),
        Duration::from_millis(100),
    )
    .await;
    assert!(answer.is_none(), "answered before the delay: {answer:?}");
    let (status, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        payment,
        json!({ "orderId": "o-1", "status": "PENDING", "amount": 1000 })
    );
    let early_cancel = cancel(&router, "o-1").await;
    assert_error(&early_cancel, StatusCode::CONFLICT, "PAYMENT_PENDING");

    tokio::time::sleep(Duration::from_millis(400)).await;
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(payment["status"], "APPROVED");
}

#[tokio::test]
async fn with_pending_hidden_an_undecided_confirm_is_not_found_until_decided() {
    let router = router();
    put_faults(
        &router,
        json!({ "mode": "DELAY", "delayMs": 300, "pendingVisible": false }),
    )
    .await;
    let answer = confirm_within(
        &router,
        confirm_body("o-1", "pk-1", 1000),
        Duration::from_millis(100),
    )
    .await;
    assert!(answer.is_none(), "answered before the delay: {answer:?}");
    let (status, _) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(payment["status"], "APPROVED");
}

#[tokio::test]
async fn unprocessed_confirms_are_never_pending() {
    let router = router();
    put_faults(&router, json!({ "mode": "HANG_BEFORE_PROCESSING" })).await;
    let answer = confirm_within(
        &router,
        confirm_body("o-hang", "pk", 10),
        Duration::from_millis(100),
    )
    .await;
    assert!(answer.is_none(), "{answer:?}");
    put_faults(&router, json!({ "mode": "ERROR_500" })).await;
    confirm(&router, confirm_body("o-500", "pk", 10)).await;
    put_faults(&router, json!({ "mode": "NORMAL", "maxPerSecond": 1 })).await;
    confirm(&router, confirm_body("o-ok", "pk", 10)).await;
    let limited = confirm(&router, confirm_body("o-429", "pk", 10)).await;
    assert_error(&limited, StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");

    for order_id in ["o-hang", "o-500", "o-429"] {
        let lookup = get(&router, &format!("/v1/payments/{order_id}")).await;
        assert_error(&lookup, StatusCode::NOT_FOUND, "NOT_FOUND");
        let cancelled = cancel(&router, order_id).await;
        assert_error(&cancelled, StatusCode::NOT_FOUND, "NOT_FOUND");
    }
}

#[tokio::test]
async fn cancel_answers_cancelled_twice_and_keeps_the_approval() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;

    let first = cancel(&router, "o-1").await;
    let expected = json!({ "orderId": "o-1", "status": "CANCELLED" });
    assert_eq!(first, (StatusCode::OK, expected.clone()));
    let (_, ledger) = get(&router, "/admin/ledger").await;
    let cancelled_at = ledger["approvals"][0]["cancelledAt"].clone();
    assert!(cancelled_at.is_u64(), "{ledger}");

    let second = cancel(&router, "o-1").await;
    assert_eq!(second, (StatusCode::OK, expected), "idempotent");
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(payment["status"], "CANCELLED");
    assert_eq!(payment["amount"], 1000);
    assert!(payment["approvedAt"].is_u64(), "{payment}");
    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(1));
    assert_eq!(ledger["approvals"][0]["cancelledAt"], cancelled_at);
    assert_eq!(ledger["requestCount"], 1, "cancels are not confirms");
}

#[tokio::test]
async fn cancel_of_an_unknown_order_is_not_found() {
    let response = cancel(&router(), "nope").await;
    assert_error(&response, StatusCode::NOT_FOUND, "NOT_FOUND");
}

#[tokio::test]
async fn cancel_of_a_declined_order_is_not_cancellable() {
    let router = router();
    put_faults(&router, json!({ "mode": "NORMAL", "declineRate": 1.0 })).await;
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;

    let response = cancel(&router, "o-1").await;
    assert_error(&response, StatusCode::CONFLICT, "NOT_CANCELLABLE");
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(payment["status"], "DECLINED");
}

#[tokio::test]
async fn non_idempotent_cancel_takes_back_every_charge() {
    let router = router();
    put_faults(&router, json!({ "mode": "NORMAL", "idempotent": false })).await;
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;

    let (status, _) = cancel(&router, "o-1").await;
    assert_eq!(status, StatusCode::OK);
    let (_, ledger) = get(&router, "/admin/ledger").await;
    let approvals = ledger["approvals"].as_array().expect("approvals");
    assert_eq!(approvals.len(), 2, "{ledger}");
    assert!(
        approvals.iter().all(|a| a["cancelledAt"].is_u64()),
        "{ledger}"
    );
}

#[tokio::test]
async fn cancel_is_answered_at_once_whatever_the_confirm_faults() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    for faults in [
        json!({ "mode": "DELAY", "delayMs": 5000 }),
        json!({ "mode": "HANG_BEFORE_PROCESSING" }),
        json!({ "mode": "HANG_AFTER_PROCESSING" }),
        json!({ "mode": "NORMAL", "maxPerSecond": 1 }),
    ] {
        put_faults(&router, faults.clone()).await;
        let answer = tokio::time::timeout(Duration::from_secs(1), cancel(&router, "o-1"))
            .await
            .unwrap_or_else(|_| panic!("cancel held under {faults}"));
        assert_eq!(answer.0, StatusCode::OK, "{faults}: {}", answer.1);
    }
}

#[tokio::test]
async fn cancel_under_error_500_answers_500_and_does_nothing() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    put_faults(&router, json!({ "mode": "ERROR_500" })).await;

    let response = cancel(&router, "o-1").await;
    assert_error(&response, StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL");
    let (_, payment) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(payment["status"], "APPROVED");
    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["approvals"][0]["cancelledAt"], Value::Null);
}

#[tokio::test]
async fn without_a_callback_url_nothing_is_owed() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    cancel(&router, "o-1").await;
    let (_, ledger) = get(&router, "/admin/ledger").await;
    assert_eq!(ledger["callbacks"], json!([]));
}

/// A settlement export: the status, the two headers and the raw body.
async fn settlement(router: &Router, query: &str) -> (StatusCode, String, String, Vec<u8>) {
    let request = Request::get(format!("/v1/settlements?{query}"))
        .body(Body::empty())
        .expect("valid request");
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("router is infallible");
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (content_type, disposition) = (
        header(header::CONTENT_TYPE),
        header(header::CONTENT_DISPOSITION),
    );
    let status = response.status();
    let bytes = to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body readable");
    (status, content_type, disposition, bytes.to_vec())
}

/// The UTC day of a confirm answer's `approvedAt`, as `YYYY-MM-DD`.
fn approval_day(answer: &Value) -> String {
    let approved_at = answer["approvedAt"].as_i64().expect("approved");
    chrono::DateTime::from_timestamp_millis(approved_at)
        .expect("a representable time")
        .date_naive()
        .to_string()
}

#[tokio::test]
async fn utf8_settlement_has_a_bom_crlf_and_the_day_s_live_approvals() {
    let router = router();
    let (_, answer) = confirm(&router, confirm_body("o-1", "pk-1", 12_345)).await;
    confirm(&router, confirm_body("o-2", "pk-2", 500)).await;
    cancel(&router, "o-2").await;
    let day = approval_day(&answer);

    let (status, content_type, disposition, body) =
        settlement(&router, &format!("date={day}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "text/csv; charset=utf-8");
    assert_eq!(
        disposition,
        format!("attachment; filename=\"settlement-{day}.csv\"")
    );
    let text = body
        .strip_prefix("\u{feff}".as_bytes())
        .and_then(|text| std::str::from_utf8(text).ok())
        .expect("UTF-8 after a byte order mark");
    assert_eq!(text.matches('\n').count(), 3, "{text:?}");
    assert_eq!(text.matches("\r\n").count(), 3, "CRLF only: {text:?}");
    let lines: Vec<_> = text.split_terminator("\r\n").collect();
    assert_eq!(
        lines[0],
        "거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액"
    );
    assert!(
        lines[1].ends_with(",M-GATEWAY-SIM,o-1,\"카드,일시불\",\"12,345원\",308원,\"12,037원\""),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "합계,,,,\"12,345원\",308원,\"12,037원\"");
}

#[tokio::test]
async fn cp949_settlement_decodes_to_the_same_text_without_a_bom() {
    let router = router();
    let (_, answer) = confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    let day = approval_day(&answer);

    let (_, _, _, utf8) = settlement(&router, &format!("date={day}&encoding=utf-8")).await;
    let (status, content_type, disposition, cp949) =
        settlement(&router, &format!("date={day}&encoding=cp949")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type, "text/csv; charset=EUC-KR");
    assert_eq!(
        encoding_rs::Encoding::for_label(b"EUC-KR"),
        Some(encoding_rs::EUC_KR)
    );
    assert_eq!(
        disposition,
        format!("attachment; filename=\"settlement-{day}.csv\"")
    );
    assert!(!cp949.starts_with(b"\xEF\xBB\xBF"), "no byte order mark");
    assert!(std::str::from_utf8(&cp949).is_err(), "not UTF-8");
    let (decoded, had_errors) = encoding_rs::EUC_KR.decode_without_bom_handling(&cp949);
    assert!(!had_errors);
    let utf8 = std::str::from_utf8(&utf8).expect("UTF-8");
    assert_eq!(Some(decoded.as_ref()), utf8.strip_prefix('\u{feff}'));
}

#[tokio::test]
async fn settlement_of_an_empty_day_is_the_header_and_a_zero_total() {
    let router = router();
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    let (status, _, disposition, body) = settlement(&router, "date=2000-01-01").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        disposition,
        "attachment; filename=\"settlement-2000-01-01.csv\""
    );
    assert_eq!(
        String::from_utf8(body).expect("UTF-8"),
        "\u{feff}거래일시,가맹점ID,주문번호,결제수단,결제금액,수수료,정산금액\r\n합계,,,,0원,0원,0원\r\n"
    );
}

#[tokio::test]
async fn settlement_with_a_bad_date_or_encoding_is_a_json_bad_request() {
    let router = router();
    for query in [
        "",
        "date=",
        "date=2024-02-30",
        "date=2024-5-1",
        "date=today",
    ] {
        let response = get(&router, &format!("/v1/settlements?{query}")).await;
        assert_error(&response, StatusCode::BAD_REQUEST, "INVALID_DATE");
    }
    for encoding in ["latin1", "utf-16", ""] {
        let response = get(
            &router,
            &format!("/v1/settlements?date=2024-05-01&encoding={encoding}"),
        )
        .await;
        assert_error(&response, StatusCode::BAD_REQUEST, "INVALID_ENCODING");
    }
}

#[tokio::test]
async fn cp949_settlement_refuses_what_cp949_cannot_hold() {
    let router = router();
    let (_, answer) = confirm(&router, confirm_body("o-😀", "pk-1", 1000)).await;
    let day = approval_day(&answer);
    let response = get(
        &router,
        &format!("/v1/settlements?date={day}&encoding=cp949"),
    )
    .await;
    assert_error(&response, StatusCode::BAD_REQUEST, "INVALID_ENCODING");
    let (status, _, _, body) = settlement(&router, &format!("date={day}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(body).is_ok_and(|text| text.contains(",o-😀,")));
}
