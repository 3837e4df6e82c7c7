//! End to end, a sharded event through the real edge in workerd, with the enter window on
//! (tests/shards.rs runs without it): each arrival shard has its own enter window, so the
//! event admits its shards × the limit while each shard's window still refuses past it —
//! from the isolate's memory once known full; passes by rate; and the alarm chain that
//! admits the next in line when a pass runs out, with nobody polling.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use harness::signed::now_ms;
use reqwest::{Method, StatusCode};
use rules::queue::arrivals::shard_of;
use rules::queue::ticket::derive_key;
use serde_json::{json, Value};
use support::room::{define, enter, health, leave, queue_call, room_status, start, status};
use support::System;

const SHARDED: &str = "drop-sharded";
const SINGLE: &str = "drop-single";
const SHARDS: u32 = 4;
/// Each window's enters: a minute long, so a slow machine cannot see one end mid-test.
const LIMIT: usize = 3;
/// Users per shard, and of the unsharded event.
const PER_SHARD: usize = 5;
const TICKET_SECRET: &str = "the shard windows test's ticket secret, 32+ bytes";

/// The edge's counters that grew from `before` to `after`.
fn grew(before: &Value, after: &Value, name: &str) -> u64 {
    after[name].as_u64().unwrap_or(0) - before[name].as_u64().unwrap_or(0)
}

/// `POST /queue/{event}/enter`: its status and body.
async fn try_enter(system: &System, token: &str, event: &str) -> (StatusCode, Value) {
    let answer = queue_call(system, token, Method::POST, &format!("{event}/enter")).await;
    (answer.status(), answer.json().await.expect("JSON"))
}

#[tokio::test]
async fn a_sharded_events_enters_are_counted_in_one_window_per_arrival_shard() {
    let system = start(&[
        (
            "RATE_LIMITED_ROUTES",
            "POST /queue/*/enter user=5/1m global=3/1m",
        ),
        ("QUEUE_TICKET_SECRET", TICKET_SECRET),
    ])
    .await;
    for (event, shards) in [(SHARDED, SHARDS), (SINGLE, 1)] {
        define(
            &system,
            json!({"eventId": event, "stock": 100, "amount": 1000, "gated": true,
                   "shards": shards}),
        )
        .await;
    }
    // PER_SHARD users in each of the sharded event's shards, as the server's hash puts them.
    let key = derive_key(TICKET_SECRET.as_bytes());
    let mut by_shard: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for n in 0.. {
        let user = format!("user-{n:03}");
        let users = by_shard
            .entry(shard_of(&key, SHARDED, &user, SHARDS))
            .or_default();
        if users.len() < PER_SHARD {
            users.push(user);
        }
        if by_shard.values().all(|users| users.len() == PER_SHARD) && by_shard.len() == 4 {
            break;
        }
    }

    let before = health(&system, &system.edge).await;
    let mut admitted_in_all = 0;
    for (shard, users) in &by_shard {
        let mut answers = Vec::new();
        for user in users {
            let (code, body) = try_enter(&system, &system.token(user, 600), SHARDED).await;
            answers.push(code);
            if code == StatusCode::TOO_MANY_REQUESTS {
                assert_eq!(body["code"], "RATE_LIMITED", "{body}");
            }
        }
        let admitted = answers.iter().filter(|c| **c == StatusCode::OK).count();
        assert_eq!(
            answers[..LIMIT],
            [StatusCode::OK; LIMIT],
            "shard {shard}: {answers:?}"
        );
        assert_eq!(admitted, LIMIT, "shard {shard}'s window holds: {answers:?}");
        admitted_in_all += admitted;
    }
    let after = health(&system, &system.edge).await;
    // Per shard: the window's object refuses the first past the limit, the isolate's
    // memory the next — without any object call.
    assert_eq!(
        grew(&before, &after, "refusedFromMemory"),
        u64::from(SHARDS) * (PER_SHARD - LIMIT - 1) as u64,
        "{after}"
    );
    assert_eq!(
        grew(&before, &after, "roomCalls"),
        u64::from(SHARDS) * LIMIT as u64,
        "only the admitted enters reach a shard: {after}"
    );

    let mut single_admitted = 0;
    for user in by_shard.values().flatten() {
        let (code, _) = try_enter(&system, &system.token(user, 600), SINGLE).await;
        single_admitted += usize::from(code == StatusCode::OK);
    }
    assert_eq!(single_admitted, LIMIT, "the unsharded room's one window");
    assert_eq!(admitted_in_all, SHARDS as usize * LIMIT);
}

