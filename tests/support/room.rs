//! The edge's waiting-room routes as a client calls them, for the queue's tests.

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
