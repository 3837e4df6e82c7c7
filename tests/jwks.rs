//! End to end: bring your own identity provider (`JWT_JWKS_URL`). The edge in workerd
//! fetches a key set over https from a local server (`harness::jwks_server`, its
//! certificate trusted by the edge's workerd), keeps it, fetches it again on a rotation,
//! and keeps the last good set whatever the URL does — beside its own login.
//!
//! The 30 s between fetches for unknown kids is the default here except where a test
//! needs several fetches: there `JWT_JWKS_MIN_REFETCH_SECONDS=1`. The 30 s rule itself is
//! held in the rules' unit tests (`rules/src/token/tests/key_cache.rs`), on plain numbers.

use std::time::Duration;

use crate::support;

use harness::eventually::eventually;
use harness::jwks_server::JwksServer;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::accounts::{code, login, logout, me, pair, refused, PASSWORD};
use support::idp::{self, claims, edge_trusting, key_set, key_set_of, public_jwk, token};
use support::System;

const WITHIN: Duration = Duration::from_secs(20);
const EVERY: Duration = Duration::from_millis(200);

async fn provider_and_edge(keys: &[&str], extra: &[(&'static str, &str)]) -> (JwksServer, System) {
    let server = JwksServer::start().await;
    server.serve(&key_set_of(keys), Some("max-age=600")).await;
    let system = System::start_with(edge_trusting(server.url(), extra)).await;
    (server, system)
}

async fn status_of_me(system: &System, access: &str) -> StatusCode {
    me(system, access).await.status()
}

#[tokio::test]
async fn rs256_and_es256_tokens_of_the_provider_are_accepted_beside_the_edge_s_own_login() {
    let (server, system) = provider_and_edge(&["rsa-a", "ec-a"], &[]).await;
    system.add_user("alice", PASSWORD);
    let own = pair(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(status_of_me(&system, &own.access).await, StatusCode::OK);
    assert_eq!(
        server.fetches().await,
        0,
        "the edge's own tokens fetch nothing"
    );

    let mut with_jti = claims("idp-user-1");
    with_jti["jti"] = json!("idp-jti-1");
    let rs = token("rsa-a", &with_jti);
    let who: Value = me(&system, &rs).await.json().await.unwrap();
    assert_eq!(
        (who["sub"].as_str(), who["jti"].as_str()),
        (Some("idp-user-1"), Some("idp-jti-1"))
    );
    let es = token("ec-a", &claims("idp-user-2"));
    let who: Value = me(&system, &es).await.json().await.unwrap();
    assert_eq!(who["sub"], "idp-user-2");
    assert!(
        who["jti"]
            .as_str()
            .is_some_and(|jti| jti.starts_with("sha256-")),
        "{who}"
    );
    assert_eq!(server.fetches().await, 1);

    // A confirm goes through to the origin on the provider's word for the user.
    let confirmed = system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(&rs)
        .header("idempotency-key", "idp-key-1")
        .header("content-type", "application/json")
        .body(support::order_body("idp-order-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(confirmed.status(), StatusCode::CREATED);

    // A token without jti is known by its digest: logging out revokes it.
    assert_eq!(logout(&system, &es).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(code(me(&system, &es).await).await, refused("TOKEN_REVOKED"));
    assert_eq!(status_of_me(&system, &own.access).await, StatusCode::OK);
    assert_eq!(server.fetches().await, 1);
}

#[tokio::test]
async fn a_rotated_key_is_accepted_within_one_refetch_and_unknown_kids_fetch_no_more() {
    let (server, system) = provider_and_edge(&["rsa-a"], &[]).await;
    let before = token("rsa-a", &claims("u"));
    assert_eq!(status_of_me(&system, &before).await, StatusCode::OK);
    assert_eq!(server.fetches().await, 1);

    // The provider rotates: rsa-b signs, rsa-a is withdrawn. Ten requests with the new kid
    // at once make one fetch between them, and are all let in.
    server
        .serve(&key_set_of(&["rsa-b"]), Some("max-age=600"))
        .await;
    let rotated = token("rsa-b", &claims("u"));
    let answers =
        futures_util::future::join_all((0..10).map(|_| status_of_me(&system, &rotated))).await;
    assert_eq!(answers, vec![StatusCode::OK; 10]);
    assert_eq!(server.fetches().await, 2);

    // Unknown kids — made up, or withdrawn — within 30 s of that fetch fetch nothing.
    let unknown = |n: usize| idp::token_with_kid("rsa-b", &format!("made-up-{n}"), &claims("u"));
    let many = futures_util::future::join_all((0..20).map(|n| {
        let token = unknown(n);
        let system = &system;
        async move { code(me(system, &token).await).await }
    }))
    .await;
    assert!(
        many.iter()
            .all(|answer| *answer == refused("TOKEN_INVALID")),
        "{many:?}"
    );
    // The very token the edge verified and kept before the rotation: its key withdrawn,
    // the set it was kept with is no longer the one in use.
    assert_eq!(
        code(me(&system, &before).await).await,
        refused("TOKEN_INVALID")
    );
    assert_eq!(status_of_me(&system, &rotated).await, StatusCode::OK);
    assert_eq!(server.fetches().await, 2);
}

/// Makes the edge fetch again — a token with a kid it does not know, once the spacing has
/// passed — until the server has seen `fetches` fetches; then `line` is in the edge's log.
async fn fetch_fails_with(server: &JwksServer, system: &System, fetches: u64, line: &str) {
    let unknown = idp::token_with_kid("rsa-b", "not-yet", &claims("u"));
    eventually("the edge fetches again", WITHIN, EVERY, || async {
        me(system, &unknown).await;
        let seen = server.fetches().await;
        if seen >= fetches {
            Ok(())
        } else {
            Err(format!("{seen} fetches"))
        }
    })
    .await;
    eventually("the edge logs why", WITHIN, EVERY, || async {
        let log = system.log("edge");
        if log.contains(line) {
            Ok(())
        } else {
            Err(log)
        }
    })
    .await;
    let kept = token("rsa-a", &claims("u"));
    assert_eq!(status_of_me(system, &kept).await, StatusCode::OK, "{line}");
}

#[tokio::test]
async fn whatever_the_url_answers_the_last_good_set_keeps_verifying() {
    let (server, system) =
        provider_and_edge(&["rsa-a"], &[("JWT_JWKS_MIN_REFETCH_SECONDS", "1")]).await;
    assert_eq!(
        status_of_me(&system, &token("rsa-a", &claims("u"))).await,
        StatusCode::OK
    );
    let url = server.url();
    let kept = "the last good set is kept (1 key, fetched";

    server.set_mode("hang").await;
    fetch_fails_with(
        &server,
        &system,
        2,
        &format!("JWT_JWKS_URL {url}: key set not updated: no answer in 3 s; {kept}"),
    )
    .await;
    server.set_mode("garbage").await;
    fetch_fails_with(
        &server,
        &system,
        3,
        "key set not updated: the key set is not JSON",
    )
    .await;
    server.set_mode("error").await;
    fetch_fails_with(&server, &system, 4, "key set not updated: answered 500").await;
    server.set_mode("huge").await;
    fetch_fails_with(
        &server,
        &system,
        5,
        "key set not updated: the answer is over 65536 bytes",
    )
    .await;

    let bad_sets = [
        (
            key_set_of(&["rsa-1024"]),
            "key `rsa-1024`: expected `n`: a modulus of at least 2048 bits",
        ),
        (
            key_set(&[without(public_jwk("rsa-b"), "kid")]),
            "key number 1 (from 1) has no `kid`",
        ),
        (
            key_set(&[without(public_jwk("rsa-b"), "alg")]),
            "key `rsa-b` has no `alg`",
        ),
        (
            key_set(&[idp::private_jwk("rsa-b")]),
            "key `rsa-b` has the private member `d`",
        ),
    ];
    for (n, (set, line)) in bad_sets.iter().enumerate() {
        server.serve(set, None).await;
        fetch_fails_with(&server, &system, 6 + n as u64, line).await;
    }

    // The provider is well again: its new key is let in at the next fetch.
    server.serve(&key_set_of(&["rsa-a", "rsa-b"]), None).await;
    let rotated = idp::token_with_kid("rsa-b", "rsa-b", &claims("u"));
    eventually("the new key is let in", WITHIN, EVERY, || async {
        match status_of_me(&system, &rotated).await {
            StatusCode::OK => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;
}

fn without(mut jwk: Value, member: &str) -> Value {
    jwk.as_object_mut().unwrap().remove(member);
    jwk
}

#[tokio::test]
async fn until_a_set_is_fetched_the_provider_s_tokens_are_refused_and_the_edge_s_are_not() {
    let server = JwksServer::start().await;
    server.set_mode("error").await;
    let quick = [("JWT_JWKS_MIN_REFETCH_SECONDS", "1")];
    let system = System::start_with(edge_trusting(server.url_by_name(), &quick)).await;
    let provider_token = token("ec-a", &claims("u"));
    assert_eq!(
        code(me(&system, &provider_token).await).await,
        refused("TOKEN_INVALID")
    );
    assert_eq!(server.fetches().await, 1);
    system.add_user("alice", PASSWORD);
    let own = pair(login(&system, "alice", PASSWORD).await).await;
    assert_eq!(status_of_me(&system, &own.access).await, StatusCode::OK);
    eventually("the edge says it has no set", WITHIN, EVERY, || async {
        let log = system.log("edge");
        match log.contains("there is no key set yet: the provider's tokens are refused") {
            true => Ok(()),
            false => Err(log),
        }
    })
    .await;

    server.serve(&key_set_of(&["ec-a"]), None).await;
    eventually("the provider's token is let in", WITHIN, EVERY, || async {
        match status_of_me(&system, &provider_token).await {
            StatusCode::OK => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;
}

#[tokio::test]
async fn alg_confusion_and_a_wrong_issuer_or_audience_are_refused() {
    let (_server, system) = provider_and_edge(&["rsa-a"], &[]).await;
    assert_eq!(
        status_of_me(&system, &token("rsa-a", &claims("u"))).await,
        StatusCode::OK
    );
    let pem = std::fs::read(harness::workspace().join("testdata/jwks/rsa-a.public.pem")).unwrap();
    let confused = idp::hs256_with(&pem, "rsa-a", &claims("u"));
    let mut other_issuer = claims("u");
    other_issuer["iss"] = json!("https://evil.example/");
    let mut other_audience = claims("u");
    other_audience["aud"] = json!(["another-app"]);
    let cases = [
        (confused, "token algorithm is not the algorithm of its key"),
        (
            token("rsa-a", &other_issuer),
            "token issuer is not the configured issuer",
        ),
        (
            token("rsa-a", &other_audience),
            "token audience does not include the configured audience",
        ),
    ];
    for (refused_token, reason) in cases {
        assert_eq!(
            code(me(&system, &refused_token).await).await,
            refused("TOKEN_INVALID"),
            "{reason}"
        );
        eventually("the edge logs the reason", WITHIN, EVERY, || async {
            let log = system.log("edge");
            if log.contains(&format!("token refused: {reason}")) {
                Ok(())
            } else {
                Err(log)
            }
        })
        .await;
    }
}
