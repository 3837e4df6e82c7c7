//! What a buyer's pass goes through, through the real edge (workerd), the origin and the
//! simulator: an answer from an order that existed before — replayed, or `ORDER_EXISTS` —
//! neither spends the buyer's new pass nor ties it to the old order; a confirm the global
//! window refuses, never sent, leaves the pass free; a failure at the PG frees it for the
//! buyer's next order; and a paid retry during a payments pause is replayed.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::gate::{assert_replayed, code, confirm};
use support::room::{define, enter, start, status, status_until};
use support::{EdgeSetup, System};

const EVERY: Duration = Duration::from_millis(100);

/// A system whose edge gates `event` (defined at the origin, 1000 a unit) and admits
/// `admit` at a time, with `vars` besides.
async fn gated(event: &str, admit: &str, vars: &[(&'static str, &str)]) -> System {
    let mut all = vec![("QUEUE_ADMIT_LIMIT", admit), ("GATED_EVENTS", event)];
    all.extend_from_slice(vars);
    let system = start(&all).await;
    define(
        &system,
        json!({ "eventId": event, "stock": 10, "amount": 1000 }),
    )
    .await;
    system
}

/// `user` admitted to `event`, buys `order_id` under `key`, and is back in the line
/// with a new pass once the room has spent the first: the approval's answer.
async fn bought_and_back(
    system: &System,
    token: &str,
    event: &str,
    key: &str,
    order_id: &str,
) -> Value {
    assert_eq!(enter(system, token, event).await["admitted"], true);
    let first = confirm(system, token, key, order_id, 1000, event).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED", "{first}");
    eventually("the pass spent", Duration::from_secs(30), EVERY, || async {
        let now = status(system, token, event).await.status();
        (now == StatusCode::NOT_FOUND)
            .then_some(())
            .ok_or(now.to_string())
    })
    .await;
    assert_eq!(enter(system, token, event).await["admitted"], true);
    first
}

#[tokio::test]
async fn a_replayed_answer_neither_spends_the_new_pass_nor_ties_it() {
    let system = gated("pass-1", "1", &[]).await;
    let token = system.token("user-1", 600);
    let first = bought_and_back(&system, &token, "pass-1", "key-a", "order-a").await;

    let again = confirm(&system, &token, "key-a", "order-a", 1000, "pass-1").await;
    assert_replayed(again, StatusCode::CREATED, &first).await;
    let next = confirm(&system, &token, "key-b", "order-b", 1000, "pass-1").await;
    let next: Value = next.json().await.expect("a JSON body");
    assert_eq!(next["status"], "APPROVED", "the new pass buys: {next}");
    assert_eq!(system.ledger().await["requestCount"], 2);
}

#[tokio::test]
async fn order_exists_for_an_order_bought_before_leaves_the_new_pass_free() {
    let system = gated("pass-2", "1", &[]).await;
    let token = system.token("user-2", 600);
    bought_and_back(&system, &token, "pass-2", "key-a", "order-a").await;

    let old = confirm(&system, &token, "key-a2", "order-a", 1000, "pass-2").await;
    assert_eq!(
        code(old).await,
        (StatusCode::CONFLICT, "ORDER_EXISTS".into())
    );
    let next = confirm(&system, &token, "key-b", "order-b", 1000, "pass-2").await;
    let next: Value = next.json().await.expect("a JSON body");
    assert_eq!(next["status"], "APPROVED", "not QUEUE_PASS_IN_USE: {next}");
}

/// The global window refuses a confirm after its pass was claimed: never sent, it does
/// not keep the claim, and once the window has room the buyer's other order goes.
#[tokio::test]
async fn a_confirm_the_global_window_refuses_leaves_the_pass_free() {
    let system = gated(
        "pass-3",
        "1",
        &[("RATE_LIMIT_USER", "50/1s"), ("RATE_LIMIT_GLOBAL", "1/3s")],
    )
    .await;
    let token = system.token("user-3", 600);
    assert_eq!(enter(&system, &token, "pass-3").await["admitted"], true);
    // Another buyer's ungated confirm fills the window.
    let other = system.token("other-3", 600);
    let filler = support::room::confirm(&system, &other, "order-f", None).await;
    assert_eq!(filler.status(), StatusCode::CREATED);

    let refused = confirm(&system, &token, "key-a", "order-a", 1000, "pass-3").await;
    assert_eq!(
        code(refused).await,
        (StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED".into())
    );
    let bought = eventually(
        "the window has room",
        Duration::from_secs(30),
        EVERY,
        || async {
            let answer = confirm(&system, &token, "key-b", "order-b", 1000, "pass-3").await;
            match answer.status() {
                StatusCode::CREATED => Ok(answer.json::<Value>().await.expect("JSON")),
                StatusCode::TOO_MANY_REQUESTS => Err("the window is full".to_owned()),
                _ => panic!("{:?}", code(answer).await),
            }
        },
    )
    .await;
    assert_eq!(bought["status"], "APPROVED", "{bought}");
}

#[tokio::test]
async fn a_failure_at_the_pg_frees_the_pass_for_the_next_order() {
    let system = gated("pass-4", "1", &[]).await;
    let token = system.token("user-4", 600);
    assert_eq!(enter(&system, &token, "pass-4").await["admitted"], true);
    system
        .set_faults(json!({"mode": "NORMAL", "declineRate": 1.0}))
        .await;
    let failed = confirm(&system, &token, "key-a", "order-a", 1000, "pass-4").await;
    assert_eq!(failed.status(), StatusCode::CREATED);
    let failed: Value = failed.json().await.expect("a JSON body");
    assert_eq!(failed["status"], "FAILED", "{failed}");

    system
        .set_faults(json!({"mode": "NORMAL", "declineRate": 0.0}))
        .await;
    let next = confirm(&system, &token, "key-b", "order-b", 1000, "pass-4").await;
    let next: Value = next.json().await.expect("a JSON body");
    assert_eq!(next["status"], "APPROVED", "the pass was freed: {next}");
}

/// Payments pause (the origin's breaker forced open): a buyer whose approval came before
/// the pause, retrying it, is replayed — not told that payments are paused.
#[tokio::test]
async fn a_paid_retry_during_a_payments_pause_is_replayed() {
    let setup = EdgeSetup {
        vars: vec![
            ("QUEUE_ADMIT_LIMIT", "2".into()),
            ("GATED_EVENTS", "pass-5".into()),
        ],
        ..EdgeSetup::default()
    };
    let system = System::start_with_origin(setup, &[("BREAKER_OPEN_MS", "20000")]).await;
    define(
        &system,
        json!({ "eventId": "pass-5", "stock": 10, "amount": 1000 }),
    )
    .await;
    let (paid, other) = (system.token("user-5", 600), system.token("other-5", 600));
    assert_eq!(enter(&system, &paid, "pass-5").await["admitted"], true);
    assert_eq!(enter(&system, &other, "pass-5").await["admitted"], true);
    let first = confirm(&system, &paid, "key-p", "order-p", 1000, "pass-5").await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED", "{first}");

    let url = format!("{}/admin/guard/breaker", system.origin_admin);
    let forced = json!({"state": "FORCED_OPEN", "reason": "PG incident"});
    let (set, _) = system
        .operator_call(system.http.post(url).json(&forced))
        .await;
    assert_eq!(set, StatusCode::OK);
    // The confirm that learns of the pause, and the room that holds.
    let refused = confirm(&system, &other, "key-o", "order-o", 1000, "pass-5").await;
    let refused: Value = refused.json().await.expect("a JSON body");
    assert_eq!(refused["failureReason"], "CIRCUIT_OPEN", "{refused}");
    status_until(&system, &other, "pass-5", |p| p["paused"] == true).await;
    let paused = confirm(&system, &other, "key-o2", "order-o2", 1000, "pass-5").await;
    assert_eq!(
        code(paused).await,
        (StatusCode::SERVICE_UNAVAILABLE, "PAYMENTS_PAUSED".into())
    );

    let again = confirm(&system, &paid, "key-p", "order-p", 1000, "pass-5").await;
    assert_replayed(again, StatusCode::CREATED, &first).await;
}
