//! End to end: a payment confirm from a client, through the edge in workerd, signed to
//! the origin, to the gateway simulator, and back.

use crate::support;

use harness::signed::now_ms;
use reqwest::StatusCode;
use rules::signing::SignedRequest;
use serde_json::{json, Value};
use support::{EdgeSetup, System};

const NONCE_A: &str = "0123456789abcdef0123456789abcdef";
const NONCE_B: &str = "fedcba9876543210fedcba9876543210";

fn confirm_body(order_id: &str) -> Value {
    json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 15000 })
}

/// A confirm for `user-1` with key `key-1`, signed now with nonce [`NONCE_A`].
fn signed_confirm(body: &[u8]) -> SignedRequest<'_> {
    SignedRequest {
        method: "POST",
        path_and_query: "/payments/confirm",
        timestamp_ms: now_ms(),
        nonce: NONCE_A,
        user_id: "user-1",
        idempotency_key: "key-1",
        request_id: "",
        pass: "",
        body,
    }
}

async fn confirm(system: &System, token: &str, key: &str, body: &str) -> reqwest::Response {
    system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("the edge answers")
}

async fn error_code(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON error body");
    assert!(body["message"].is_string(), "{body}");
    (status, body["code"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn a_confirm_through_the_edge_is_approved_and_readable_back() {
    let system = System::start().await;
    let token = system.token("user-1", 600);

    let response = confirm(
        &system,
        &token,
        "key-1",
        &confirm_body("order-1").to_string(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let payment: Value = response.json().await.unwrap();
    assert_eq!(payment["status"], "APPROVED");
    assert_eq!(payment["orderId"], "order-1");
    assert_eq!(payment["amount"], 15000);
    assert!(
        payment.get("paymentKey").is_none(),
        "the payment key is never shown"
    );

    let read = system
        .http
        .get(format!("{}/payments/order-1", system.edge))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(read.json::<Value>().await.unwrap(), payment);

    let ledger = system.ledger().await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["approvals"].as_array().unwrap().len(), 1);
    assert_eq!(ledger["approvals"][0]["orderId"], "order-1");
}

#[tokio::test]
async fn a_payment_is_readable_only_by_its_owner_and_an_order_is_paid_once() {
    let system = System::start().await;
    let owner = system.token("user-1", 600);
    let body = confirm_body("order-2").to_string();
    assert_eq!(
        confirm(&system, &owner, "key-1", &body).await.status(),
        StatusCode::CREATED
    );

    let again = confirm(&system, &owner, "key-2", &body).await;
    assert_eq!(
        error_code(again).await,
        (StatusCode::CONFLICT, "ORDER_EXISTS".into())
    );

    let stranger = system.token("user-2", 600);
    let read = system
        .http
        .get(format!("{}/payments/order-2", system.edge))
        .bearer_auth(&stranger)
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_code(read).await,
        (StatusCode::NOT_FOUND, "PAYMENT_NOT_FOUND".into())
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        1,
        "the duplicate never reached the PG"
    );
}

#[tokio::test]
async fn requests_without_a_valid_token_are_refused_at_the_edge() {
    let system = System::start().await;
    let body = confirm_body("order-3").to_string();
    let url = format!("{}/payments/confirm", system.edge);

    let missing = system
        .http
        .post(&url)
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        error_code(missing).await,
        (StatusCode::UNAUTHORIZED, "TOKEN_MISSING".into())
    );

    let expired = system.token("user-1", -1);
    let forged = format!("{}x", system.token("user-1", 600));
    for token in [expired.as_str(), forged.as_str(), "not-a-token"] {
        let refused = confirm(&system, token, "key-1", &body).await;
        assert_eq!(
            error_code(refused).await,
            (StatusCode::UNAUTHORIZED, "TOKEN_INVALID".into())
        );
    }
    assert_eq!(system.ledger().await["requestCount"], 0);
}

#[tokio::test]
async fn bad_input_gets_400_at_the_edge_and_nothing_is_stored() {
    // Eight requests by one user: the rate limit (which counts bad requests too) is off.
    let system = System::start_with(EdgeSetup {
        vars: vec![("RATE_LIMITED_ROUTES", "none".into())],
        ..EdgeSetup::default()
    })
    .await;
    let token = system.token("user-1", 600);
    let oversized =
        json!({ "orderId": "o", "paymentKey": "k", "amount": 1, "pad": "x".repeat(20_000) });
    let cases = [
        ("{not json".to_owned(), "INVALID_REQUEST"),
        (
            r#"{"orderId":"o","amount":1}"#.to_owned(),
            "INVALID_REQUEST",
        ),
        (
            r#"{"orderId":"o","paymentKey":"k","amount":"1"}"#.to_owned(),
            "INVALID_REQUEST",
        ),
        (
            r#"{"orderId":"o","paymentKey":"k","amount":0}"#.to_owned(),
            "INVALID_REQUEST",
        ),
        (
            r#"{"orderId":"o","paymentKey":"k","amount":-5}"#.to_owned(),
            "INVALID_REQUEST",
        ),
        (oversized.to_string(), "BODY_TOO_LARGE"),
    ];
    for (body, code) in cases {
        let refused = confirm(&system, &token, "key-1", &body).await;
        assert_eq!(
            error_code(refused).await,
            (StatusCode::BAD_REQUEST, code.into()),
            "{body:.80}"
        );
    }
    let no_key = system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(&token)
        .body(confirm_body("o").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_code(no_key).await,
        (StatusCode::BAD_REQUEST, "IDEMPOTENCY_KEY_REQUIRED".into())
    );

    let read = system
        .http
        .get(format!("{}/payments/o", system.edge))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::NOT_FOUND);
    assert_eq!(system.ledger().await["requestCount"], 0);
}

#[tokio::test]
async fn a_direct_unsigned_call_to_the_origin_is_refused() {
    let system = System::start().await;
    let unsigned = system
        .http
        .post(format!("{}/payments/confirm", system.origin))
        .header("x-edge-user", "user-1")
        .header("idempotency-key", "key-1")
        .body(confirm_body("order-4").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_code(unsigned).await,
        (StatusCode::UNAUTHORIZED, "SIGNATURE_INVALID".into())
    );
    assert_eq!(system.ledger().await["requestCount"], 0);
}

#[tokio::test]
async fn a_replayed_stale_or_tampered_signed_request_is_refused() {
    let system = System::start().await;
    let body = confirm_body("order-5").to_string();
    let signed = |timestamp_ms: i64, nonce: &str| {
        system.signed_origin_request(SignedRequest {
            timestamp_ms,
            nonce,
            ..signed_confirm(body.as_bytes())
        })
    };

    let stale = signed(now_ms() - 31_000, NONCE_B).send().await.unwrap();
    assert_eq!(
        error_code(stale).await,
        (StatusCode::UNAUTHORIZED, "SIGNATURE_INVALID".into())
    );
    let tampered = signed(now_ms(), NONCE_B)
        .body(confirm_body("order-6").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_code(tampered).await,
        (StatusCode::UNAUTHORIZED, "SIGNATURE_INVALID".into())
    );
    let second_user = signed(now_ms(), NONCE_B)
        .header("x-edge-user", "user-2")
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_code(second_user).await,
        (StatusCode::UNAUTHORIZED, "SIGNATURE_INVALID".into())
    );

    let timestamp = now_ms();
    let first = signed(timestamp, NONCE_A).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::CREATED);
    let replay = signed(timestamp, NONCE_A).send().await.unwrap();
    assert_eq!(
        error_code(replay).await,
        (StatusCode::UNAUTHORIZED, "SIGNATURE_INVALID".into())
    );
    assert_eq!(system.ledger().await["requestCount"], 1);
}

