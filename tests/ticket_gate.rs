//! A gated confirm that carries its `Queue-Ticket`, through the real edge (workerd): while
//! the isolate's snapshot shows the ticket's place waiting, it is refused at the edge —
//! 429 `QUEUE_PASS_REQUIRED`, `Retry-After` the place's poll interval, the body naming
//! `GET /payments/{orderId}` — with no call to the room or the origin, however many are
//! sent; a buyer back in the line reads a paid order there, and its retry without the
//! waiting ticket is replayed. Whoever holds a pass, or bought with it and sends the
//! confirm again, or sends a ticket not their own, goes on to the room and the origin as
//! before.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::gate::assert_replayed;
use support::room::{count, define, enter, health, start, ticket_poll, ticket_poll_until};
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

/// How many confirms reached the origin, as its metrics count them.
async fn origin_confirms(system: &System) -> u64 {
    system
        .origin_metrics()
        .await
        .lines()
        .filter(|line| {
            line.starts_with("origin_http_requests_total{")
                && line.contains(r#"route="/payments/confirm""#)
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn a_waiting_ticket_holders_confirm_is_refused_with_no_call_to_the_room() {
    let (system, [_, (token, ticket)]) = one_admitted_one_waiting().await;
    let poll_after = {
        let placed: Value = ticket_poll(&system, &token, EVENT, &ticket)
            .await
            .json()
            .await
            .expect("a JSON body");
        placed["pollAfterSeconds"]
            .as_u64()
            .expect("a poll interval")
    };
    let origin_before = origin_confirms(&system).await;
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
            let answer = confirm(&system, &token, "order-w1", &ticket).await;
            let after = health(&system, &system.edge).await;
            let grew = |name: &str| count(&after, name) - count(&before, name);
            let status = answer.status();
            let retry_after = answer.headers().get("retry-after").cloned();
            let body: Value = answer.json().await.map_err(|err| err.to_string())?;
            (grew("roomCalls") == 0)
                .then_some((status, retry_after, body.clone()))
                .ok_or(format!("{body}, {} room calls", grew("roomCalls")))
        },
    )
    .await;
    let (status, retry_after, body) = refused;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "QUEUE_PASS_REQUIRED", "{body}");
    // Refused before the body is read: the order's path is named by its pattern.
    assert_eq!(body["payment"], "/payments/{orderId}", "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains("GET /payments/{orderId}"), "{body}");
    let retry_after: u64 = retry_after
        .and_then(|value| value.to_str().ok()?.parse().ok())
        .expect("a Retry-After in whole seconds");
    assert!(
        retry_after >= 1 && retry_after == poll_after.max(1),
        "Retry-After {retry_after}, the poll's {poll_after}"
    );
    assert_eq!(
        origin_confirms(&system).await,
        origin_before,
        "no origin call"
    );
    assert_eq!(
        system.ledger().await["requestCount"],
        0,
        "nothing reached the PG"
    );
}

/// With no copy of the room kept (none polled for over a second), the confirm's body is
/// read and its ticket verified against the body's event before the copy is fetched:
/// refused all the same. A made-up ticket fetches no copy: it goes on to the room, as
/// a confirm without a waiting ticket does.
#[tokio::test]
async fn without_a_copy_kept_the_body_names_the_event_and_the_refusal_is_the_same() {
    let (system, [_, (token, ticket)]) = one_admitted_one_waiting().await;
    let made_up = format!("{ticket}x");
    let refused = eventually(
        "refused once the copy is fetched again",
        Duration::from_secs(30),
        EVERY,
        || async {
            // Past the copy's second: nothing kept, whatever was polled before.
            tokio::time::sleep(Duration::from_millis(1_100)).await;
            let before = health(&system, &system.edge).await;
            let forged = confirm(&system, &token, "order-f1", &made_up).await;
            let between = health(&system, &system.edge).await;
            let origin_between = origin_confirms(&system).await;
            let answer = confirm(&system, &token, "order-l1", &ticket).await;
            let after = health(&system, &system.edge).await;
            let to_origin = origin_confirms(&system).await - origin_between;
            let grew = |from: &Value, to: &Value, name: &str| count(to, name) - count(from, name);
            let status = answer.status();
            let body: Value = answer.json().await.map_err(|err| err.to_string())?;
            let fetched = grew(&between, &after, "snapshotsFetched")
                + grew(&between, &after, "snapshotsShared");
            // The forged one went on to the room (its own business), not to a snapshot.
            let forged_fetches = grew(&before, &between, "snapshotsFetched")
                + grew(&before, &between, "snapshotsShared");
            let forged_room_calls = grew(&before, &between, "roomCalls");
            drop(forged);
            (status == StatusCode::TOO_MANY_REQUESTS && fetched == 1 && forged_fetches == 0)
                .then_some((forged_room_calls, to_origin, body.clone()))
                .ok_or(format!(
                    "{status} {body}, {fetched} fetched, forged {forged_fetches}"
                ))
        },
    )
    .await;
    let (forged_room_calls, to_origin, body) = refused;
    assert!(
        forged_room_calls >= 1,
        "a made-up ticket is not judged from the snapshot: the room decides"
    );
    assert_eq!(body["code"], "QUEUE_PASS_REQUIRED", "{body}");
    assert_eq!(body["payment"], "/payments/{orderId}", "{body}");
    assert_eq!(to_origin, 0, "no origin call for the waiting one");
}

/// The line retries its confirms as a million people would, each at the user window's
/// rate and past it: every one is refused at the edge, and neither the room nor the
/// origin hears of any — the edge's whole reason to exist.
#[tokio::test]
async fn a_waiting_lines_flood_of_confirms_reaches_neither_the_room_nor_the_origin() {
    const WAITING: usize = 20;
    const EACH: usize = 15;
    let system = start(&[("QUEUE_ADMIT_LIMIT", "1"), ("GATED_EVENTS", EVENT)]).await;
    define(
        &system,
        json!({ "eventId": EVENT, "stock": 10, "amount": 1000 }),
    )
    .await;
    let admitted = system.token("holder", 600);
    assert_eq!(enter(&system, &admitted, EVENT).await["admitted"], true);
    let mut line = Vec::new();
    for index in 0..WAITING {
        let token = system.token(&format!("waiting-{index}"), 600);
        let entered = enter(&system, &token, EVENT).await;
        assert_eq!(entered["admitted"], false, "{entered}");
        let ticket = entered["ticket"].as_str().expect("a ticket").to_owned();
        line.push((token, ticket));
    }
    // Every place in the isolate's copy of the snapshot before the flood.
    let (last_token, last_ticket) = line.last().expect("a line");
    ticket_poll_until(&system, last_token, EVENT, last_ticket, |p| {
        p["position"].is_u64()
    })
    .await;
    let before = health(&system, &system.edge).await;
    let origin_before = origin_confirms(&system).await;

    let flood = line.iter().enumerate().map(|(index, (token, ticket))| {
        let system = &system;
        async move {
            let mut codes = Vec::new();
            for attempt in 0..EACH {
                let order = format!("order-{index}-{attempt}");
                let answer = confirm(system, token, &order, ticket).await;
                let status = answer.status();
                let body: Value = answer.json().await.expect("a JSON body");
                codes.push((status, body["code"].as_str().unwrap_or_default().to_owned()));
            }
            codes
        }
    });
    let answers: Vec<_> = futures_util::future::join_all(flood)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(answers.len(), WAITING * EACH);
    let refused = (
        StatusCode::TOO_MANY_REQUESTS,
        "QUEUE_PASS_REQUIRED".to_owned(),
    );
    assert!(
        answers.iter().all(|answer| *answer == refused),
        "{answers:?}"
    );

    let after = health(&system, &system.edge).await;
    let grew = |name: &str| count(&after, name) - count(&before, name);
    assert_eq!(
        grew("roomCalls"),
        grew("snapshotsFetched") + grew("snapshotsFailed"),
        "only the snapshot's refreshes: {after}"
    );
    assert_eq!(
        grew("refusedFromMemory"),
        (WAITING * EACH) as u64,
        "{after}"
    );
    assert_eq!(
        origin_confirms(&system).await,
        origin_before,
        "0 origin calls"
    );
    assert_eq!(system.ledger().await["requestCount"], 0);
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
/// the new ticket: refused at the edge, the body naming where the paid order is read —
/// and read there; the same retry without the waiting ticket is replayed by the origin.
#[tokio::test]
async fn a_paid_order_retried_with_a_waiting_ticket_is_pointed_to_its_outcome() {
    let (system, [(token, ticket), (waiting, waiting_ticket)]) = one_admitted_one_waiting().await;
    let first = confirm(&system, &token, "order-b1", &ticket).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.expect("a JSON body");
    assert_eq!(first["status"], "APPROVED", "{first}");
    // The pass spent, the other buyer holds the one pass; the first enters again.
    ticket_poll_until(&system, &waiting, EVENT, &waiting_ticket, |p| {
        p["admitted"] == true
    })
    .await;
    let back = enter(&system, &token, EVENT).await;
    assert_eq!(back["admitted"], false, "{back}");
    let new_ticket = back["ticket"].as_str().expect("a ticket");
    // The isolate's snapshot shows the new place waiting.
    ticket_poll_until(&system, &token, EVENT, new_ticket, |p| {
        p["admitted"] == false && p["position"].is_u64()
    })
    .await;

    let again = confirm(&system, &token, "order-b1", new_ticket).await;
    assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS);
    let refused: Value = again.json().await.expect("a JSON body");
    assert_eq!(refused["code"], "QUEUE_PASS_REQUIRED", "{refused}");
    let outcome = refused["payment"].as_str().expect("where the outcome is");
    let read = system
        .http
        .get(format!(
            "{}{}",
            system.edge,
            outcome.replace("{orderId}", "order-b1")
        ))
        .bearer_auth(&token)
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(read.status(), StatusCode::OK);
    let read: Value = read.json().await.expect("a JSON body");
    assert_eq!(read["status"], "APPROVED", "{read}");
    assert_eq!(read["orderId"], "order-b1", "{read}");

    let without_ticket = system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(&token)
        .header("idempotency-key", "order-b1")
        .json(&json!({
            "orderId": "order-b1",
            "paymentKey": "pk-order-b1",
            "amount": 1000,
            "eventId": EVENT,
        }))
        .send()
        .await
        .expect("the edge answers");
    assert_replayed(without_ticket, StatusCode::CREATED, &first).await;
    assert_eq!(system.ledger().await["requestCount"], 1, "bought once");
}
