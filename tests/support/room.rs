//! The edge's waiting-room routes as a client calls them, for the queue's tests.

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::Value;

use super::{EdgeSetup, System};

/// A system whose edge runs with `vars` over the harness's own.
pub async fn start(vars: &[(&'static str, &str)]) -> System {
    let vars = vars
        .iter()
        .map(|(name, value)| (*name, (*value).to_owned()))
        .collect();
    System::start_with(EdgeSetup {
        vars,
        ..EdgeSetup::default()
    })
    .await
}

/// `POST /payments/confirm` at the edge for 1000, in `event` if any, keyed by the order.
pub async fn confirm(
    system: &System,
    token: &str,
    order_id: &str,
    event: Option<&str>,
) -> reqwest::Response {
    let mut body = serde_json::json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 1000 });
    if let Some(event) = event {
        body["eventId"] = serde_json::json!(event);
    }
    system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(token)
        .header("idempotency-key", order_id)
        .json(&body)
        .send()
        .await
        .expect("the edge answers")
}

pub async fn queue_call(
    system: &System,
    token: &str,
    method: reqwest::Method,
    path: &str,
) -> reqwest::Response {
    system
        .http
        .request(method, format!("{}/queue/{path}", system.edge))
        .bearer_auth(token)
        .header("accept", "application/json")
        .send()
        .await
        .expect("the edge answers")
}

pub async fn enter(system: &System, token: &str, event: &str) -> Value {
    let response = queue_call(
        system,
        token,
        reqwest::Method::POST,
        &format!("{event}/enter"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

pub async fn status(system: &System, token: &str, event: &str) -> reqwest::Response {
    queue_call(
        system,
        token,
        reqwest::Method::GET,
        &format!("{event}/status"),
    )
    .await
}

pub async fn leave(system: &System, token: &str, event: &str) {
    let response = queue_call(
        system,
        token,
        reqwest::Method::POST,
        &format!("{event}/leave"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

/// Polls the user's status in `event` until `done` holds (20 s at most): the edge tells a
/// room some things once an answer has left, so they may trail it by a moment.
pub async fn status_until(
    system: &System,
    token: &str,
    event: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    eventually(
        "the room got there",
        Duration::from_secs(20),
        Duration::from_millis(100),
        || async {
            let now: Value = status(system, token, event)
                .await
                .json()
                .await
                .expect("JSON");
            if done(&now) {
                Ok(now)
            } else {
                Err(now.to_string())
            }
        },
    )
    .await
}