#[tokio::test]
async fn bad_input_signed_by_the_edge_gets_400_at_the_origin() {
    let system = System::start().await;
    for (nonce, body) in [
        (NONCE_A, "{not json"),
        (NONCE_B, r#"{"orderId":"o","paymentKey":"k","amount":0}"#),
    ] {
        let refused = system
            .signed_origin_request(SignedRequest {
                nonce,
                ..signed_confirm(body.as_bytes())
            })
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_code(refused).await,
            (StatusCode::BAD_REQUEST, "INVALID_REQUEST".into())
        );
    }
    assert_eq!(system.ledger().await["requestCount"], 0);
}

#[tokio::test]
async fn an_origin_that_is_down_is_a_502_from_the_edge() {
    let mut system = System::start().await;
    system.kill("origin");
    let token = system.token("user-1", 600);
    let refused = confirm(
        &system,
        &token,
        "key-1",
        &confirm_body("order-7").to_string(),
    )
    .await;
    assert_eq!(
        error_code(refused).await,
        (StatusCode::BAD_GATEWAY, "ORIGIN_UNAVAILABLE".into())
    );
}

/// Two origin instances on one PostgreSQL database share the nonces they have seen: a
/// signed request replayed to the other instance within its freshness is refused.
#[tokio::test]
async fn a_signed_request_replayed_to_another_instance_is_refused() {
    let system = System::backend_on_postgres(&[]).await;
    let second = system.second_origin.clone().expect("a second instance");
    let nonce = format!("{:032x}", now_ms());
    let request = || SignedRequest {
        method: "GET",
        path_and_query: "/payments",
        timestamp_ms: now_ms(),
        nonce: &nonce,
        user_id: "user-1",
        idempotency_key: "",
        request_id: "",
        pass: "",
        body: b"",
    };
    let first = system
        .signed_request_to(&system.origin, request())
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    for base in [&second, &system.origin] {
        let replayed = system
            .signed_request_to(base, request())
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_code(replayed).await,
            (StatusCode::UNAUTHORIZED, "SIGNATURE_INVALID".into()),
            "{base}"
        );
    }
}
