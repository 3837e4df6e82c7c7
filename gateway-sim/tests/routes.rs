//! Drives the router in-process, as the payment system's clients would see it.

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
    confirm(&router, confirm_body("o-1", "pk-1", 1000)).await;
    let (status, body) = get(&router, "/v1/payments/o-1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({ "orderId": "o-1", "status": "APPROVED", "amount": 1000 })
    );
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
}

#[tokio::test]
async fn admin_ledger_starts_empty() {
    let (status, ledger) = get(&router(), "/admin/ledger").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        ledger,
        json!({ "requestCount": 0, "requests": [], "approvals": [] })
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
