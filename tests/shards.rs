//! End to end: an event whose enters are spread over 8 arrival shards (`shards` on
//! `POST /admin/events`), through the real edge in workerd. Everyone is numbered once,
//! without gaps, in one order; each enter's position is exact; each shard holds exactly
//! the users the server's hash gives it, within 10 % of an eighth; ticket polls call no
//! object; leavers are taken out with the next batch; entering again keeps the number;
//! and after `kill -9` of the edge the numbering goes on where it was. A sharded drop's
//! prequeue is drawn into one order; a user racing themselves is one arrival; the
//! shards stay as first defined; a pass taken through a shard pays for one order; a held
//! drop issues no pass until it resumes; and a closed drop turns away whoever comes
//! through a shard.

use crate::support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use harness::eventually::eventually;
use reqwest::StatusCode;
use rules::queue::arrivals::shard_of;
use rules::queue::ticket::derive_key;
use serde_json::{json, Value};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions as _, Connection as _};
use support::room::{define, each, enter, health, leave, start, ticket_poll};
use support::System;

const EVENT: &str = "drop-sharded";
const SHARDS: u32 = 8;
const PEOPLE: usize = 2_000;
const TICKET_SECRET: &str = "the shards test's ticket secret, 32+ bytes";

fn seq_of(ticket: &Value) -> u64 {
    ticket
        .as_str()
        .and_then(|ticket| ticket.split('.').nth(2))
        .and_then(|seq| seq.parse().ok())
        .unwrap_or_else(|| panic!("a ticket with an arrival number: {ticket}"))
}

async fn poll(system: &System, token: &str, ticket: &str) -> Value {
    let answer = ticket_poll(system, token, EVENT, ticket).await;
    assert_eq!(answer.status(), StatusCode::OK);
    answer.json().await.expect("JSON")
}

/// The users each shard's SQLite file holds a number for, largest first.
async fn held_by_shards(system: &System) -> Vec<i64> {
    let mut counts = Vec::new();
    for file in system.edge_object_files("ArrivalShard") {
        let mut db = SqliteConnectOptions::new()
            .filename(&file)
            .connect()
            .await
            .expect("a shard's SQLite file");
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM entries")
            .fetch_one(&mut db)
            .await
            .expect("a count");
        db.close().await.expect("closed");
        counts.push(count);
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts
}

#[tokio::test]
async fn an_events_arrivals_over_eight_shards_are_numbered_once_in_one_exact_order() {
    let mut system = start(&[
        ("RATE_LIMITED_ROUTES", "none"),
        ("QUEUE_TICKET_SECRET", TICKET_SECRET),
    ])
    .await;
    define(
        &system,
        json!({"eventId": EVENT, "stock": 10_000, "amount": 1000,
                          "gated": true, "admitLimit": 10, "shards": SHARDS}),
    )
    .await;

    let users: Vec<String> = (0..PEOPLE).map(|n| format!("user-{n:04}")).collect();
    let tokens: Vec<String> = users.iter().map(|user| system.token(user, 600)).collect();
    let entered = {
        let system = &system;
        each(&tokens, |token| async move {
            enter(system, &token, EVENT).await
        })
        .await
    };
    let seqs: Vec<u64> = entered
        .iter()
        .map(|answer| seq_of(&answer["ticket"]))
        .collect();
    for (answer, seq) in entered.iter().zip(&seqs) {
        assert_eq!(
            answer["position"],
            json!(seq + 1),
            "exact as answered: everyone numbered before is ahead: {answer}"
        );
    }
    let mut sorted = seqs.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..PEOPLE as u64).collect::<Vec<_>>(),
        "everyone numbered once, no gaps"
    );

    let key = derive_key(TICKET_SECRET.as_bytes());
    let mut expected: HashMap<u32, i64> = HashMap::new();
    for user in &users {
        *expected
            .entry(shard_of(&key, EVENT, user, SHARDS))
            .or_default() += 1;
    }
    let mut expected: Vec<i64> = expected.into_values().collect();
    expected.sort_unstable_by(|a, b| b.cmp(a));
    let held = held_by_shards(&system).await;
    assert_eq!(
        held, expected,
        "each shard holds the users the hash gives it"
    );
    let fair = PEOPLE as f64 / f64::from(SHARDS);
    let spread = held
        .iter()
        .map(|count| (*count as f64 - fair).abs() / fair)
        .fold(0.0, f64::max);
    println!(
        "shares {held:?}: {:.1} % from an eighth at most",
        spread * 100.0
    );
    assert!(spread < 0.1, "{held:?}");

    // Ticket polls read the head's snapshot: the only object calls are its fetches (a
    // fetch that failed on a loaded machine is asked again: a call each time). Beside
    // them, the origin's history sampler asks the edge for the open room's report every
    // 5 s (`origin/src/policy/history.rs`, INTERVAL_MS), a room call each: at most one
    // per 5 s the polls took, and one more for the tick they may straddle.
    let before = health(&system, &system.edge).await;
    let started = Instant::now();
    for at in (0..PEOPLE).step_by(40) {
        let ticket = entered[at]["ticket"].as_str().unwrap_or_default();
        let placed = poll(&system, &tokens[at], ticket).await;
        assert_eq!(placed["position"], json!(seqs[at] + 1), "{placed}");
    }
    let after = health(&system, &system.edge).await;
    let sampler_ticks = started.elapsed().as_secs() / 5 + 1;
    let grew = |name: &str| after[name].as_u64().unwrap_or(0) - before[name].as_u64().unwrap_or(0);
    let fetches = grew("snapshotsFetched") + grew("snapshotsFailed");
    assert!(
        (fetches..=fetches + sampler_ticks).contains(&grew("roomCalls")),
        "{fetches} fetches, {sampler_ticks} sampler ticks: {after}"
    );

    // The first twenty in line leave: taken out with their shards' next batches.
    let by_seq = |seq: u64| seqs.iter().position(|s| *s == seq).unwrap_or(0);
    for seq in 0..20 {
        leave(&system, &tokens[by_seq(seq)], EVENT).await;
    }
    let probe = by_seq(100);
    let ticket = entered[probe]["ticket"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    eventually(
        "the leavers out of the line",
        Duration::from_secs(20),
        Duration::from_millis(200),
        || async {
            let placed = poll(&system, &tokens[probe], &ticket).await;
            (placed["position"] == 81)
                .then_some(())
                .ok_or(placed.to_string())
        },
    )
    .await;
    let again = enter(&system, &tokens[probe], EVENT).await;
    assert_eq!(
        seq_of(&again["ticket"]),
        100,
        "entering again keeps the number"
    );

    system.restart_edge().await;
    let newcomers: Vec<String> = (0..40)
        .map(|n| system.token(&format!("late-{n}"), 600))
        .collect();
    let late = {
        let system = &system;
        each(&newcomers, |token| async move {
            enter(system, &token, EVENT).await
        })
        .await
    };
    let mut late_seqs: Vec<u64> = late
        .iter()
        .map(|answer| seq_of(&answer["ticket"]))
        .collect();
    late_seqs.sort_unstable();
    assert_eq!(
        late_seqs,
        (PEOPLE as u64..PEOPLE as u64 + 40).collect::<Vec<_>>(),
        "numbered on from where the line was"
    );
    let placed = poll(&system, &tokens[probe], &ticket).await;
    assert_eq!(placed["position"], 81, "places kept through the restart");
}

