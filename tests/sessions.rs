//! End to end: every session of a user ended — by a password change, by `origin user
//! revoke-sessions` through the edge's signed route, by `POST /auth/logout-all` — and
//! what one user's session object may hold, bounded.

use crate::support;

use reqwest::StatusCode;
use support::accounts::{code, login, logout, me, pair, refresh, refused, PASSWORD};
use support::{EdgeSetup, System};

/// A password change ends every session begun with the old one, through the edge's
/// signed route: refresh tokens at once, access tokens at their next request. The new
/// password signs in as ever. Without `EDGE_URL` the change is still made, and the
/// command fails saying the sessions live on.
#[tokio::test]
async fn a_password_change_ends_every_session_at_the_edge() {
    let mut system = System::start().await;
    system.unset_origin_env("EDGE_URL");
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
