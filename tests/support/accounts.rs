//! The edge's sign-in routes as a client calls them, for the tests of logins, sessions
//! and their ends: login, refresh, who-am-I, logout, and the error code of an answer.

use reqwest::StatusCode;
use serde_json::{json, Value};

use super::System;

pub const PASSWORD: &str = "correct horse battery staple";

pub struct Pair {
    pub access: String,
    pub refresh: String,
}

pub async fn post(system: &System, path: &str, body: Value) -> reqwest::Response {
    system
        .http
        .post(format!("{}{path}", system.edge))
        .json(&body)
        .send()
        .await
        .expect("the edge answers")
}

pub async fn login(system: &System, username: &str, password: &str) -> reqwest::Response {
    post(
        system,
        "/auth/login",
        json!({ "username": username, "password": password }),
    )
    .await
}

pub async fn refresh(system: &System, refresh_token: &str) -> reqwest::Response {
    post(
        system,
        "/auth/refresh",
        json!({ "refreshToken": refresh_token }),
    )
    .await
}

pub async fn pair(response: reqwest::Response) -> Pair {
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["tokenType"], "Bearer");
    assert_eq!(body["expiresIn"], 1800);
    Pair {
        access: body["accessToken"].as_str().unwrap().to_owned(),
        refresh: body["refreshToken"].as_str().unwrap().to_owned(),
    }
}

pub async fn me(system: &System, access: &str) -> reqwest::Response {
    system
        .http
        .get(format!("{}/auth/me", system.edge))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
}

pub async fn logout(system: &System, access: &str) -> reqwest::Response {
    system
        .http
        .post(format!("{}/auth/logout", system.edge))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
}

pub async fn code(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    (status, body["code"].as_str().unwrap_or_default().to_owned())
}

pub fn refused(code: &str) -> (StatusCode, String) {
    (StatusCode::UNAUTHORIZED, code.to_owned())
}
