//! End to end: login, who-am-I, refresh rotation with reuse detection, logout, and the
//! denylist's fail modes, through the edge in workerd and the origin's credential check.

mod support;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::{EdgeSetup, System};

const PASSWORD: &str = "correct horse battery staple";

struct Pair {
    access: String,
    refresh: String,
}

async fn post(system: &System, path: &str, body: Value) -> reqwest::Response {
    system
        .http
        .post(format!("{}{path}", system.edge))
        .json(&body)
        .send()
        .await
        .expect("the edge answers")
}

async fn login(system: &System, username: &str, password: &str) -> reqwest::Response {
    post(
        system,
        "/auth/login",
        json!({ "username": username, "password": password }),
    )
    .await
}

async fn refresh(system: &System, refresh_token: &str) -> reqwest::Response {
    post(
        system,
        "/auth/refresh",
        json!({ "refreshToken": refresh_token }),
    )
    .await
}

async fn pair(response: reqwest::Response) -> Pair {
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

async fn me(system: &System, access: &str) -> reqwest::Response {
    system
        .http
        .get(format!("{}/auth/me", system.edge))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
}

async fn logout(system: &System, access: &str) -> reqwest::Response {
    system
        .http
        .post(format!("{}/auth/logout", system.edge))
        .bearer_auth(access)
        .send()
        .await
        .unwrap()
}

async fn code(response: reqwest::Response) -> (StatusCode, String) {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    (status, body["code"].as_str().unwrap_or_default().to_owned())
}

fn refused(code: &str) -> (StatusCode, String) {
    (StatusCode::UNAUTHORIZED, code.to_owned())
}

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

/// A password change ends every session begun with the old one, through the edge's
/// signed route: refresh tokens at once, access tokens at their next request. The new
/// password signs in as ever. Without `EDGE_URL` the change is still made, and the
/// command fails saying the sessions live on.
#[tokio::test]
async fn a_password_change_ends_every_session_at_the_edge() {
    let mut system = System::start().await;
    system.add_user("alice", PASSWORD);
    let first = pair(login(&system, "alice", PASSWORD).await).await;
    let second = pair(login(&system, "alice", PASSWORD).await).await;

    let untold = system
        .replace_password("alice", "a new password")
        .unwrap_err();
    assert!(untold.contains("EDGE_URL"), "{untold}");
    assert_eq!(me(&system, &first.access).await.status(), StatusCode::OK);

    let edge = system.edge.clone();
    system.set_origin_env("EDGE_URL", &edge);
    let told = system
        .replace_password("alice", "a newer password")
        .unwrap();
    assert!(told.contains("ended every session"), "{told}");
    for session in [&first, &second] {
        assert_eq!(
            code(me(&system, &session.access).await).await,
            refused("TOKEN_REVOKED")
        );
        assert_eq!(
            code(refresh(&system, &session.refresh).await).await,
            refused("REFRESH_INVALID")
        );
    }
    assert_eq!(
        code(login(&system, "alice", PASSWORD).await).await,
        refused("INVALID_CREDENTIALS")
    );
    let after = pair(login(&system, "alice", "a newer password").await).await;
    assert_eq!(me(&system, &after.access).await.status(), StatusCode::OK);
    pair(refresh(&system, &after.refresh).await).await;
}

/// `origin user revoke-sessions NAME` ends them without a password change; a forged
/// call to the edge's route is refused, and `POST /auth/logout-all` ends the caller's own.
#[tokio::test]
async fn sessions_end_by_command_and_by_logout_all_and_never_by_a_forged_call() {
    let mut system = System::start().await;
    let alice = system.add_user("alice", PASSWORD);
    let edge = system.edge.clone();
    system.set_origin_env("EDGE_URL", &edge);

    let forged = system
        .http
        .post(format!("{}/internal/sessions/end", system.edge))
        .header("x-edge-user", &alice)
        .header("x-edge-timestamp", harness::signed::now_ms().to_string())
        .header("x-edge-nonce", "0".repeat(32))
        .header("x-edge-signature", "0".repeat(64))
        .body(r#"{"before":1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(code(forged).await, refused("SIGNATURE_INVALID"));

    let session = pair(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(me(&system, &session.access).await.status(), StatusCode::OK);
    let told = system.origin_cli(&["user", "revoke-sessions", "Alice"]);
    assert!(told.contains("ended every session of user alice"), "{told}");
    assert_eq!(
        code(me(&system, &session.access).await).await,
        refused("TOKEN_REVOKED")
    );

    let (one, other) = (
        pair(login(&system, "alice", PASSWORD).await).await,
        pair(login(&system, "alice", PASSWORD).await).await,
    );
    let ended = system
        .http
        .post(format!("{}/auth/logout-all", system.edge))
        .bearer_auth(&one.access)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    for gone in [&one, &other] {
        assert_eq!(
            code(me(&system, &gone.access).await).await,
            refused("TOKEN_REVOKED")
        );
        assert_eq!(
            code(refresh(&system, &gone.refresh).await).await,
            refused("REFRESH_INVALID")
        );
    }
    let after = pair(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(
        logout(&system, &after.access).await.status(),
        StatusCode::NO_CONTENT,
        "a logout after every session ended still works"
    );
}

/// What one user's session object holds is bounded: 32 live logins (a 33rd ends the
/// least recently refreshed), and 16 retired tokens a login — one presented again
/// revokes the login; an older one is refused as unknown.
#[tokio::test]
async fn a_users_session_object_holds_a_bounded_number_of_logins_and_tokens() {
    let system = System::start_with(EdgeSetup {
        vars: vec![
            ("LOGIN_RATE_LIMIT_USER", "100/1m".into()),
            ("LOGIN_RATE_LIMIT_CLIENT", "100/1m".into()),
            ("REFRESH_RATE_LIMIT_FAMILY", "100/1m".into()),
        ],
        ..EdgeSetup::default()
    })
    .await;
    system.add_user("alice", PASSWORD);
    let mut logins = Vec::new();
    for _ in 0..34 {
        logins.push(pair(login(&system, "alice", PASSWORD).await).await);
    }
    for ended in &logins[..2] {
        assert_eq!(
            code(me(&system, &ended.access).await).await,
            refused("TOKEN_REVOKED")
        );
        assert_eq!(
            code(refresh(&system, &ended.refresh).await).await,
            refused("REFRESH_INVALID")
        );
    }
    for live in [&logins[2], &logins[33]] {
        assert_eq!(me(&system, &live.access).await.status(), StatusCode::OK);
    }

    let mut chain = vec![logins[33].refresh.clone()];
    for _ in 0..18 {
        let next = pair(refresh(&system, chain.last().unwrap()).await).await;
        chain.push(next.refresh);
    }
    assert_eq!(
        code(refresh(&system, &chain[0]).await).await,
        refused("REFRESH_INVALID"),
        "the oldest retired tokens are forgotten"
    );
    assert_eq!(
        code(refresh(&system, &chain[17]).await).await,
        refused("REFRESH_REUSED"),
        "the 16 newest retired tokens still catch a reuse"
    );
    assert_eq!(
        code(refresh(&system, &chain[18]).await).await,
        refused("REFRESH_INVALID"),
        "and the reuse revoked the login"
    );
}
