//! The signed credential check behind the edge's login, and `origin user add`.

mod support;

use std::time::Duration;

use axum::http::StatusCode;
use origin::users::{add_user, UserAdded};
use serde_json::json;
use support::{signed, simulator, Origin};

async fn origin_with_demo_user() -> (Origin, String) {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    let UserAdded::Created { id } = add_user(origin.store.as_ref(), "Demo", "s3cret pw", false)
        .await
        .unwrap()
    else {
        panic!("a new user is created");
    };
    (origin, id)
}

async fn verify(origin: &Origin, body: &str) -> (StatusCode, serde_json::Value) {
    origin
        .send(signed("POST", "/internal/credentials/verify", None, body))
        .await
}

#[tokio::test]
async fn the_right_password_answers_the_user_id() {
    let (origin, id) = origin_with_demo_user().await;
    let (status, body) = verify(&origin, r#"{"username":"demo","password":"s3cret pw"}"#).await;
    assert_eq!((status, body), (StatusCode::OK, json!({ "userId": id })));
    let (status, _) = verify(&origin, r#"{"username":"DEMO","password":"s3cret pw"}"#).await;
    assert_eq!(status, StatusCode::OK, "usernames compare without case");
}

#[tokio::test]
async fn a_wrong_password_or_unknown_user_is_401_alike() {
    let (origin, _) = origin_with_demo_user().await;
    for body in [
        r#"{"username":"demo","password":"s3cret"}"#,
        r#"{"username":"nobody","password":"s3cret pw"}"#,
    ] {
        let (status, error) = verify(&origin, body).await;
        assert_eq!(
            (status, error["code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("INVALID_CREDENTIALS"))
        );
    }
}

#[tokio::test]
async fn malformed_credentials_are_400() {
    let (origin, _) = origin_with_demo_user().await;
    for body in [
        "{",
        r#"{"username":"demo"}"#,
        r#"{"username":"a b","password":"x"}"#,
    ] {
        let (status, error) = verify(&origin, body).await;
        assert_eq!(
            (status, error["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST")),
            "{body}"
        );
    }
}

#[tokio::test]
async fn adding_a_user_twice_fails_unless_asked_to_replace_the_password() {
    let (origin, _) = origin_with_demo_user().await;
    let store = origin.store.as_ref();
    let again = add_user(store, "demo", "other", false).await.unwrap_err();
    assert!(again.to_string().contains("exists already"), "{again}");
    assert_eq!(
        add_user(store, "demo", "new pw", true).await.unwrap(),
        UserAdded::PasswordReplaced
    );
    let (status, _) = verify(&origin, r#"{"username":"demo","password":"new pw"}"#).await;
    assert_eq!(status, StatusCode::OK);
    assert!(add_user(store, "bad name", "pw", false).await.is_err());
    assert!(add_user(store, "someone", "", false).await.is_err());
}
