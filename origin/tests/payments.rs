//! The origin's payment routes: confirm and read-back.

use crate::support;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;
use support::{signed, simulator, stub_gateway, Origin, OPERATOR_TOKEN};
use tower::ServiceExt as _;

fn order(order_id: &str) -> String {
    json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 5000 })
        .to_string()
}

#[tokio::test]
async fn an_approved_confirm_is_201_and_stored() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    let (status, payment) = origin.confirm(&order("order-1")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(payment["status"], "APPROVED");
    assert!(payment["approvedAt"].is_i64());
    assert_eq!(origin.read("order-1").await, (StatusCode::OK, payment));
}

#[tokio::test]
async fn a_declined_confirm_is_201_failed_with_the_reason() {
    let gateway = stub_gateway(
        StatusCode::FORBIDDEN,
        json!({"code": "REJECT_CARD_PAYMENT", "message": "한도초과 혹은 잔액부족"}),
        Duration::ZERO,
    )
    .await;
    let origin = Origin::with_gateway(&gateway, Duration::from_secs(3)).await;
    let (status, payment) = origin.confirm(&order("order-1")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        (
            payment["status"].as_str(),
            payment["failureReason"].as_str()
        ),
        (Some("FAILED"), Some("DECLINED"))
    );
}

#[tokio::test]
async fn a_gateway_that_times_out_leaves_the_payment_unknown() {
    let gateway = stub_gateway(StatusCode::OK, json!({}), Duration::from_secs(5)).await;
    let origin = Origin::with_gateway(&gateway, Duration::from_millis(200)).await;
    let (status, payment) = origin.confirm(&order("order-1")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(payment["status"], "UNKNOWN");
    assert_eq!(origin.read("order-1").await.1["status"], "UNKNOWN");
}

#[tokio::test]
async fn a_gateway_5xx_leaves_the_payment_unknown() {
    let gateway = stub_gateway(StatusCode::INTERNAL_SERVER_ERROR, json!({}), Duration::ZERO).await;
    let origin = Origin::with_gateway(&gateway, Duration::from_secs(3)).await;
    let (status, payment) = origin.confirm(&order("order-1")).await;
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN"))
    );
}

#[tokio::test]
async fn a_gateway_that_cannot_be_reached_fails_the_payment_as_not_sent() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let origin = Origin::with_gateway(&closed, Duration::from_secs(3)).await;
    let (status, payment) = origin.confirm(&order("order-1")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(payment["failureReason"], "GATEWAY_UNREACHABLE");
}

#[tokio::test]
async fn bad_input_is_400_and_nothing_is_stored() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    let oversized = format!(
        r#"{{"orderId":"order-1","paymentKey":"k","amount":1,"pad":"{}"}}"#,
        "x".repeat(20_000)
    );
    let cases = [
        ("{", "INVALID_REQUEST"),
        (
            r#"{"orderId":"order-1","paymentKey":"k"}"#,
            "INVALID_REQUEST",
        ),
        (
            r#"{"orderId":"order-1","paymentKey":"k","amount":-1}"#,
            "INVALID_REQUEST",
        ),
        (
            r#"{"orderId":"order-1","paymentKey":"k","amount":true}"#,
            "INVALID_REQUEST",
        ),
        (oversized.as_str(), "BODY_TOO_LARGE"),
    ];
    for (body, code) in cases {
        let (status, error) = origin.confirm(body).await;
        assert_eq!(
            (status, error["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{body:.60}"
        );
    }
    let (status, error) = origin
        .send(signed("POST", "/payments/confirm", None, &order("order-1")))
        .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("IDEMPOTENCY_KEY_REQUIRED"))
    );
    assert_eq!(origin.read("order-1").await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn unsigned_requests_and_unknown_routes_get_json_errors() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    let unsigned = Request::post("/payments/confirm")
        .body(Body::from(order("order-1")))
        .unwrap();
    let (status, error) = origin.send(unsigned).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("SIGNATURE_INVALID"))
    );
    let (status, error) = origin
        .send(Request::get("/nowhere").body(Body::empty()).unwrap())
        .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("NOT_FOUND"))
    );
    let (status, error) = origin
        .send(
            Request::delete("/payments/confirm")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("METHOD_NOT_ALLOWED"))
    );
}

