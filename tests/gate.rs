//! The payment gate as a hostile client meets it, through the real edge (workerd), the
//! origin and the simulator: a pass pays for one order whatever else its holder sends,
//! nobody holds a pass before the opening, an approved retry is replayed, the origin
//! refuses a gated confirm the edge did not pass (of a room it stores, or of an event of
//! `GATED_EVENTS`), an UNKNOWN retried after its pass ran out is replayed, one room's
//! flood of entries spends no other room's window, and no queue exists for an event
//! nobody defined.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use harness::signed::now_ms;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::gate::{assert_replayed, code, confirm, has_payment};
use support::room::{define, enter, queue_call, start, status};
use support::{EdgeSetup, System};

const EVERY: Duration = Duration::from_millis(100);

#[tokio::test]
async fn a_pass_backs_one_order_whatever_else_its_holder_sends() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", "gate-1")]).await;
    define(
        &system,
        json!({ "eventId": "gate-1", "stock": 10, "amount": 1000 }),
    )
    .await;
    let token = system.token("user-1", 600);
    assert_eq!(enter(&system, &token, "gate-1").await["admitted"], true);
    system
        .set_faults(json!({"mode": "DELAY", "delayMs": 1_500}))
        .await;

    let in_flight = {
        let (system, token) = (&system, token.clone());
        async move { confirm(system, &token, "key-a", "order-a1", 1000, "gate-1").await }
    };
    let attacks = async {
        eventually("A at the PG", Duration::from_secs(10), EVERY, || async {
            let sent = system.ledger().await["requestCount"].as_u64().unwrap_or(0);
            (sent >= 1).then_some(()).ok_or(format!("{sent} requests"))
        })
        .await;
        // The same key with another body, another key with another amount, then order B.
        let reused = code(confirm(&system, &token, "key-a", "order-a1", 1, "gate-1").await).await;
        let priced = code(confirm(&system, &token, "key-a2", "order-a1", 1, "gate-1").await).await;
        let other = code(confirm(&system, &token, "key-b", "order-b1", 1000, "gate-1").await).await;
        (reused, priced, other)
    };
    let (first, (reused, priced, other)) = tokio::join!(in_flight, attacks);
    assert_eq!(reused.0, StatusCode::UNPROCESSABLE_ENTITY, "{reused:?}");
    assert_eq!(
        priced,
        (StatusCode::CONFLICT, "ORDER_EXISTS".into()),
        "the order is checked before the price"
    );
    assert_eq!(other, (StatusCode::CONFLICT, "QUEUE_PASS_IN_USE".into()));
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED", "{first}");
    assert!(!has_payment(&system, "user-1", "order-b1").await);
}

#[tokio::test]
async fn an_approved_gated_confirm_sent_again_is_replayed_and_nothing_more_is_bought() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", "gate-2")]).await;
    define(
        &system,
        json!({ "eventId": "gate-2", "stock": 10, "amount": 1000 }),
    )
    .await;
    let token = system.token("user-1", 600);
    enter(&system, &token, "gate-2").await;
    let first = confirm(&system, &token, "key-r", "order-r1", 1000, "gate-2").await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED");

    let again = confirm(&system, &token, "key-r", "order-r1", 1000, "gate-2").await;
    assert_replayed(again, StatusCode::CREATED, &first).await;

    // The spent pass buys nothing else, and the refused replay created nothing. The room
    // hears of the approval once its answer has gone: until then the pass is still
    // claimed by the approved order.
    eventually("the pass spent", Duration::from_secs(30), EVERY, || async {
        let more = confirm(&system, &token, "key-r2", "order-r2", 1000, "gate-2").await;
        match code(more).await {
            (StatusCode::TOO_MANY_REQUESTS, code) if code == "QUEUE_PASS_REQUIRED" => Ok(()),
            (StatusCode::CONFLICT, code) if code == "QUEUE_PASS_IN_USE" => Err(code),
            other => panic!("{other:?}"),
        }
    })
    .await;
    assert!(!has_payment(&system, "user-1", "order-r2").await);
    assert_eq!(system.ledger().await["requestCount"], 1);
}

