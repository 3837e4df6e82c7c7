//! End to end: queue tickets. Entering answers a ticket; a poll that carries it is
//! answered from the room's snapshot, which each isolate fetches at most once a second —
//! and says the same as the room itself once the snapshot has caught up, through
//! enters, leaves, expiries and a sell-out. A ticket that is not the caller's, altered,
//! expired or of a reset room is refused, never read as someone else's place.

use crate::support;

use std::time::{Duration, Instant};

use harness::eventually::eventually;
use harness::signed::now_ms;
use reqwest::StatusCode;
use rules::queue::ticket::{self, Held, TICKET_TTL_SECS};
use serde_json::{json, Value};
use support::room::{count, enter, health, leave, start, status, ticket_poll};
use support::{EdgeSetup, System};

const EVENT: &str = "drop-tickets";
const TICKET_SECRET: &str = "queue-ticket-secret-for-the-tests-0123456789";

async fn start_room() -> System {
    start(&[
        ("QUEUE_ADMIT_LIMIT", "2"),
        ("QUEUE_PASS_TTL_SECONDS", "3"),
        ("QUEUE_TICKET_SECRET", TICKET_SECRET),
        ("GATED_EVENTS", EVENT),
    ])
    .await
}

async fn poll_with(system: &System, token: &str, ticket: &str) -> reqwest::Response {
    ticket_poll(system, token, EVENT, ticket).await
}

/// What both answers must agree on.
fn place(answer: &Value) -> Value {
    json!([
        answer["position"],
        answer["admitted"],
        answer["passExpiresAt"],
        answer["soldOut"],
        answer["paused"]
    ])
}

/// Waits until every user's ticket poll says what the room says (404s included).
async fn agree(system: &System, users: &[(String, String)]) {
    eventually(
        "the snapshot caught up with the room",
        Duration::from_secs(10),
        Duration::from_millis(200),
        || async {
            for (token, ticket) in users {
                let (from_room, from_ticket) = (
                    status(system, token, EVENT).await,
                    poll_with(system, token, ticket).await,
                );
                let seen = (from_room.status(), from_ticket.status());
                let (room, read) = (
                    from_room.json::<Value>().await.unwrap_or_default(),
                    from_ticket.json::<Value>().await.unwrap_or_default(),
                );
                if seen.0 != seen.1 || (seen.0 == StatusCode::OK && place(&room) != place(&read)) {
                    return Err(format!("room {seen:?} {room}, ticket {read}"));
                }
                if seen.1 == StatusCode::OK && !read["asOf"].is_i64() {
                    return Err(format!("no asOf: {read}"));
                }
            }
            Ok(())
        },
    )
    .await;
}

/// The `/healthz` of the edge isolate at `edge`.
#[tokio::test]
async fn a_ticket_poll_answers_as_the_room_does_through_leaves_expiries_and_a_sell_out() {
    let system = start_room().await;
    let (status, _) = system
        .set_event(json!({ "eventId": EVENT, "stock": 1, "amount": 1000, "gated": false }))
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut users = Vec::new();
    for n in 0..8 {
        let token = system.token(&format!("user-{n}"), 600);
        let entered = enter(&system, &token, EVENT).await;
        let ticket = entered["ticket"].as_str().expect("a ticket").to_owned();
        users.push((token, ticket));
    }
    agree(&system, &users).await;

    leave(&system, &users[0].0, EVENT).await;
    agree(&system, &users).await;

    // The two passes (3 s) run out unused: the alarm admits the next two.
    tokio::time::sleep(Duration::from_secs(4)).await;
    agree(&system, &users).await;

    // One unit, bought; the next confirm meets SOLD_OUT, which closes the room.
    for (order, outcome) in [
        ("order-1", StatusCode::CREATED),
        ("order-2", StatusCode::CONFLICT),
    ] {
        let body = json!({ "orderId": order, "paymentKey": format!("pk-{order}"), "amount": 1000, "eventId": EVENT });
        let answer = system
            .http
            .post(format!("{}/payments/confirm", system.edge))
            .bearer_auth(&users[4].0)
            .header("idempotency-key", order)
            .json(&body)
            .send()
            .await
            .expect("the edge answers");
        assert_eq!(answer.status(), outcome);
    }
    eventually(
        "sold out",
        Duration::from_secs(10),
        Duration::from_millis(200),
        || async {
            let read: Value = poll_with(&system, &users[7].0, &users[7].1)
                .await
                .json()
                .await
                .unwrap_or_default();
            (read["soldOut"] == true)
                .then_some(())
                .ok_or(read.to_string())
        },
    )
    .await;
    agree(&system, &users).await;
}

