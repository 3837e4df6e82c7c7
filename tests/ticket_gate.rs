//! A gated confirm that carries its `Queue-Ticket`, through the real edge (workerd): while
//! the isolate's snapshot shows the ticket's place waiting, it is judged with no call to
//! the room — a replay only, refused 429 `QUEUE_PASS_REQUIRED`, `Retry-After: 1`, when
//! the origin has nothing to replay, and replayed when it has (a buyer back in the line
//! retrying a paid order) — and whoever holds a pass, or bought with it and sends the
//! confirm again, or sends a ticket not their own, goes on to the room and the origin as
//! before.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::gate::assert_replayed;
use support::room::{count, define, enter, health, start, ticket_poll};
use support::System;

const EVENT: &str = "ticket-gate";
const EVERY: Duration = Duration::from_millis(50);

/// A confirm of `order_id` in the event, keyed by the order, carrying `ticket`.
async fn confirm(system: &System, token: &str, order_id: &str, ticket: &str) -> reqwest::Response {
    let body = json!({
        "orderId": order_id,
        "paymentKey": format!("pk-{order_id}"),
        "amount": 1000,
        "eventId": EVENT,
    });
    system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(token)
        .header("idempotency-key", order_id)
        .header("queue-ticket", ticket)
        .json(&body)
        .send()
        .await
        .expect("the edge answers")
}

async fn code_of(answer: reqwest::Response) -> (StatusCode, Option<String>, String) {
    let status = answer.status();
    let retry_after = answer
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body: Value = answer.json().await.expect("a JSON body");
    (
        status,
        retry_after,
        body["code"].as_str().unwrap_or_default().to_owned(),
    )
}

/// One buyer admitted (the limit is 1) and one waiting, with their tickets.
async fn one_admitted_one_waiting() -> (System, [(String, String); 2]) {
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", EVENT)]).await;
    define(
        &system,
        json!({ "eventId": EVENT, "stock": 10, "amount": 1000 }),
    )
    .await;
    let mut held = Vec::new();
    for (user, admitted) in [("user-1", true), ("user-2", false)] {
        let token = system.token(user, 600);
        let entered = enter(&system, &token, EVENT).await;
        assert_eq!(entered["admitted"], admitted, "{entered}");
        let ticket = entered["ticket"].as_str().expect("a ticket").to_owned();
        held.push((token, ticket));
    }
    let held: [(String, String); 2] = held.try_into().expect("two buyers");
    (system, held)
}

#[tokio::test]
async fn a_waiting_ticket_holders_confirm_is_refused_with_no_call_to_the_room() {
    let (system, [_, (token, ticket)]) = one_admitted_one_waiting().await;
    // The isolate's copy of the room's snapshot, fresh from a ticket poll: a second's.
    let refused = eventually(
        "refused without the room",
        Duration::from_secs(30),
        EVERY,
        || async {
            assert_eq!(
                ticket_poll(&system, &token, EVENT, &ticket).await.status(),
                StatusCode::OK
            );
            let before = health(&system, &system.edge).await;
            let answer = code_of(confirm(&system, &token, "order-w1", &ticket).await).await;
            let after = health(&system, &system.edge).await;
            let grew = |name: &str| count(&after, name) - count(&before, name);
            (grew("roomCalls") == 0)
                .then_some(answer.clone())
                .ok_or(format!("{answer:?}, {} room calls", grew("roomCalls")))
        },
    )
    .await;
    assert_eq!(
        refused,
        (
            StatusCode::TOO_MANY_REQUESTS,
            Some("1".into()),
            "QUEUE_PASS_REQUIRED".into()
        )
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        0,
        "nothing reached the PG"
    );
}

#[tokio::test]
async fn a_pass_holder_with_a_ticket_buys_and_its_retry_is_replayed() {
    let (system, [(token, ticket), (waiting, waiting_ticket)]) = one_admitted_one_waiting().await;
    assert_eq!(
        ticket_poll(&system, &waiting, EVENT, &waiting_ticket)
            .await
            .status(),
        StatusCode::OK
    );
    let first = confirm(&system, &token, "order-p1", &ticket).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED", "{first}");
    // The pass is spent once the answer has gone: the place leaves the line.
    eventually(
        "the buyer out of the line",
        Duration::from_secs(30),
        EVERY,
        || async {
            let status = ticket_poll(&system, &token, EVENT, &ticket).await.status();
            (status == StatusCode::NOT_FOUND)
                .then_some(())
                .ok_or(status.to_string())
        },
    )
    .await;
    let again = confirm(&system, &token, "order-p1", &ticket).await;
    assert_eq!(again.status(), StatusCode::CREATED, "replayed, not refused");
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<Value>().await.expect("a JSON body"), first);
    assert_eq!(system.ledger().await["requestCount"], 1, "bought once");
}

/// A ticket that is not the caller's refuses nothing: the admitted buyer who sends the
/// waiting one's ticket still buys, and the room, not the snapshot, decides.
#[tokio::test]
async fn another_users_ticket_is_ignored_and_the_room_decides() {
    let (system, [(token, _), (waiting, waiting_ticket)]) = one_admitted_one_waiting().await;
    let poll = ticket_poll(&system, &waiting, EVENT, &waiting_ticket).await;
    assert_eq!(poll.status(), StatusCode::OK);
    let before = health(&system, &system.edge).await;
    let bought = confirm(&system, &token, "order-o1", &waiting_ticket).await;
    assert_eq!(bought.status(), StatusCode::CREATED);
    let bought: Value = bought.json().await.expect("a JSON body");
    assert_eq!(bought["status"], "APPROVED", "{bought}");
    let after = health(&system, &system.edge).await;
    assert!(count(&after, "roomCalls") > count(&before, "roomCalls"));
    assert_eq!(
        count(&after, "refusedFromMemory"),
        count(&before, "refusedFromMemory")
    );
}

/// A buyer who paid, came back to the line and waits there retries the paid order with
/// the new ticket: the snapshot shows the place waiting, and the answer is the replay.
#[tokio::test]
async fn a_paid_order_retried_with_a_waiting_ticket_is_replayed() {
    let (system, [(token, ticket), (waiting, waiting_ticket)]) = one_admitted_one_waiting().await;
    let first = confirm(&system, &token, "order-b1", &ticket).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED", "{first}");
    // The pass spent, the other buyer holds the one pass; the first enters again.
    ticket_poll_until(&system, &waiting, &waiting_ticket, |p| {
        p["admitted"] == true
    })
    .await;
    let back = enter(&system, &token, EVENT).await;
    assert_eq!(back["admitted"], false, "{back}");
    let new_ticket = back["ticket"].as_str().expect("a ticket");
    // The isolate's snapshot shows the new place waiting.
    ticket_poll_until(&system, &token, new_ticket, |p| {
        p["admitted"] == false && p["position"].is_u64()
    })
    .await;

    let again = confirm(&system, &token, "order-b1", new_ticket).await;
    assert_replayed(again, StatusCode::CREATED, &first).await;
    assert_eq!(system.ledger().await["requestCount"], 1, "bought once");
}

/// Polls with `ticket` until its answer satisfies `done` (30 s at most).
async fn ticket_poll_until(system: &System, token: &str, ticket: &str, done: fn(&Value) -> bool) {
    eventually(
        "the ticket's place",
        Duration::from_secs(30),
        EVERY,
        || async {
            let placed: Value = ticket_poll(system, token, EVENT, ticket)
                .await
                .json()
                .await
                .map_err(|err| err.to_string())?;
            done(&placed).then_some(()).ok_or(placed.to_string())
        },
    )
    .await;
}