#[tokio::test]
async fn a_line_that_stood_before_the_drop_was_defined_buys_nothing_before_the_opening() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "10"), ("GATED_EVENTS", "gate-3")]).await;
    define(
        &system,
        json!({ "eventId": "gate-3", "stock": 10, "amount": 1000 }),
    )
    .await;
    let early = system.token("early-1", 600);
    assert_eq!(enter(&system, &early, "gate-3").await["admitted"], true);

    let opens_at = now_ms() + 4_000;
    define(
        &system,
        json!({ "eventId": "gate-3", "stock": 10, "amount": 1000,
                "opensAt": opens_at, "prequeueFrom": now_ms() - 1_000 }),
    )
    .await;
    let refused = confirm(&system, &early, "key-e", "order-e1", 1000, "gate-3").await;
    assert_eq!(
        code(refused).await,
        (StatusCode::CONFLICT, "NOT_OPEN_YET".into())
    );
    assert!(!has_payment(&system, "early-1", "order-e1").await);
    let placed: Value = status(&system, &early, "gate-3")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        placed["prequeued"], true,
        "moved into the prequeue: {placed}"
    );

    // Straight to the origin, signed, without the edge's pass: refused too.
    let body = json!({ "orderId": "order-e2", "paymentKey": "pk-order-e2",
                       "amount": 1000, "eventId": "gate-3" })
    .to_string();
    let straight = system
        .confirm_at_origin("early-1", Some("key-e2"), &body)
        .await;
    assert_eq!(
        code(straight).await,
        (StatusCode::FORBIDDEN, "QUEUE_PASS_REQUIRED".into())
    );

    eventually(
        "admitted at the opening",
        Duration::from_secs(30),
        EVERY,
        || async {
            let placed: Value = status(&system, &early, "gate-3")
                .await
                .json()
                .await
                .map_err(|err| err.to_string())?;
            (placed["admitted"] == true)
                .then_some(())
                .ok_or(placed.to_string())
        },
    )
    .await;
    let bought = confirm(&system, &early, "key-e", "order-e1", 1000, "gate-3").await;
    assert_eq!(bought.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn another_buyers_order_id_frees_the_claim_it_took() {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "5"), ("GATED_EVENTS", "gate-4")]).await;
    define(
        &system,
        json!({ "eventId": "gate-4", "stock": 10, "amount": 1000 }),
    )
    .await;
    let (owner, buyer) = (system.token("owner-1", 600), system.token("buyer-1", 600));
    enter(&system, &owner, "gate-4").await;
    enter(&system, &buyer, "gate-4").await;
    let taken = confirm(&system, &owner, "key-o", "order-x1", 1000, "gate-4").await;
    assert_eq!(taken.status(), StatusCode::CREATED);

    let clash = confirm(&system, &buyer, "key-c", "order-x1", 1000, "gate-4").await;
    assert_eq!(
        code(clash).await,
        (StatusCode::CONFLICT, "ORDER_ID_TAKEN".into())
    );
    let own = confirm(&system, &buyer, "key-d", "order-y1", 1000, "gate-4").await;
    assert_eq!(own.status(), StatusCode::CREATED, "the claim was freed");
}