/// Passes by rate on a sharded event: the minute's passes are out though places are free.
#[tokio::test]
async fn a_sharded_drop_issues_passes_by_rate() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    define(
        &system,
        json!({"eventId": SHARDED, "stock": 100, "amount": 1000, "gated": true,
               "admitLimit": 2, "admitPerMinute": 3, "shards": 8}),
    )
    .await;
    let tokens: Vec<String> = (0..5)
        .map(|n| system.token(&format!("u-{n}"), 600))
        .collect();
    for (at, token) in tokens.iter().enumerate() {
        let entered = enter(&system, token, SHARDED).await;
        assert_eq!(entered["position"], at + 1, "{entered}");
        assert_eq!(entered["admitted"], at < 2, "{entered}");
    }
    // The two with passes leave through their shards: one more pass, the minute's third.
    // A leave reaches the room with its shard's next batch, so the third may be admitted
    // (after the first's leave) while the second is still in line ahead.
    leave(&system, &tokens[0], SHARDED).await;
    leave(&system, &tokens[1], SHARDED).await;
    support::room::status_until(&system, &tokens[2], SHARDED, |now| {
        now["admitted"] == true && now["position"] == 1
    })
    .await;
    let fourth =
        support::room::status_until(&system, &tokens[3], SHARDED, |now| now["position"] == 2).await;
    assert_eq!(
        fourth["admitted"], false,
        "a place free, the rate spent: {fourth}"
    );
    let room = room_status(&system, SHARDED).await;
    assert_eq!(
        (
            room["passesIssuedLastMinute"].clone(),
            room["passesLive"].clone()
        ),
        (json!(3), json!(1)),
        "{room}"
    );
}

/// The alarm chain on a sharded event: with nobody polling, the pass that runs out
/// admits the next in line at its end, not when the next asks.
#[tokio::test]
async fn a_sharded_drops_alarm_admits_the_next_when_a_pass_runs_out() {
    const TTL_MS: i64 = 6_000;
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    define(
        &system,
        json!({"eventId": SHARDED, "stock": 100, "amount": 1000, "gated": true,
               "admitLimit": 1, "passTtlSeconds": TTL_MS / 1000, "shards": 8}),
    )
    .await;
    let (first, second) = (system.token("first", 600), system.token("second", 600));
    let pass = enter(&system, &first, SHARDED).await;
    assert_eq!(pass["admitted"], true, "{pass}");
    let first_ends = pass["passExpiresAt"].as_i64().expect("a pass's end");
    assert_eq!(enter(&system, &second, SHARDED).await["position"], 2);
    // Nobody polls until well past the first pass's end (a poll would expire it itself).
    let wait = first_ends + 4_000 - now_ms();
    tokio::time::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0))).await;
    let asked = now_ms();
    let now: Value = status(&system, &second, SHARDED)
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        (now["admitted"].clone(), now["position"].clone()),
        (json!(true), json!(1))
    );
    let second_ends = now["passExpiresAt"].as_i64().expect("a pass's end");
    // Issued by the alarm at the first's end, the second's pass ends about 2 s after it
    // asked; issued by the poll, a whole TTL after. Halfway allows the alarm 2 s late.
    assert!(
        second_ends < asked + TTL_MS - 2_000,
        "the second's pass began {} ms after the first's end: at the poll, not the alarm",
        second_ends - TTL_MS - first_ends
    );
}
