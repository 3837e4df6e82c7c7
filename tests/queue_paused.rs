//! End to end: the queue holds while the origin cannot take payments. A confirm the
//! origin's open breaker refused says how long it expects to stay open; the edge then
//! pauses every gated room — no new pass, live passes extended — and refuses gated
//! confirms itself with 503 `PAYMENTS_PAUSED` until then. Admission resumes on its own.
//! A confirm refused at the origin's concurrency limit (`CONCURRENCY_LIMITED`) pauses
//! the rooms the same way, for one longest wait.

use crate::support;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::room::{self, enter, leave, status, status_until};
use support::{EdgeSetup, System, OPERATOR_TOKEN};

const EVENT: &str = "drop-paused";
/// The origin's breaker wait: how long a forced-open breaker is expected to refuse.
const OPEN_MS: i64 = 12_000;

async fn confirm(system: &System, token: &str, order_id: &str) -> reqwest::Response {
    room::confirm(system, token, order_id, Some(EVENT)).await
}

async fn set_breaker(system: &System, state: &str) {
    let set = system
        .http
        .post(format!("{}/admin/guard/breaker", system.origin_admin))
        .bearer_auth(OPERATOR_TOKEN)
        .json(&json!({"state": state, "reason": "PG incident"}))
        .send()
        .await
        .expect("the origin answers");
    assert_eq!(set.status(), StatusCode::OK);
}

async fn placement(system: &System, token: &str) -> Value {
    let answer = status(system, token, EVENT).await;
    assert_eq!(answer.status(), StatusCode::OK);
    answer.json().await.expect("JSON")
}

#[tokio::test]
async fn while_the_breaker_is_open_the_room_holds_and_gated_confirms_stop_at_the_edge() {
    let setup = EdgeSetup {
        vars: vec![
            ("QUEUE_ADMIT_LIMIT", "1".into()),
            ("QUEUE_PASS_TTL_SECONDS", "60".into()),
            ("GATED_EVENTS", EVENT.into()),
        ],
        ..EdgeSetup::default()
    };
    let open_ms = OPEN_MS.to_string();
    let system = System::start_with_origin(setup, &[("BREAKER_OPEN_MS", &open_ms)]).await;
    // A room defined by an operator too, so its report says what the console shows.
    let (status, _) = system
        .set_event(json!({ "eventId": EVENT, "stock": 10, "amount": 1000, "gated": true }))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (first, second) = (system.token("user-1", 600), system.token("user-2", 600));
    let admitted = enter(&system, &first, EVENT).await;
    let pass = admitted["passExpiresAt"].as_i64().expect("a pass");
    assert_eq!(enter(&system, &second, EVENT).await["position"], 2);

    set_breaker(&system, "FORCED_OPEN").await;
    // The one confirm that learns of it: the origin's answer, unchanged.
    let refused = confirm(&system, &first, "order-1").await;
    assert_eq!(refused.status(), StatusCode::CREATED);
    let refused: Value = refused.json().await.expect("JSON");
    assert_eq!(refused["failureReason"], "CIRCUIT_OPEN");

    let held = status_until(&system, &first, EVENT, |p| p["paused"] == true).await;
    let until = held["pausedUntil"].as_i64().expect("pausedUntil");
    let extended = held["passExpiresAt"].as_i64().expect("still a pass");
    assert_eq!(held["admitted"], true, "a live pass stays live: {held}");
    let report = room::room_status(&system, EVENT).await;
    assert_eq!(report["paymentsPausedUntil"], until, "{report}");
    assert_eq!(report["paused"], false, "not held by an operator: {report}");
    assert!(
        extended - pass >= OPEN_MS - 1_000,
        "the pass is extended by the pause: {pass} → {extended}"
    );

    let stopped = confirm(&system, &first, "order-2").await;
    assert_eq!(stopped.status(), StatusCode::SERVICE_UNAVAILABLE);
    let retry_after: u64 = stopped.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=OPEN_MS as u64 / 1000).contains(&retry_after));
    assert_eq!(
        stopped.json::<Value>().await.unwrap()["code"],
        "PAYMENTS_PAUSED"
    );
    // Forwarded as a replay only, which the origin answers from what exists: nothing.
    let none = system.origin_get("user-1", "/payments/order-2").await;
    assert_eq!(none.status(), StatusCode::NOT_FOUND, "nothing created");

    // user-1 gives up: user-2 reaches the front, but no pass is issued while paused.
    leave(&system, &first, EVENT).await;
    let waiting = placement(&system, &second).await;
    assert_eq!(
        (
            &waiting["position"],
            &waiting["admitted"],
            &waiting["paused"]
        ),
        (&json!(1), &json!(false), &json!(true)),
        "{waiting}"
    );

    // The operator hands the breaker back; when the pause ends, the room admits on its own.
    set_breaker(&system, "AUTO").await;
    let resumed = status_until(&system, &second, EVENT, |p| p["admitted"] == true).await;
    assert!(resumed.get("paused").is_none(), "{resumed}");
    assert!(
        resumed["passExpiresAt"].as_i64().unwrap() > until,
        "issued at the pause's end"
    );
    let paid = confirm(&system, &second, "order-3").await;
    assert_eq!(paid.status(), StatusCode::CREATED);
    assert_eq!(paid.json::<Value>().await.unwrap()["status"], "APPROVED");
    assert_eq!(
        system.ledger().await["requestCount"],
        1,
        "only order-3 reached the PG"
    );
}