#[tokio::test]
async fn gate_refusals_do_not_spend_the_global_window() {
    let system = start(&[
        ("QUEUE_ADMIT_LIMIT", "1"),
        ("GATED_EVENTS", "gate-5"),
        ("RATE_LIMIT_USER", "50/1s"),
        ("RATE_LIMIT_GLOBAL", "3/1m"),
    ])
    .await;
    define(
        &system,
        json!({ "eventId": "gate-5", "stock": 10, "amount": 1000 }),
    )
    .await;
    let (buyer, flooder) = (system.token("buyer-5", 600), system.token("flood-5", 600));
    enter(&system, &buyer, "gate-5").await;
    for n in 0..6 {
        let order = format!("flood-order-{n}");
        let refused = confirm(&system, &flooder, &order, &order, 1000, "gate-5").await;
        assert_eq!(
            code(refused).await,
            (StatusCode::TOO_MANY_REQUESTS, "QUEUE_PASS_REQUIRED".into())
        );
    }
    let bought = confirm(&system, &buyer, "key-5", "order-51", 1000, "gate-5").await;
    assert_eq!(bought.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_flood_of_entries_into_one_room_leaves_another_rooms_window_alone() {
    let system = start(&[
        ("GATED_EVENTS", "room-a,room-b"),
        ("RATE_LIMIT_USER", "50/1s"),
        ("RATE_LIMIT_GLOBAL", "3/1m"),
    ])
    .await;
    let mut answers = Vec::new();
    for n in 0..4 {
        let token = system.token(&format!("flood-{n}"), 600);
        answers.push(queue_call(&system, &token, reqwest::Method::POST, "room-a/enter").await);
    }
    let codes: Vec<StatusCode> = answers.iter().map(reqwest::Response::status).collect();
    assert_eq!(
        codes,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    let other = system.token("other-b", 600);
    let answer = queue_call(&system, &other, reqwest::Method::POST, "room-b/enter").await;
    assert_eq!(
        answer.status(),
        StatusCode::OK,
        "room-b's window is its own"
    );
}

/// A confirm left UNKNOWN (the PG's answer lost), retried once its pass ran out: the
/// retry is replayed from the origin's record, never refused for the lost pass — and the
/// PG is asked once.
#[tokio::test]
async fn an_unknown_gated_confirm_retried_after_its_pass_ran_out_is_replayed() {
    let edge = EdgeSetup {
        vars: vec![
            ("QUEUE_ADMIT_LIMIT", "1".to_owned()),
            ("QUEUE_PASS_TTL_SECONDS", "2".to_owned()),
            ("GATED_EVENTS", "gate-6".to_owned()),
        ],
        ..EdgeSetup::default()
    };
    let system = System::start_with_origin(
        edge,
        &[
            ("GATEWAY_TIMEOUT_MS", "300"),
            ("RECOVERY_INTERVAL_MS", "3600000"),
        ],
    )
    .await;
    define(
        &system,
        json!({ "eventId": "gate-6", "stock": 10, "amount": 1000 }),
    )
    .await;
    let token = system.token("user-6", 600);
    assert_eq!(enter(&system, &token, "gate-6").await["admitted"], true);
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let first = confirm(&system, &token, "key-u", "order-u1", 1000, "gate-6").await;
    assert_eq!(first.status(), StatusCode::ACCEPTED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "UNKNOWN", "{first}");

    eventually(
        "the pass ran out",
        Duration::from_secs(30),
        EVERY,
        || async {
            let gone = status(&system, &token, "gate-6").await.status();
            (gone == StatusCode::NOT_FOUND)
                .then_some(())
                .ok_or(gone.to_string())
        },
    )
    .await;
    let again = confirm(&system, &token, "key-u", "order-u1", 1000, "gate-6").await;
    assert_replayed(again, StatusCode::ACCEPTED, &first).await;
    let other = confirm(&system, &token, "key-u2", "order-u2", 1000, "gate-6").await;
    assert_eq!(
        code(other).await,
        (StatusCode::TOO_MANY_REQUESTS, "QUEUE_PASS_REQUIRED".into()),
        "no pass, no new order"
    );
    assert_eq!(system.ledger().await["requestCount"], 1);
}

#[tokio::test]
async fn no_queue_exists_for_an_event_nobody_defined() {
    let system = start(&[]).await;
    let token = system.token("user-1", 600);
    let before = system.edge_object_files("WaitingRoom").len();
    for (method, path) in [
        (reqwest::Method::POST, "guessed-1/enter"),
        (reqwest::Method::GET, "guessed-1/status"),
        (reqwest::Method::POST, "guessed-1/leave"),
    ] {
        let answer = queue_call(&system, &token, method, path).await;
        assert_eq!(
            code(answer).await,
            (StatusCode::NOT_FOUND, "EVENT_NOT_FOUND".into()),
            "{path}"
        );
    }
    assert_eq!(system.edge_object_files("WaitingRoom").len(), before);

    define(
        &system,
        json!({ "eventId": "guessed-1", "stock": 5, "amount": 1000, "gated": true }),
    )
    .await;
    eventually(
        "a queue once defined",
        Duration::from_secs(10),
        EVERY,
        || async {
            let answer =
                queue_call(&system, &token, reqwest::Method::POST, "guessed-1/enter").await;
            let status = answer.status();
            (status == StatusCode::OK)
                .then_some(())
                .ok_or(status.to_string())
        },
    )
    .await;
}

/// An event gated by `GATED_EVENTS` alone, with no room stored at the origin: a signed
/// confirm without the edge's pass, sent straight to the origin, is refused and buys
/// nothing.
#[tokio::test]
async fn the_origin_refuses_a_gated_events_confirm_the_edge_did_not_pass() {
    let system = start(&[("GATED_EVENTS", "gate-7")]).await;
    define(
        &system,
        json!({ "eventId": "gate-7", "stock": 10, "amount": 1000 }),
    )
    .await;
    let body = json!({ "orderId": "order-s1", "paymentKey": "pk-order-s1",
                       "amount": 1000, "eventId": "gate-7" })
    .to_string();
    let straight = system
        .confirm_at_origin("user-7", Some("key-s"), &body)
        .await;
    assert_eq!(
        code(straight).await,
        (StatusCode::FORBIDDEN, "QUEUE_PASS_REQUIRED".into())
    );
    assert!(!has_payment(&system, "user-7", "order-s1").await);
    assert_eq!(system.ledger().await["requestCount"], 0);
}