#[tokio::test]
async fn the_metrics_listener_counts_settled_payments() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    origin.confirm(&order("order-1")).await;
    let text = origin.metrics_text().await;
    assert!(
        text.contains(r#"origin_payments_total{status="APPROVED"} 1"#),
        "{text}"
    );
}

/// A client's made-up methods all count as one `OTHER` series: the metrics' labels are a
/// bounded set, whatever is sent.
#[tokio::test]
async fn made_up_methods_count_as_one_other_series() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    for n in 0..20 {
        let request = Request::builder()
            .method(format!("MADEUP{n}").as_str())
            .uri("/payments")
            .body(Body::empty())
            .unwrap();
        origin.send(request).await;
    }
    let text = origin.metrics_text().await;
    let series: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("origin_http_requests_total{"))
        .collect();
    assert!(!text.contains("MADEUP"), "{series:?}");
    let other: Vec<&&str> = series
        .iter()
        .filter(|line| line.contains("method=\"OTHER\""))
        .collect();
    assert_eq!(other.len(), 1, "{series:?}");
    assert!(other[0].ends_with(" 20"), "{other:?}");
}

/// A client that sends its body slowly holds no capacity slot while it does: with one
/// slot and such requests open — headers as a signed or an operator's request has them —
/// a read is still answered.
#[tokio::test]
async fn a_slow_body_holds_no_capacity_slot() {
    let guard = origin::guard::GuardConfig::default();
    let origin =
        std::sync::Arc::new(Origin::with_capacities(&simulator().await, guard, 1, 1).await);
    let stalled = || {
        let first = futures_util::stream::once(async {
            Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"{"))
        });
        Body::from_stream(futures_util::StreamExt::chain(
            first,
            futures_util::stream::pending(),
        ))
    };
    let mut held = Vec::new();
    // Each looks signed or authorised as far as its headers go; the body never ends.
    let requests = [
        ("/payments/confirm", "x-edge-signature", "00"),
        ("/internal/credentials/verify", "x-edge-signature", "00"),
        (
            "/admin/events",
            "authorization",
            &*format!("Bearer {OPERATOR_TOKEN}"),
        ),
    ];
    for (path, header, value) in requests {
        let request = Request::post(path)
            .header(header, value)
            .body(stalled())
            .unwrap();
        let origin = origin.clone();
        held.push(tokio::spawn(async move { origin.send(request).await }));
    }
    tokio::task::yield_now().await;
    for _ in 0..3 {
        let (status, body) = origin.read("no-such-order").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    }
    for request in held {
        request.abort();
    }
}

/// The operator routes are on their own listener only: the API answers them 404, and the
/// operator listener serves no API route.
#[tokio::test]
async fn operator_routes_live_on_their_own_listener() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    let operator_request = |path: &str| {
        Request::get(path)
            .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
            .body(Body::empty())
            .unwrap()
    };
    let on_api = origin
        .router
        .clone()
        .oneshot(operator_request("/admin/guard"))
        .await
        .unwrap();
    assert_eq!(on_api.status(), StatusCode::NOT_FOUND);
    let on_admin = origin
        .admin
        .clone()
        .oneshot(operator_request("/admin/guard"))
        .await
        .unwrap();
    assert_eq!(on_admin.status(), StatusCode::OK);
    let api_on_admin = origin
        .admin
        .clone()
        .oneshot(signed("GET", "/payments", None, ""))
        .await
        .unwrap();
    assert_eq!(api_on_admin.status(), StatusCode::NOT_FOUND);
}

/// Failed operator attempts are throttled per address: after ten wrong tokens, even the
/// right one is refused 429 from that address, for the rest of the minute.
#[tokio::test]
async fn failed_operator_attempts_are_throttled() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    let with_token = |token: &str| {
        Request::get("/admin/guard")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap()
    };
    for _ in 0..10 {
        let (status, body) = origin
            .send(with_token("guess-0123456789abcdef0123456789ab"))
            .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("OPERATOR_TOKEN_INVALID"))
        );
    }
    let refused = origin
        .admin
        .clone()
        .oneshot(with_token(OPERATOR_TOKEN))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: i64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
}
