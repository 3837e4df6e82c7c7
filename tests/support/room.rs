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

/// `GET /queue/{event}/status` with the user's ticket: answered from the room's snapshot.
pub async fn ticket_poll(
    system: &System,
    token: &str,
    event: &str,
    ticket: &str,
) -> reqwest::Response {
    system
        .http
        .get(format!("{}/queue/{event}/status", system.edge))
        .bearer_auth(token)
        .header("queue-ticket", ticket)
        .send()
        .await
        .expect("the edge answers")
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

/// Polls `event` with `ticket` until its answer satisfies `done` (30 s at most).
pub async fn ticket_poll_until(
    system: &System,
    token: &str,
    event: &str,
    ticket: &str,
    done: fn(&Value) -> bool,
) {
    eventually(
        "the ticket's place",
        Duration::from_secs(30),
        Duration::from_millis(50),
        || async {
            let placed: Value = ticket_poll(system, token, event, ticket)
                .await
                .json()
                .await
                .map_err(|err| err.to_string())?;
            done(&placed).then_some(()).ok_or(placed.to_string())
        },
    )
    .await;
}

/// Defines `event` with the operator's `POST /admin/events`, which must take it.
pub async fn define(system: &System, event: Value) {
    let (status, body) = system.set_event(event).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// An operator's call to the origin's `/admin/events{path}`: its status and JSON body.
pub async fn admin(system: &System, method: reqwest::Method, path: &str) -> (StatusCode, Value) {
    let url = format!("{}/admin/events{path}", system.origin_admin);
    system.operator_call(system.http.request(method, url)).await
}

/// The room of `event` as the origin reports it to operators.
pub async fn room_status(system: &System, event: &str) -> Value {
    let (status, body) = admin(system, reqwest::Method::GET, &format!("/{event}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["roomStatus"].clone()
}

/// Every user's answer, 25 at a time.
pub async fn each<F, Fut>(tokens: &[String], call: F) -> Vec<Value>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut answers = Vec::new();
    for chunk in tokens.chunks(25) {
        let calls = chunk.iter().map(|token| call(token.clone()));
        answers.extend(futures_util::future::join_all(calls).await);
    }
    answers
}

/// An edge's `/healthz`: what its isolate counted.
pub async fn health(system: &System, edge: &str) -> Value {
    let answer = system
        .http
        .get(format!("{edge}/healthz"))
        .send()
        .await
        .expect("the edge answers");
    answer.json().await.expect("JSON")
}

/// One of `/healthz`'s counts.
pub fn count(health: &Value, name: &str) -> u64 {
    health[name]
        .as_u64()
        .unwrap_or_else(|| panic!("no {name} in {health}"))
}
