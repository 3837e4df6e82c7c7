//! End to end: a prequeue drawn in batches of two (`QUEUE_DRAW_BATCH=2`) through the
//! room's alarm, and what clients do while it runs — a newcomer arrives (placed behind
//! the whole prequeue, not among it), a prequeued user leaves (placed nowhere; nobody
//! else's order changes), another enters again and polls (kept in the draw, not sent
//! behind it). Afterwards every place re-derives from the seed and the kept list; and a
//! draw cut short by `kill -9` goes on from its last batch after the restart; a room drawn
//! by the release before batches stands drawn once upgraded.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use harness::signed::now_ms;
use reqwest::StatusCode;
use rules::queue::draw::{self, SEED_BYTES};
use serde_json::{json, Value};
use sqlx::Connection as _;
use support::room::{admin, each, enter, leave, room_status, start, status};
use support::System;

const EVENT: &str = "drop-batched";
const PEOPLE: usize = 200;
const BATCH: u64 = 2;

/// The drop defined with an opening far ahead, `PEOPLE` prequeued, then the opening
/// brought 2 s ahead and waited for: their ids and tokens.
async fn prequeued_at_the_opening(system: &System) -> (Vec<String>, Vec<String>) {
    let define = |opens_at: i64| {
        system.set_event(json!({
            "eventId": EVENT, "stock": 1000, "amount": 1000, "admitLimit": 10,
            "opensAt": opens_at, "prequeueFrom": now_ms() - 1_000,
        }))
    };
    let (code, defined) = define(now_ms() + 600_000).await;
    assert_eq!(code, StatusCode::OK, "{defined}");
    let users: Vec<String> = (0..PEOPLE).map(|n| format!("user-{n:03}")).collect();
    let tokens: Vec<String> = users.iter().map(|user| system.token(user, 600)).collect();
    each(&tokens, |token| async move {
        enter(system, &token, EVENT).await
    })
    .await;
    let opens_at = now_ms() + 2_000;
    let (code, moved) = define(opens_at).await;
    assert_eq!(code, StatusCode::OK, "{moved}");
    tokio::time::sleep(Duration::from_millis((opens_at - now_ms()).max(0) as u64)).await;
    (users, tokens)
}

/// The room's report once its draw is done.
async fn drawn(system: &System) -> Value {
    eventually(
        "the draw done",
        Duration::from_secs(300),
        Duration::from_millis(200),
        || async {
            let room = room_status(system, EVENT).await;
            if room["drawing"] == false {
                Ok(room)
            } else {
                Err(room.to_string())
            }
        },
    )
    .await
}

/// The draw's seed and the list the room keeps, as an operator reads them.
async fn seed_and_list(system: &System) -> ([u8; SEED_BYTES], Vec<String>) {
    let (code, list) = admin(
        system,
        reqwest::Method::GET,
        &format!("/{EVENT}/draw?limit=1000"),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{list}");
    assert_eq!(list["drawing"], false);
    let mut seed = [0u8; SEED_BYTES];
    let seed_hex = list["drawSeed"].as_str().expect("a seed");
    hex::decode_to_slice(seed_hex, &mut seed).expect("a hex seed");
    let kept = list["people"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|user| user.as_str().map(str::to_owned))
        .collect();
    (seed, kept)
}

/// Each user's status: its body, with the HTTP status as `httpStatus`.
async fn statuses(system: &System, tokens: &[String]) -> Vec<Value> {
    each(tokens, |token| async move {
        let answer = status(system, &token, EVENT).await;
        let code = answer.status();
        let mut body: Value = answer.json().await.expect("JSON");
        body["httpStatus"] = json!(code.as_u16());
        body
    })
    .await
}

#[tokio::test]
async fn a_draw_in_batches_keeps_the_prequeues_order_and_puts_newcomers_behind_it() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none"), ("QUEUE_DRAW_BATCH", "2")]).await;
    let system = &system;
    let (users, tokens) = prequeued_at_the_opening(system).await;

    // While it runs: the draw ranks everyone before it places anyone, a batch of two a
    // call — a few hundred calls, against the few these take.
    let newcomer = system.token("newcomer", 600);
    let arrived = enter(system, &newcomer, EVENT).await;
    assert_eq!(
        (
            arrived["drawing"].clone(),
            arrived.get("prequeued"),
            arrived.get("ticket")
        ),
        (json!(true), None, None),
        "a newcomer waits behind the draw, with no place yet: {arrived}"
    );
    let (leaver, again) = (&users[5], &tokens[6]);
    leave(system, &tokens[5], EVENT).await;
    let entered_again = enter(system, again, EVENT).await;
    let polled: Value = status(system, again, EVENT)
        .await
        .json()
        .await
        .expect("JSON");
    for answer in [&entered_again, &polled] {
        assert!(
            answer["drawing"] != true || answer["prequeued"] == true,
            "entering again keeps a prequeued user in the draw: {answer}"
        );
    }

    let room = drawn(system).await;
    let stayers: Vec<String> = users.iter().filter(|u| *u != leaver).cloned().collect();
    assert_eq!(
        (
            room["drawn"].clone(),
            room["prequeued"].clone(),
            room["lateArrivals"].clone()
        ),
        (json!(stayers.len()), json!(0), json!(0)),
        "{room}"
    );
    let batches = room["drawBatches"].as_u64().unwrap_or(0);
    assert!(
        batches >= 2 * stayers.len() as u64 / BATCH,
        "ranked and placed two at a time: {batches} batches"
    );
    let (seed, kept) = seed_and_list(system).await;
    let order = draw::order(seed, &stayers);
    assert_eq!(
        kept, order,
        "the kept list: everyone who stayed, in drawn order"
    );
    let placed = statuses(system, &tokens).await;
    for (user, answer) in users.iter().zip(&placed) {
        match order.iter().position(|u| u == user) {
            Some(at) => assert_eq!(answer["position"], json!(at + 1), "{user}: {answer}"),
            None => assert_eq!(
                (answer["httpStatus"].clone(), answer["code"].clone()),
                (json!(404), json!("NOT_IN_QUEUE")),
                "the leaver is in no line: {answer}"
            ),
        }
    }
    let newcomer_now: Value = status(system, &newcomer, EVENT)
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        newcomer_now["position"],
        json!(stayers.len() + 1),
        "behind the whole prequeue: {newcomer_now}"
    );
    let later = enter(system, &system.token("later", 600), EVENT).await;
    assert_eq!(
        (later["position"].clone(), later.get("drawing")),
        (json!(stayers.len() + 2), None),
        "after the draw, first come first served: {later}"
    );
}