/// A sharded drop with a prequeue: its people join through their shards, the head keeps
/// the prequeue and draws it at the opening, and every place is the drawn order's.
#[tokio::test]
async fn a_sharded_drops_prequeue_is_drawn_into_one_order() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    let opening_at = |opens_at: i64| {
        system.set_event(json!({"eventId": EVENT, "stock": 100, "amount": 1000,
                                "admitLimit": 10, "shards": 4, "opensAt": opens_at,
                                "prequeueFrom": harness::signed::now_ms() - 1_000}))
    };
    let (code, defined) = opening_at(harness::signed::now_ms() + 600_000).await;
    assert_eq!(code, StatusCode::OK, "{defined}");
    let users: Vec<String> = (0..120).map(|n| format!("user-{n:03}")).collect();
    let tokens: Vec<String> = users.iter().map(|user| system.token(user, 600)).collect();
    let system = &system;
    let joined = each(&tokens, |token| async move {
        enter(system, &token, EVENT).await
    })
    .await;
    for answer in &joined {
        assert_eq!(
            (answer["prequeued"].clone(), answer.get("ticket")),
            (json!(true), None),
            "{answer}"
        );
    }
    let (code, moved) = opening_at(harness::signed::now_ms() + 2_000).await;
    assert_eq!(code, StatusCode::OK, "{moved}");
    let room = eventually(
        "the prequeue drawn",
        Duration::from_secs(60),
        Duration::from_millis(200),
        || async {
            let (_, event) =
                support::room::admin(system, reqwest::Method::GET, &format!("/{EVENT}")).await;
            let room = event["roomStatus"].clone();
            (room["drawSeed"].is_string() && room["drawing"] == false)
                .then_some(room.clone())
                .ok_or(room.to_string())
        },
    )
    .await;
    assert_eq!(room["drawn"], 120, "{room}");
    let mut seed = [0u8; rules::queue::draw::SEED_BYTES];
    hex::decode_to_slice(room["drawSeed"].as_str().unwrap_or_default(), &mut seed)
        .expect("a hex seed");
    let order = rules::queue::draw::order(seed, &users);
    let placed = each(&tokens, |token| async move {
        let answer = support::room::status(system, &token, EVENT).await;
        answer.json::<Value>().await.expect("JSON")
    })
    .await;
    for (user, answer) in users.iter().zip(&placed) {
        let at = order.iter().position(|u| u == user).map(|at| at + 1);
        assert_eq!(answer["position"], json!(at), "{user}: {answer}");
        assert_eq!(
            answer["admitted"],
            json!(at <= Some(10)),
            "{user}: {answer}"
        );
    }
    // Entering now hands each their ticket, at their drawn place.
    let first = enter(
        system,
        &tokens[users.iter().position(|u| *u == order[0]).unwrap_or(0)],
        EVENT,
    )
    .await;
    assert_eq!(
        (first["position"].clone(), seq_of(&first["ticket"])),
        (json!(1), 0)
    );
}

