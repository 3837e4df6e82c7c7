//! The signed credential check behind the edge's login, and `origin user add`.

use crate::support;

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
    let stored = store.user_by_name("demo").await.unwrap().unwrap();
    assert_eq!(
        add_user(store, "Demo", "new pw", true).await.unwrap(),
        UserAdded::PasswordUnchanged,
        "the same password again changes nothing"
    );
    let after = store.user_by_name("demo").await.unwrap().unwrap();
    assert_eq!(after.password_hash, stored.password_hash, "not hashed anew");
    assert!(add_user(store, "bad name", "pw", false).await.is_err());
    assert!(add_user(store, "someone", "", false).await.is_err());
}

/// The wall time of `rounds` credential checks of `body`, each after one of `other`, so
/// that both bodies see the machine alike.
async fn interleaved(
    origin: &Origin,
    body: &str,
    other: &str,
    rounds: u32,
) -> (Duration, Duration) {
    let (mut first, mut second) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        for (body, total) in [(body, &mut first), (other, &mut second)] {
            let started = std::time::Instant::now();
            let (status, _) = verify(origin, body).await;
            *total += started.elapsed();
            assert_eq!(status, StatusCode::UNAUTHORIZED);
        }
    }
    (first, second)
}

/// An unknown name costs the decoy's hash, as a known name with a wrong password costs
/// its own: the two take alike (a generous bound — a skipped hash is 50–100 times
/// faster — not a timed figure).
#[tokio::test]
async fn an_unknown_user_takes_as_long_as_a_wrong_password() {
    let (origin, _) = origin_with_demo_user().await;
    let unknown = r#"{"username":"nobody","password":"s3cret pw"}"#;
    let wrong = r#"{"username":"demo","password":"not it"}"#;
    let (unknown_time, wrong_time) = interleaved(&origin, unknown, wrong, 8).await;
    let ratio = unknown_time.as_secs_f64() / wrong_time.as_secs_f64();
    println!("unknown user {unknown_time:?}, wrong password {wrong_time:?}: ratio {ratio:.2}");
    assert!(
        (0.5..2.0).contains(&ratio),
        "unknown {unknown_time:?} against wrong {wrong_time:?} (ratio {ratio:.2})"
    );
}

/// Credential checks have a capacity of their own: with every API slot's worth of logins
/// waiting for the hasher, reads are still answered, and the logins past their own cap
/// are refused `BUSY` at once.
#[tokio::test]
async fn a_login_flood_takes_no_slot_of_a_read() {
    let guard = origin::guard::GuardConfig::default();
    let origin =
        std::sync::Arc::new(Origin::with_capacities(&simulator().await, guard, 2, 8).await);
    add_user(origin.store.as_ref(), "demo", "s3cret pw", false)
        .await
        .unwrap();
    let logins: Vec<_> = (0..24)
        .map(|_| {
            let origin = origin.clone();
            tokio::spawn(async move {
                verify(&origin, r#"{"username":"demo","password":"wrong"}"#)
                    .await
                    .0
            })
        })
        .collect();
    tokio::task::yield_now().await;
    for _ in 0..4 {
        let (status, body) = origin.read("no-such-order").await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "a read during the flood: {body}"
        );
    }
    let mut answered = std::collections::BTreeMap::new();
    for login in logins {
        *answered.entry(login.await.unwrap().as_u16()).or_insert(0) += 1;
    }
    assert!(
        answered.contains_key(&503),
        "past 8 at once logins are shed: {answered:?}"
    );
    assert!(
        answered.contains_key(&401),
        "logins within the cap are checked: {answered:?}"
    );
}