#[tokio::test]
async fn a_crowd_polling_with_tickets_costs_the_room_one_snapshot_a_second() {
    let system = start_room().await;
    let token = system.token("user-1", 600);
    let ticket = enter(&system, &token, EVENT).await["ticket"]
        .as_str()
        .expect("a ticket")
        .to_owned();
    let before = health(&system, &system.edge).await;
    let started = Instant::now();
    // 16 at once for 3 s: one poll refreshes the copy as it ages while the others read
    // it (a fetch each would be 16 a second).
    let lanes = (0..16).map(|_| async {
        let mut polled = 0;
        while started.elapsed() < Duration::from_secs(3) {
            let answer = poll_with(&system, &token, &ticket).await;
            let status = answer.status();
            assert_eq!(status, StatusCode::OK, "{}", system.log("edge"));
            polled += 1;
        }
        polled
    });
    let polled: u64 = futures_util::future::join_all(lanes).await.iter().sum();
    let elapsed = started.elapsed();
    let after = health(&system, &system.edge).await;
    let grew = |name: &str| count(&after, name) - count(&before, name);
    let (read, fetched) = (grew("snapshotsRead"), grew("snapshotsFetched"));
    println!("{polled} ticket polls in {elapsed:?}: {fetched} snapshots fetched from the room");
    assert_eq!(read, polled, "every poll was answered from a snapshot");
    assert_eq!(
        grew("roomCalls"),
        fetched,
        "the room was called for its snapshot only"
    );
    assert!(
        fetched <= 2 * elapsed.as_secs() + 1,
        "{fetched} fetches in {elapsed:?}"
    );
}

#[tokio::test]
async fn one_fetch_from_the_room_serves_every_isolate_of_the_data_centre() {
    let system = System::start_with(EdgeSetup {
        vars: vec![
            ("QUEUE_TICKET_SECRET", TICKET_SECRET.to_owned()),
            ("GATED_EVENTS", EVENT.to_owned()),
        ],
        twin: true,
        ..EdgeSetup::default()
    })
    .await;
    let twin = system.edge_twin.clone().expect("the edge's twin");
    let token = system.token("user-1", 600);
    let ticket = enter(&system, &token, EVENT).await["ticket"]
        .as_str()
        .expect("a ticket")
        .to_owned();
    let first: Value = poll_with(&system, &token, &ticket)
        .await
        .json()
        .await
        .expect("JSON");
    let answer = system
        .http
        .get(format!("{twin}/queue/{EVENT}/status"))
        .bearer_auth(&token)
        .header("queue-ticket", &ticket)
        .send()
        .await
        .expect("the twin answers");
    assert_eq!(answer.status(), StatusCode::OK);
    let second: Value = answer.json().await.expect("JSON");
    assert_eq!(place(&second), place(&first));
    assert_eq!(
        second["asOf"], first["asOf"],
        "the very copy the edge fetched"
    );
    let (edge, twin) = (
        health(&system, &system.edge).await,
        health(&system, &twin).await,
    );
    assert_eq!(count(&edge, "snapshotsFetched"), 1, "{edge}");
    assert_eq!(
        (
            count(&twin, "snapshotsShared"),
            count(&twin, "snapshotsFetched"),
            count(&twin, "roomCalls")
        ),
        (1, 0, 0),
        "the twin read the data centre's copy and never called the room: {twin}"
    );
}