/// A client racing itself — the same user entering ten times at once — is one arrival in
/// one shard; and an event's shards, once it has a room, stay as they are.
#[tokio::test]
async fn a_user_racing_themselves_is_numbered_once_and_the_shards_stay_fixed() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    let event = json!({"eventId": EVENT, "stock": 10, "amount": 1000, "gated": true,
                       "shards": 16});
    define(&system, event.clone()).await;
    let racer = system.token("racer", 600);
    let tokens = vec![racer; 10];
    let system = &system;
    let answers = each(&tokens, |token| async move {
        enter(system, &token, EVENT).await
    })
    .await;
    let seqs: Vec<u64> = answers
        .iter()
        .map(|answer| seq_of(&answer["ticket"]))
        .collect();
    assert_eq!(seqs, vec![0; 10], "one number however often at once");
    let other = enter(system, &system.token("next", 600), EVENT).await;
    assert_eq!(other["position"], 2, "{other}");

    let mut changed = event.clone();
    changed["shards"] = json!(4);
    let (code, refused) = system.set_event(changed).await;
    assert_eq!(
        (code, refused["code"].clone()),
        (StatusCode::CONFLICT, json!("SHARDS_FIXED")),
        "{refused}"
    );
    let mut both = event;
    both["expectedArrivalsPerMinute"] = json!(1_000_000);
    let (code, refused) = system.set_event(both).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{refused}");
}

/// The gate on a sharded event: a pass taken through a shard pays for one order, the paid
/// retry is replayed, another order is refused; once the drop closes a newcomer coming
/// through a shard is turned away.
#[tokio::test]
async fn a_sharded_events_pass_pays_for_one_order_and_a_closed_drop_turns_newcomers_away() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    define(
        &system,
        json!({"eventId": EVENT, "stock": 10, "amount": 1000, "gated": true,
                          "admitLimit": 1, "shards": 8}),
    )
    .await;
    let buyer = system.token("buyer", 600);
    assert_eq!(enter(&system, &buyer, EVENT).await["admitted"], true);
    let paid = support::room::confirm(&system, &buyer, "order-s1", Some(EVENT)).await;
    assert_eq!(paid.status(), StatusCode::CREATED);
    let paid: Value = paid.json().await.expect("JSON");
    assert_eq!(paid["status"], "APPROVED", "{paid}");
    let again = support::room::confirm(&system, &buyer, "order-s1", Some(EVENT)).await;
    assert_eq!(
        (again.status(), again.json::<Value>().await.expect("JSON")),
        (StatusCode::CREATED, paid),
        "the paid retry replayed"
    );
    let other = support::room::confirm(&system, &buyer, "order-s2", Some(EVENT)).await;
    assert!(
        [StatusCode::CONFLICT, StatusCode::TOO_MANY_REQUESTS].contains(&other.status()),
        "the spent pass buys nothing else: {}",
        other.status()
    );

    let (code, _) =
        support::room::admin(&system, reqwest::Method::POST, &format!("/{EVENT}/close")).await;
    assert_eq!(code, StatusCode::OK);
    let late = enter(&system, &system.token("late", 600), EVENT).await;
    assert_eq!(
        (
            late["position"].clone(),
            late["closed"].clone(),
            late.get("ticket")
        ),
        (json!(0), json!(true), None),
        "{late}"
    );
}

/// An operator's hold on a sharded drop: whoever comes through a shard keeps a place
/// and gets no pass until the drop resumes, even when the one ahead leaves through theirs.
#[tokio::test]
async fn a_held_sharded_drop_issues_no_pass_until_it_resumes() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    define(
        &system,
        json!({"eventId": EVENT, "stock": 5, "amount": 1000, "gated": true,
                          "admitLimit": 1, "shards": 8}),
    )
    .await;
    let (a, b) = (system.token("first", 600), system.token("second", 600));
    assert_eq!(enter(&system, &a, EVENT).await["admitted"], true);
    let path = |action: &str| format!("/{EVENT}/{action}");
    let (code, _) = support::room::admin(&system, reqwest::Method::POST, &path("pause")).await;
    assert_eq!(code, StatusCode::OK);
    let waiting = enter(&system, &b, EVENT).await;
    assert_eq!(
        (waiting["position"].clone(), waiting["paused"].clone()),
        (json!(2), json!(true)),
        "{waiting}"
    );
    leave(&system, &a, EVENT).await;
    let held = support::room::status_until(&system, &b, EVENT, |now| now["position"] == 1).await;
    assert_eq!(
        (held["admitted"].clone(), held["paused"].clone()),
        (json!(false), json!(true)),
        "moved up, no pass while held: {held}"
    );
    let (code, _) = support::room::admin(&system, reqwest::Method::POST, &path("resume")).await;
    assert_eq!(code, StatusCode::OK);
    let now = support::room::status_until(&system, &b, EVENT, |now| now["admitted"] == true).await;
    assert_eq!(now.get("paused"), None, "{now}");
}
