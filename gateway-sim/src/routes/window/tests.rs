//! The imitation window, driven through the router as a browser and the
//! payment system would.

use axum::body::{to_bytes, Body};
use axum::http::{header, Request, StatusCode};
use axum::response::Response;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use reqwest::Url;
use tower::ServiceExt as _;

use crate::config::DEFAULT_SECRET_KEY;
use crate::{app, SimState};

const ORDER: &str = "clientKey=test_ck_abc&method=CARD&currency=KRW&amount=5000\
    &orderId=order-123&orderName=Spring%20%3Cdrop%3E\
    &successUrl=http%3A%2F%2F127.0.0.1%3A9%2Fcheckout%2Fev%3Fa%3D1\
    &failUrl=https%3A%2F%2Fshop.example%2Ffail";

async fn send(state: &SimState, request: Request<Body>) -> (Response, String) {
    let response = app(state.clone())
        .oneshot(request)
        .await
        .expect("the router answers");
    let (parts, body) = response.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.expect("a body");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (Response::from_parts(parts, Body::empty()), text)
}

async fn open(state: &SimState, query: &str) -> (Response, String) {
    let request = Request::get(format!("/window?{query}")).body(Body::empty());
    send(state, request.expect("a request")).await
}

/// A button's form posted; where it sends the buyer.
async fn press(state: &SimState, button: &str, form: &str) -> Url {
    let request = Request::post(format!("/window/{button}"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(form.to_owned()));
    let (response, _) = send(state, request.expect("a request")).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = response.headers()[header::LOCATION].to_str().expect("text");
    Url::parse(location).expect("an absolute URL")
}

fn param(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

async fn confirm(state: &SimState, payment_key: &str, amount: u64) -> (StatusCode, String) {
    let body =
        serde_json::json!({"paymentKey": payment_key, "orderId": "order-123", "amount": amount});
    let basic = STANDARD.encode(format!("{DEFAULT_SECRET_KEY}:"));
    let request = Request::post("/v1/payments/confirm")
        .header(header::AUTHORIZATION, format!("Basic {basic}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header("idempotency-key", format!("{payment_key}-{amount}"))
        .body(Body::from(body.to_string()));
    let (response, text) = send(state, request.expect("a request")).await;
    (response.status(), text)
}

#[tokio::test]
async fn the_window_shows_the_order_with_pay_and_cancel_under_its_own_policy() {
    let (response, page) = open(&SimState::default(), ORDER).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(page.contains("Spring &lt;drop&gt;"), "{page}");
    assert!(page.contains("₩5,000"), "{page}");
    assert!(page.contains(">Pay</button>") && page.contains(">Cancel</button>"));
    let policy = response.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .expect("text");
    assert!(
        policy.contains("form-action 'self' http://127.0.0.1:9 https://shop.example"),
        "{policy}"
    );
    assert!(!policy.contains("unsafe-inline"), "{policy}");
}

#[tokio::test]
async fn return_urls_that_are_not_http_are_refused() {
    let state = SimState::default();
    for bad in ["javascript%3Aalert(1)", "ftp%3A%2F%2Fx%2F", "%2Frelative"] {
        let query = ORDER.replace("https%3A%2F%2Fshop.example%2Ffail", bad);
        let (response, body) = open(&state, &query).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
        assert!(body.contains("failUrl"), "{body}");
    }
}

#[tokio::test]
async fn pay_returns_to_the_success_url_with_a_fresh_key_which_confirms_that_amount_only() {
    let state = SimState::default();
    let success = press(&state, "pay", ORDER).await;
    assert_eq!(success.path(), "/checkout/ev");
    let key = param(&success, "paymentKey").expect("a paymentKey");
    assert!(key.starts_with("tviva"), "{key}");
    assert_eq!(
        param(&success, "a").as_deref(),
        Some("1"),
        "its own query kept"
    );
    assert_eq!(param(&success, "orderId").as_deref(), Some("order-123"));
    assert_eq!(param(&success, "amount").as_deref(), Some("5000"));
    assert_eq!(param(&success, "paymentType").as_deref(), Some("NORMAL"));
    let again = press(&state, "pay", ORDER).await;
    assert_ne!(
        param(&again, "paymentKey"),
        Some(key.clone()),
        "a key per payment"
    );

    let (status, body) = confirm(&state, &key, 4000).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.contains("INVALID_REQUEST") && body.contains("5000"),
        "{body}"
    );
    let (status, body) = confirm(&state, &key, 5000).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains(r#""status":"DONE""#), "{body}");
}

#[tokio::test]
async fn a_key_the_window_never_issued_is_still_confirmed() {
    let (status, body) = confirm(&SimState::default(), "pk-made-up", 700).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn cancel_returns_to_the_fail_url_as_toss_does() {
    let fail = press(&SimState::default(), "cancel", ORDER).await;
    assert_eq!(
        fail.as_str().split('?').next(),
        Some("https://shop.example/fail")
    );
    assert_eq!(
        param(&fail, "code").as_deref(),
        Some("PAY_PROCESS_CANCELED")
    );
    assert_eq!(param(&fail, "orderId").as_deref(), Some("order-123"));
    assert!(param(&fail, "message").is_some_and(|m| !m.is_empty()));
}