#[tokio::test]
async fn a_confirm_refused_at_the_concurrency_limit_pauses_the_gated_room() {
    // The limit holds one call; the one the PG holds outlasts the next call's wait, and the
    // edge waits on the origin longer than either.
    const WAIT_MS: i64 = 5_000;
    let setup = EdgeSetup {
        vars: vec![
            ("QUEUE_ADMIT_LIMIT", "2".into()),
            ("QUEUE_PASS_TTL_SECONDS", "60".into()),
            ("GATED_EVENTS", EVENT.into()),
            ("ORIGIN_TIMEOUT_MS", "30000".into()),
        ],
        ..EdgeSetup::default()
    };
    let wait_ms = WAIT_MS.to_string();
    let system = System::start_with_origin(
        setup,
        &[
            ("GATEWAY_CONCURRENCY", "fixed:1"),
            ("GATEWAY_CONCURRENCY_MAX_WAIT_MS", &wait_ms),
            ("GATEWAY_TIMEOUT_MS", "20000"),
        ],
    )
    .await;
    let (status, _) = system
        .set_event(json!({ "eventId": EVENT, "stock": 10, "amount": 1000 }))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (first, second) = (system.token("user-1", 600), system.token("user-2", 600));
    let third = system.token("user-3", 600);
    assert_eq!(enter(&system, &first, EVENT).await["admitted"], true);
    let admitted = enter(&system, &second, EVENT).await;
    let pass = admitted["passExpiresAt"].as_i64().expect("a pass");
    assert_eq!(enter(&system, &third, EVENT).await["admitted"], false);
    system
        .set_faults(json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 60_000}))
        .await;

    // user-1's payment takes the limit's one slot at the PG and stays there.
    let held = confirm(&system, &first, "order-1");
    tokio::pin!(held);
    tokio::select! {
        _ = system.guard_until(|g| g["concurrency"]["inFlight"] == 1) => {}
        answer = &mut held => panic!("the held confirm was answered: {}", answer.status()),
    }
    // user-2's waits its longest and is refused unsent: the origin's answer, unchanged.
    let refused = tokio::select! {
        refused = confirm(&system, &second, "order-2") => refused,
        answer = &mut held => panic!("the held confirm was answered: {}", answer.status()),
    };
    assert_eq!(refused.status(), StatusCode::CREATED);
    assert!(
        refused.headers().get("payments-paused-for-ms").is_none(),
        "the edge keeps the origin's header to itself"
    );
    let refused: Value = refused.json().await.expect("JSON");
    assert_eq!(refused["failureReason"], "CONCURRENCY_LIMITED", "{refused}");

    let paused = status_until(&system, &second, EVENT, |p| p["paused"] == true).await;
    let extended = paused["passExpiresAt"].as_i64().expect("still a pass");
    assert!(
        extended - pass >= WAIT_MS - 1_000,
        "the pass is extended by the pause: {pass} → {extended}"
    );
    let waiting = placement(&system, &third).await;
    assert_eq!(
        (&waiting["admitted"], &waiting["paused"]),
        (&json!(false), &json!(true)),
        "{waiting}"
    );
    let stopped = confirm(&system, &second, "order-3").await;
    assert_eq!(stopped.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        stopped.json::<Value>().await.expect("JSON")["code"],
        "PAYMENTS_PAUSED"
    );
    let guard = system.operator_get("/admin/guard").await;
    assert_eq!(
        guard["refusals"]["CONCURRENCY_LIMITED"], 1,
        "order-3 was not forwarded: {guard}"
    );
}