#[tokio::test]
async fn a_ticket_not_the_callers_altered_expired_or_of_a_reset_room_is_refused() {
    let system = start_room().await;
    let (alice, bob) = (system.token("alice", 600), system.token("bob", 600));
    let alices = enter(&system, &alice, EVENT).await["ticket"]
        .as_str()
        .expect("a ticket")
        .to_owned();
    let bobs = enter(&system, &bob, EVENT).await["ticket"]
        .as_str()
        .expect("a ticket")
        .to_owned();
    let refused = |code: &'static str, status: StatusCode| (status, code.to_owned());
    let answer_of = |response: reqwest::Response| async move {
        let status = response.status();
        let body: Value = response.json().await.expect("JSON");
        (status, body["code"].as_str().unwrap_or("-").to_owned())
    };
    let invalid = refused("TICKET_INVALID", StatusCode::FORBIDDEN);
    assert_eq!(
        answer_of(poll_with(&system, &alice, &bobs).await).await,
        invalid
    );
    let altered = alices.replacen(".0.", ".1.", 1);
    assert_ne!(altered, alices);
    assert_eq!(
        answer_of(poll_with(&system, &alice, &altered).await).await,
        invalid
    );
    assert_eq!(
        answer_of(poll_with(&system, &alice, "qt1.x").await).await,
        invalid
    );

    let key = ticket::derive_key(TICKET_SECRET.as_bytes());
    let now_secs = now_ms() / 1000;
    let room = u64::from_str_radix(alices.split('.').nth(1).expect("a room"), 16).unwrap();
    let held = Held { room, seq: 0 };
    let old = ticket::issue(&key, EVENT, "alice", held, now_secs - TICKET_TTL_SECS - 1);
    assert_eq!(
        answer_of(poll_with(&system, &alice, &old).await).await,
        refused("TICKET_EXPIRED", StatusCode::UNAUTHORIZED)
    );
    let reset = Held {
        room: room ^ 1,
        seq: 0,
    };
    let of_another_room = ticket::issue(&key, EVENT, "alice", reset, now_secs);
    assert_eq!(
        answer_of(poll_with(&system, &alice, &of_another_room).await).await,
        refused("NOT_IN_QUEUE", StatusCode::NOT_FOUND)
    );
    // Alice's own ticket reads her place; once she has left, it names no one.
    assert_eq!(
        poll_with(&system, &alice, &alices).await.status(),
        StatusCode::OK
    );
    leave(&system, &alice, EVENT).await;
    eventually(
        "the snapshot saw her leave",
        Duration::from_secs(5),
        Duration::from_millis(200),
        || async {
            let seen = answer_of(poll_with(&system, &alice, &alices).await).await;
            (seen == refused("NOT_IN_QUEUE", StatusCode::NOT_FOUND))
                .then_some(())
                .ok_or(format!("{seen:?}"))
        },
    )
    .await;
}

/// The room's identity is stored: after a restart every room is restored from its
/// storage, and the tickets it issued still read their places.
#[tokio::test]
async fn a_ticket_still_reads_its_place_after_the_edge_restarts() {
    let mut system = start_room().await;
    let mut users = Vec::new();
    for n in 0..3 {
        let token = system.token(&format!("user-{n}"), 600);
        let entered = enter(&system, &token, EVENT).await;
        users.push((
            token,
            entered["ticket"].as_str().expect("a ticket").to_owned(),
        ));
    }
    system.restart_edge().await;
    let (token, ticket) = &users[2];
    let read: Value = poll_with(&system, token, ticket)
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(read["position"], 3, "{read}");
    agree(&system, &users).await;
    // Entering again after the restart keeps the place, in the same room.
    let again = enter(&system, token, EVENT).await;
    assert_eq!(again["position"], 3);
    let room_of = |ticket: &str| ticket.split('.').nth(1).map(str::to_owned);
    assert_eq!(
        room_of(again["ticket"].as_str().expect("a ticket")),
        room_of(ticket)
    );
}
