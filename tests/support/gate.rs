//! The payment gate's tests' calls: a confirm with its own key and amount, and what its
//! answer and the origin's records say.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::System;

/// `POST /payments/confirm` at the edge: `amount` for `order_id` in `event`, under `key`.
pub async fn confirm(
    system: &System,
    token: &str,
    key: &str,
    order_id: &str,
    amount: i64,
    event: &str,
) -> reqwest::Response {
    let body = json!({
        "orderId": order_id,
        "paymentKey": format!("pk-{order_id}"),
        "amount": amount,
        "eventId": event,
    });
    system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .json(&body)
        .send()
        .await
        .expect("the edge answers")
}

/// `answer` is `first` again, with `status`, replayed from the origin's record.
pub async fn assert_replayed(answer: reqwest::Response, status: StatusCode, first: &Value) {
    assert_eq!(answer.status(), status, "not QUEUE_PASS_REQUIRED");
    assert_eq!(
        answer
            .headers()
            .get("idempotent-replayed")
            .map(|v| v.as_bytes()),
        Some(&b"true"[..])
    );
    assert_eq!(&answer.json::<Value>().await.expect("a JSON body"), first);
}

/// The answer's status and error code (empty when it has none).
pub async fn code(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    (status, body["code"].as_str().unwrap_or_default().to_owned())
}

/// Whether the origin holds a payment of `user` for `order_id`.
pub async fn has_payment(system: &System, user: &str, order_id: &str) -> bool {
    let response = system
        .origin_get(user, &format!("/payments/{order_id}"))
        .await;
    response.status() == StatusCode::OK
}
