//! End to end: `POST /auth/login` throttled at the edge, per username and per client
//! address (`CF-Connecting-IP`), every attempt counted, failed or not; and a login flood
//! that leaves other users' confirms answered as ever.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use support::{order_body, EdgeSetup, System};

const PASSWORD: &str = "correct horse battery staple";

async fn attempt(system: &System, username: &str, password: &str, from: &str) -> reqwest::Response {
    system
        .http
        .post(format!("{}/auth/login", system.edge))
        .header("cf-connecting-ip", from)
        .json(&json!({ "username": username, "password": password }))
        .send()
        .await
        .expect("the edge answers")
}

async fn with_login_limits(user: &str, client: &str) -> System {
    System::start_with(EdgeSetup {
        vars: vec![
            ("LOGIN_RATE_LIMIT_USER", user.to_owned()),
            ("LOGIN_RATE_LIMIT_CLIENT", client.to_owned()),
        ],
        ..EdgeSetup::default()
    })
    .await
}

/// A refusal of the login windows, with what a client needs to come back.
fn assert_limited(response: &reqwest::Response, window: &str) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let headers = response.headers();
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
    let policy = headers["ratelimit-policy"].to_str().unwrap();
    assert!(policy.contains("\"login-user\";q="), "{policy}");
    assert!(policy.contains("\"login-client\";q="), "{policy}");
    let limit = headers["ratelimit"].to_str().unwrap();
    assert!(
        limit.starts_with(&format!("\"{window}\";r=0;t=")),
        "{limit}"
    );
}

/// 200 attempts on one username in 2 s, each from an address of its own and most with a
/// wrong password: the username's window lets 10 through, however the addresses vary.
/// Meanwhile other users' confirms are answered as ever — no 503.
#[tokio::test]
async fn a_login_flood_on_one_name_gets_its_window_and_confirms_go_on() {
    let system = with_login_limits("10/1m", "1000/1m").await;
    system.add_user("victim", PASSWORD);
    let flood: Vec<_> = (0..200u32)
        .map(|n| {
            let (system_edge, http) = (system.edge.clone(), system.http.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(u64::from(n) * 10)).await;
                let password = if n % 20 == 0 { PASSWORD } else { "guess" };
                let response = http
                    .post(format!("{system_edge}/auth/login"))
                    .header(
                        "cf-connecting-ip",
                        format!("198.51.{}.{}", n / 256, n % 256),
                    )
                    .json(&json!({ "username": "Victim", "password": password }))
                    .send()
                    .await
                    .expect("the edge answers");
                if response.status() == StatusCode::TOO_MANY_REQUESTS {
                    assert_limited(&response, "login-user");
                }
                response.status().as_u16()
            })
        })
        .collect();
    let mut confirms = Vec::new();
    for n in 0..10 {
        let token = system.token(&format!("buyer-{n}"), 600);
        let response = system
            .http
            .post(format!("{}/payments/confirm", system.edge))
            .bearer_auth(token)
            .header("idempotency-key", format!("flood-{n}"))
            .header("content-type", "application/json")
            .body(order_body(&format!("flood-order-{n}")))
            .send()
            .await
            .expect("the edge answers");
        confirms.push(response.status().as_u16());
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let mut answered = BTreeMap::new();
    for attempt in flood {
        *answered.entry(attempt.await.unwrap()).or_insert(0u32) += 1;
    }
    let through: u32 = answered
        .iter()
        .filter(|(status, _)| **status != 429)
        .map(|(_, count)| count)
        .sum();
    println!("200 attempts in 2 s: {answered:?}; confirms meanwhile: {confirms:?}");
    assert!(through <= 10, "past the window: {answered:?}");
    assert!(
        through >= 1,
        "the window lets its share through: {answered:?}"
    );
    assert_eq!(
        confirms,
        vec![201; 10],
        "confirms during the flood: 201 APPROVED"
    );
}

/// One address trying many names is held by its own window; another address is not.
#[tokio::test]
async fn one_address_trying_many_names_is_held_by_its_window() {
    let system = with_login_limits("10/1m", "5/1m").await;
    for n in 0..5 {
        let response = attempt(&system, &format!("name-{n}"), "guess", "203.0.113.9").await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "attempt {n}");
        let limit = response.headers()["ratelimit"].to_str().unwrap().to_owned();
        assert!(
            limit.starts_with(&format!("\"login-client\";r={};", 4 - n)),
            "{limit}"
        );
    }
    let refused = attempt(&system, "name-5", "guess", "203.0.113.9").await;
    assert_limited(&refused, "login-client");
    let elsewhere = attempt(&system, "name-5", "guess", "203.0.113.10").await;
    assert_eq!(elsewhere.status(), StatusCode::UNAUTHORIZED);
}

/// Successful logins count too, and the name is counted as the origin reads it: `Demo`
/// and `demo` are one window.
#[tokio::test]
async fn successful_logins_count_and_names_are_counted_normalised() {
    let system = with_login_limits("3/1m", "100/1m").await;
    system.add_user("demo", PASSWORD);
    for name in ["demo", "Demo", "DEMO"] {
        let response = attempt(&system, name, PASSWORD, "203.0.113.20").await;
        assert_eq!(response.status(), StatusCode::OK, "{name}");
    }
    let fourth = attempt(&system, "demo", PASSWORD, "203.0.113.21").await;
    assert_limited(&fourth, "login-user");
    let other = attempt(&system, "someone-else", "guess", "203.0.113.21").await;
    assert_eq!(
        other.status(),
        StatusCode::UNAUTHORIZED,
        "other names are apart"
    );
}
