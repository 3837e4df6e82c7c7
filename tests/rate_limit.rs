//! End to end: the per-user and global sliding windows on `POST /payments/confirm`,
//! with their 429s and `RateLimit` headers, through the edge in workerd.

use crate::support;

use std::time::Duration;

use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::json;
use support::{EdgeSetup, System};

/// A confirm of `order-{name}` (Toss takes order ids of 6 characters or more).
async fn confirm(system: &System, token: &str, name: &str) -> reqwest::Response {
    let order_id = format!("order-{name}");
    system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(token)
        .header("idempotency-key", &order_id)
        .json(
            &json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 1000 }),
        )
        .send()
        .await
        .expect("the edge answers")
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_user_past_the_limit_gets_429_with_the_headers_and_passes_again_after_retry_after() {
    let system = System::start().await;
    let token = system.token("user-1", 600);
    let burst = join_all((0..8).map(|i| {
        let (system, token) = (&system, &token);
        async move { confirm(system, token, &format!("burst-{i}")).await }
    }))
    .await;

    let (passed, refused): (Vec<_>, Vec<_>) = burst
        .iter()
        .partition(|r| r.status() == StatusCode::CREATED);
    assert_eq!((passed.len(), refused.len()), (5, 3));
    for response in &passed {
        assert_eq!(
            header(response, "ratelimit-policy"),
            r#""user";q=5;w=1, "global";q=100;w=1"#
        );
        assert!(
            header(response, "ratelimit").starts_with(r#""user";r="#),
            "{}",
            header(response, "ratelimit")
        );
    }
    let mut retry_after = 0;
    for response in &refused {
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        retry_after = header(response, "retry-after")
            .parse::<u64>()
            .expect("a Retry-After in seconds");
        assert_eq!(retry_after, 1);
        assert_eq!(
            header(response, "ratelimit-policy"),
            r#""user";q=5;w=1, "global";q=100;w=1"#
        );
        assert_eq!(header(response, "ratelimit"), r#""user";r=0;t=1"#);
    }
    let body: serde_json::Value = burst
        .into_iter()
        .find(|r| r.status() == 429)
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["code"], "RATE_LIMITED");

    let other = system.token("user-2", 600);
    assert_eq!(
        confirm(&system, &other, "other-1").await.status(),
        StatusCode::CREATED
    );

    // Retry-After is the wait the protocol asks for, not a synchronisation guess.
    tokio::time::sleep(Duration::from_secs(retry_after)).await;
    assert_eq!(
        confirm(&system, &token, "after-wait").await.status(),
        StatusCode::CREATED
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        7,
        "refused confirms never reached the PG"
    );
}

#[tokio::test]
async fn the_global_limit_caps_many_users_together() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("RATE_LIMIT_GLOBAL", "3/1m".into())],
        ..EdgeSetup::default()
    })
    .await;
    let tokens: Vec<String> = (0..6)
        .map(|i| system.token(&format!("user-{i}"), 600))
        .collect();
    let answers = join_all(tokens.iter().enumerate().map(|(i, token)| {
        let system = &system;
        async move { confirm(system, token, &format!("order-{i}")).await }
    }))
    .await;
    let refused: Vec<_> = answers
        .iter()
        .filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    assert_eq!(answers.len() - refused.len(), 3);
    for response in refused {
        assert_eq!(
            header(response, "ratelimit-policy"),
            r#""user";q=5;w=1, "global";q=3;w=60"#
        );
        assert!(header(response, "ratelimit").starts_with(r#""global";r=0;t="#));
        assert!(header(response, "retry-after")
            .parse::<u64>()
            .is_ok_and(|secs| (1..=60).contains(&secs)));
    }
    assert_eq!(system.ledger().await["requestCount"], 3);
}

#[tokio::test]
async fn a_request_the_global_limit_refuses_does_not_spend_the_users_quota() {
    let system = System::start_with(EdgeSetup {
        vars: vec![
            ("RATE_LIMIT_USER", "1/1m".into()),
            // Wide enough that "b" falls in "a"'s window after a's whole round trip.
            ("RATE_LIMIT_GLOBAL", "1/5s".into()),
        ],
        ..EdgeSetup::default()
    })
    .await;
    let (first, second) = (system.token("user-1", 600), system.token("user-2", 600));
    assert_eq!(
        confirm(&system, &first, "a").await.status(),
        StatusCode::CREATED
    );
    let refused = confirm(&system, &second, "b").await;
    assert!(header(&refused, "ratelimit").starts_with(r#""global";r=0"#));
    let wait: u64 = header(&refused, "retry-after")
        .parse()
        .expect("Retry-After");
    tokio::time::sleep(Duration::from_secs(wait)).await;
    // user-2's window (1 a minute) admitted "b" before the global window refused it; had
    // that admission not been given back, "c" would be refused by the user window.
    let admitted = confirm(&system, &second, "c").await;
    assert_eq!(
        admitted.status(),
        StatusCode::CREATED,
        "{}",
        header(&admitted, "ratelimit")
    );
    assert_eq!(system.ledger().await["requestCount"], 2);
}

#[tokio::test]
async fn a_window_known_to_be_full_refuses_before_any_object_call_and_counts_down() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("RATE_LIMIT_USER", "1/1m".into())],
        ..EdgeSetup::default()
    })
    .await;
    let token = system.token("user-1", 600);
    assert_eq!(
        confirm(&system, &token, "a").await.status(),
        StatusCode::CREATED
    );
    let refused = confirm(&system, &token, "b").await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let first_wait: u64 = header(&refused, "retry-after")
        .parse()
        .expect("Retry-After");
    assert_eq!(
        header(&refused, "ratelimit"),
        format!(r#""user";r=0;t={first_wait}"#)
    );

    // Revoked now: the session object would answer 401 TOKEN_REVOKED. The isolate knows
    // the window is full, so the confirm is refused before that object is asked.
    let logout = system
        .http
        .post(format!("{}/auth/logout", system.edge))
        .bearer_auth(&token)
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(logout.status(), StatusCode::NO_CONTENT);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let from_memory = confirm(&system, &token, "c").await;
    assert_eq!(from_memory.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = header(&from_memory, "retry-after")
        .parse()
        .expect("Retry-After");
    assert!(wait < first_wait, "{wait} counts down from {first_wait}");
    assert_eq!(
        header(&from_memory, "ratelimit"),
        format!(r#""user";r=0;t={wait}"#)
    );
    assert_eq!(
        header(&from_memory, "ratelimit-policy"),
        r#""user";q=1;w=60, "global";q=100;w=1"#
    );
    let body: serde_json::Value = from_memory.json().await.expect("a JSON body");
    assert_eq!(body["code"], "RATE_LIMITED");
    let me = system
        .http
        .get(format!("{}/auth/me", system.edge))
        .bearer_auth(&token)
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(
        me.status(),
        StatusCode::UNAUTHORIZED,
        "an unlimited route asks the object"
    );
    assert_eq!(system.ledger().await["requestCount"], 1);
}

#[tokio::test]
async fn unlimited_routes_carry_no_rate_limit_headers() {
    let system = System::start().await;
    let token = system.token("user-1", 600);
    for _ in 0..7 {
        let me = system
            .http
            .get(format!("{}/auth/me", system.edge))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(me.status(), StatusCode::OK);
        assert!(me.headers().get("ratelimit").is_none());
    }
}

/// With the session objects down and `DENYLIST_FAIL_MODE=open` (the default), the
/// denylist is skipped, not the user's window: it is counted apart, and a user past it is
/// still refused.
#[tokio::test]
async fn failing_open_on_the_denylist_keeps_the_users_window() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("RATE_LIMIT_USER", "2/1m".into())],
        session_objects_down: true,
        ..EdgeSetup::default()
    })
    .await;
    let token = system.token("user-1", 600);
    let mut statuses = Vec::new();
    for n in 0..4 {
        statuses.push(
            confirm(&system, &token, &format!("open-{n}"))
                .await
                .status(),
        );
    }
    assert_eq!(
        statuses,
        [
            StatusCode::CREATED,
            StatusCode::CREATED,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    let other = system.token("user-2", 600);
    assert_eq!(
        confirm(&system, &other, "open-other").await.status(),
        StatusCode::CREATED,
        "one user's window, not everyone's"
    );
}

/// A restart mid-work (kill -9): a window of at most 10 s lives in its object's memory
/// only, so it starts empty and admits at most its limit more — its limit plus what it
/// had admitted before; a longer one is stored, and holds its bound across the restart.
#[tokio::test]
async fn a_restart_forgets_a_short_window_and_keeps_a_long_one() {
    let mut system = System::start_with(EdgeSetup {
        vars: vec![
            ("RATE_LIMIT_USER", "2/10s".into()),
            ("RATE_LIMIT_GLOBAL", "4/1m".into()),
        ],
        ..EdgeSetup::default()
    })
    .await;
    let token = system.token("user-1", 600);
    let mut statuses = Vec::new();
    for n in 0..3 {
        statuses.push(
            confirm(&system, &token, &format!("before-{n}"))
                .await
                .status(),
        );
    }
    system.kill("edge");
    system.start_edge_again().await;
    for n in 0..3 {
        statuses.push(
            confirm(&system, &token, &format!("after-{n}"))
                .await
                .status(),
        );
    }
    let (created, limited) = (StatusCode::CREATED, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        statuses,
        [created, created, limited, created, created, limited],
        "the user's 10 s window starts again empty, and fills at its limit"
    );
    let other = system.token("user-2", 600);
    let refused = confirm(&system, &other, "other-1").await;
    assert_eq!(refused.status(), limited, "the global minute still holds 4");
    assert!(header(&refused, "ratelimit").starts_with(r#""global";r=0"#));
}