/// Killed (`kill -9`) while the draw runs and started again: the draw goes on from the
/// last batch it stored — everyone placed once, in the drawn order.
#[tokio::test]
async fn a_draw_cut_short_by_a_crash_goes_on_from_its_last_batch() {
    let mut system = start(&[("RATE_LIMITED_ROUTES", "none"), ("QUEUE_DRAW_BATCH", "2")]).await;
    let (users, tokens) = prequeued_at_the_opening(&system).await;
    let midway = room_status(&system, EVENT).await;
    assert_eq!(midway["drawing"], true, "{midway}");
    system.restart_edge().await;
    let room = drawn(&system).await;
    assert_eq!(
        (room["drawn"].clone(), room["prequeued"].clone()),
        (json!(PEOPLE), json!(0)),
        "{room}"
    );
    let (seed, kept) = seed_and_list(&system).await;
    let order = draw::order(seed, &users);
    assert_eq!(kept, order, "each placed once, in drawn order");
    let placed = statuses(&system, &tokens).await;
    for (user, answer) in users.iter().zip(&placed) {
        let at = order.iter().position(|u| u == user).map(|at| at + 1);
        assert_eq!(answer["position"], json!(at), "{user}: {answer}");
    }
    assert_eq!(
        room["waiting"].as_u64().unwrap_or(0) + room["passesLive"].as_u64().unwrap_or(0),
        PEOPLE as u64,
        "nobody in line twice: {room}"
    );
}

/// A room drawn before draws ran in batches stored its seed and kept list but none of the
/// draw's progress: started by this release, its draw stands complete and every place holds.
#[tokio::test]
async fn a_room_drawn_by_the_release_before_batches_stands_drawn_after_an_upgrade() {
    let mut system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    let (users, tokens) = prequeued_at_the_opening(&system).await;
    let before = drawn(&system).await;
    system.kill("edge");
    let (_, mut db) = system.only_object_db("WaitingRoom").await;
    for table in ["drawing", "ranked", "late"] {
        sqlx::query(&format!("DROP TABLE {table}"))
            .execute(&mut db)
            .await
            .expect("the previous release had no such table");
    }
    db.close().await.expect("closed");
    system.start_edge_again().await;

    let after = room_status(&system, EVENT).await;
    assert_eq!(
        (
            after["drawSeed"].clone(),
            after["drawn"].clone(),
            after["drawing"].clone(),
            after.get("drawBatches").cloned()
        ),
        (
            before["drawSeed"].clone(),
            json!(PEOPLE),
            json!(false),
            Some(Value::Null)
        ),
        "{after}"
    );
    let (seed, kept) = seed_and_list(&system).await;
    assert_eq!(kept, draw::order(seed, &users));
    let placed = statuses(&system, &tokens).await;
    for (user, answer) in users.iter().zip(&placed) {
        let at = kept.iter().position(|u| u == user).map(|at| at + 1);
        assert_eq!(answer["position"], json!(at), "{user}: {answer}");
    }
    let later = enter(&system, &system.token("later", 600), EVENT).await;
    assert_eq!(later["position"], json!(PEOPLE + 1), "{later}");
}
