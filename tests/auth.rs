//! End to end: login, who-am-I, refresh rotation with reuse detection, logout, and the
//! denylist's fail modes, through the edge in workerd and the origin's credential check.

use crate::support;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::accounts::{code, login, logout, me, pair, post, refresh, refused, PASSWORD};
use support::{EdgeSetup, System};

#[tokio::test]
async fn a_session_from_login_through_refresh_reuse_to_logout() {
    let system = System::start().await;
    let alice = system.add_user("alice", PASSWORD);

    let first = pair(login(&system, "Alice", PASSWORD).await).await;
    let who: Value = me(&system, &first.access).await.json().await.unwrap();
    assert_eq!(who["sub"], alice.as_str());
    assert!(who["jti"].as_str().is_some_and(|jti| jti.len() == 32));
    assert!(who["exp"].is_i64());

    let second = pair(refresh(&system, &first.refresh).await).await;
    assert_eq!(me(&system, &second.access).await.status(), StatusCode::OK);

    // The first refresh token comes back: someone else holds the family.
    assert_eq!(
        code(refresh(&system, &first.refresh).await).await,
        refused("REFRESH_REUSED")
    );
    assert_eq!(
        code(refresh(&system, &second.refresh).await).await,
        refused("REFRESH_INVALID")
    );
    assert_eq!(
        code(me(&system, &second.access).await).await,
        refused("TOKEN_REVOKED")
    );

    let third = pair(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(
        logout(&system, &third.access).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        code(me(&system, &third.access).await).await,
        refused("TOKEN_REVOKED")
    );
    assert_eq!(
        code(logout(&system, &third.access).await).await,
        refused("TOKEN_REVOKED")
    );
    assert_eq!(
        code(refresh(&system, &third.refresh).await).await,
        refused("REFRESH_INVALID")
    );
}

#[tokio::test]
async fn two_concurrent_refreshes_with_one_token_succeed_once() {
    let system = System::start().await;
    system.add_user("alice", PASSWORD);
    let first = pair(login(&system, "alice", PASSWORD).await).await;
    let (a, b) = tokio::join!(
        refresh(&system, &first.refresh),
        refresh(&system, &first.refresh)
    );
    let mut statuses = [a.status(), b.status()];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::UNAUTHORIZED]);
}

#[tokio::test]
async fn wrong_passwords_unknown_users_and_bad_bodies_are_refused() {
    let system = System::start().await;
    system.add_user("alice", PASSWORD);
    let invalid = refused("INVALID_CREDENTIALS");
    assert_eq!(code(login(&system, "alice", "wrong").await).await, invalid);
    assert_eq!(
        code(login(&system, "mallory", PASSWORD).await).await,
        invalid
    );
    let bad = (StatusCode::BAD_REQUEST, "INVALID_REQUEST".to_owned());
    assert_eq!(
        code(post(&system, "/auth/login", json!({ "username": "alice" })).await).await,
        bad
    );
    assert_eq!(
        code(post(&system, "/auth/refresh", json!({})).await).await,
        bad
    );
    for token in ["", "rt1.x.y", "not-a-refresh-token"] {
        assert_eq!(
            code(refresh(&system, token).await).await,
            refused("REFRESH_INVALID")
        );
    }
    assert_eq!(
        code(me(&system, "not-a-token").await).await,
        refused("TOKEN_INVALID")
    );
}

#[tokio::test]
async fn issuer_and_audience_are_minted_and_required_when_configured() {
    let system = System::start_with(EdgeSetup {
        vars: vec![
            ("JWT_ISSUER", "https://edge.example".into()),
            ("JWT_AUDIENCE", "payments".into()),
        ],
        ..EdgeSetup::default()
    })
    .await;
    system.add_user("alice", PASSWORD);
    let minted = pair(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(me(&system, &minted.access).await.status(), StatusCode::OK);
    let without_iss_and_aud = system.token("alice", 600);
    assert_eq!(
        code(me(&system, &without_iss_and_aud).await).await,
        refused("TOKEN_INVALID")
    );
}

#[tokio::test]
async fn an_unavailable_denylist_fails_open_by_default() {
    let system = System::start_with(EdgeSetup {
        sessions_down: true,
        ..EdgeSetup::default()
    })
    .await;
    let token = system.token("user-1", 600);
    assert_eq!(me(&system, &token).await.status(), StatusCode::OK);
    system.add_user("alice", PASSWORD);
    let (status, code) = code(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "SESSION_UNAVAILABLE")
    );
}

#[tokio::test]
async fn an_unavailable_denylist_fails_closed_when_configured() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("DENYLIST_FAIL_MODE", "closed".into())],
        sessions_down: true,
        ..EdgeSetup::default()
    })
    .await;
    let token = system.token("user-1", 600);
    let (status, code) = code(me(&system, &token).await).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "DENYLIST_UNAVAILABLE")
    );
}

/// A refresh token the edge did not issue — any user id, any family, any MAC, or the
/// unMACed format of old — is refused before any object is called: with every object
/// down, still 401 `REFRESH_INVALID`, never the 503 of a call that failed.
#[tokio::test]
async fn a_forged_refresh_token_is_refused_without_an_object_call() {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    let system = System::start_with(EdgeSetup {
        sessions_down: true,
        ..EdgeSetup::default()
    })
    .await;
    let user = URL_SAFE_NO_PAD.encode("usr_victim");
    let secret = URL_SAFE_NO_PAD.encode([7u8; 32]);
    for forged in [
        format!("rt1.{user}.{secret}"),
        format!(
            "rt2.{user}.0123abcd.{secret}.{}",
            URL_SAFE_NO_PAD.encode([9u8; 16])
        ),
    ] {
        assert_eq!(
            code(refresh(&system, &forged).await).await,
            refused("REFRESH_INVALID"),
            "{forged}"
        );
    }
}

/// One login's tokens refresh at most `REFRESH_RATE_LIMIT_FAMILY` times a window; the
/// next is 429 with the window's headers, and another login's family is apart.
#[tokio::test]
async fn a_login_refreshes_its_share_of_the_window_and_no_more() {
    let system = System::start_with(EdgeSetup {
        vars: vec![("REFRESH_RATE_LIMIT_FAMILY", "2/1m".into())],
        ..EdgeSetup::default()
    })
    .await;
    system.add_user("alice", PASSWORD);
    let first = pair(login(&system, "alice", PASSWORD).await).await;
    let second = pair(refresh(&system, &first.refresh).await).await;
    let third = pair(refresh(&system, &second.refresh).await).await;
    for _ in 0..2 {
        let limited = refresh(&system, &third.refresh).await;
        assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
        let headers = limited.headers();
        assert!(headers.contains_key("retry-after"));
        assert_eq!(headers["ratelimit-policy"], "\"refresh-family\";q=2;w=60");
        let limit = headers["ratelimit"].to_str().unwrap();
        assert!(limit.starts_with("\"refresh-family\";r=0;t="), "{limit}");
    }
    assert_eq!(me(&system, &third.access).await.status(), StatusCode::OK);
    let other = pair(login(&system, "alice", PASSWORD).await).await;
    pair(refresh(&system, &other.refresh).await).await;
    // A spent window never hides a reuse: a retired token still revokes its login.
    let reuse = system
        .http
        .post(format!("{}/auth/refresh", system.edge))
        .json(&json!({ "refreshToken": first.refresh }))
        .send()
        .await
        .unwrap();
    assert_eq!(code(reuse).await, refused("REFRESH_REUSED"));
    assert_eq!(
        code(me(&system, &third.access).await).await,
        refused("TOKEN_REVOKED")
    );
}
