//! End to end: a drop defined at run time with one operator call at the origin — stock,
//! gating, admit limit, passes per minute, an opening with a prequeue — handed to the
//! edge's room signed; 500 people in the prequeue, the opening brought forward once they
//! are in, the prequeue drawn at it in the order the recorded seed re-derives; passes out
//! by count and by rate; pause and resume; bad input refused at the origin with nothing
//! changed, and settings the origin did not sign refused at the edge.

use crate::support;

use std::time::Duration;

use harness::signed::now_ms;
use reqwest::StatusCode;
use rules::queue::draw::{self, SEED_BYTES};
use serde_json::{json, Value};
use support::room::{admin, each, enter, leave, queue_call, room_status, start, status};
use support::System;

const EVENT: &str = "drop-spring";
const PEOPLE: usize = 500;

async fn start_drop() -> System {
    start(&[("RATE_LIMITED_ROUTES", "none")]).await
}

#[tokio::test]
async fn a_drop_defined_in_one_call_draws_its_prequeue_and_lets_passes_out_by_count_and_rate() {
    let system = start_drop().await;
    let prequeue_from = now_ms();
    let define = |opens_at: i64| {
        system.set_event(json!({
            "eventId": EVENT, "stock": 100, "amount": 1000, "gated": true,
            "admitLimit": 10, "admitPerMinute": 30, "opensAt": opens_at,
            "prequeueFrom": prequeue_from, "name": "Spring drop",
        }))
    };
    // Opening far enough ahead that the prequeue fills before it however slow the
    // machine; the operator brings it forward once everyone is in.
    let opens_at = now_ms() + 600_000;
    let (code, defined) = define(opens_at).await;
    assert_eq!(code, StatusCode::OK, "{defined}");
    assert_eq!(defined["room"]["prequeued"], 0);

    let users: Vec<String> = (0..PEOPLE).map(|n| format!("user-{n:03}")).collect();
    let tokens: Vec<String> = users.iter().map(|user| system.token(user, 600)).collect();
    let system = &system;
    let entered = each(&tokens, |token| async move {
        enter(system, &token, EVENT).await
    })
    .await;
    for answer in &entered {
        assert_eq!(answer["prequeued"], true, "{answer}");
        assert_eq!(answer["opensAt"], opens_at);
        assert_eq!(answer["eventName"], "Spring drop");
        assert!(
            answer.get("ticket").is_none(),
            "no ticket before the draw: {answer}"
        );
    }
    // Entering twice is one ticket in the draw.
    enter(system, &tokens[7], EVENT).await;
    assert_eq!(room_status(system, EVENT).await["prequeued"], PEOPLE);

    let opens_at = now_ms() + 3_000;
    let (code, moved) = define(opens_at).await;
    assert_eq!(code, StatusCode::OK, "{moved}");
    assert_eq!(
        (
            moved["room"]["prequeued"].clone(),
            moved["room"]["opensAt"].clone()
        ),
        (json!(PEOPLE), json!(opens_at)),
        "the opening moved, the prequeue kept"
    );

    // The opening: the room's alarm draws the prequeue, whether anyone polls or not —
    // nothing calls the room from here until well after it, so a draw before the next
    // call is the alarm's.
    let quiet_until = opens_at + 3_000;
    tokio::time::sleep(Duration::from_millis((quiet_until - now_ms()).max(0) as u64)).await;
    let asked = now_ms();
    let room = room_status(system, EVENT).await;
    let drawn = room["drawSeed"].as_str().expect("drawn by now").to_owned();
    assert_eq!(
        (room["drawn"].clone(), room["prequeued"].clone()),
        (json!(PEOPLE), json!(0))
    );
    let drawn_at = room["drawnAt"].as_i64().unwrap_or(0);
    println!("drawn {} ms after the opening", drawn_at - opens_at);
    assert!(
        (opens_at..asked).contains(&drawn_at),
        "drawn at its alarm, {} ms after the opening and before anyone asked: {room}",
        drawn_at - opens_at
    );

    let mut seed = [0u8; SEED_BYTES];
    hex::decode_to_slice(&drawn, &mut seed).expect("a hex seed");
    let order = draw::order(seed, &users);
    // The operator's audit: the seed and the kept list, in pages, re-derive the order.
    let (first, rest) = (
        admin(
            system,
            reqwest::Method::GET,
            &format!("/{EVENT}/draw?limit=40"),
        )
        .await
        .1,
        admin(
            system,
            reqwest::Method::GET,
            &format!("/{EVENT}/draw?from=40&limit=10000"),
        )
        .await
        .1,
    );
    assert_eq!(first["drawSeed"], json!(drawn));
    let kept: Vec<String> = [&first, &rest]
        .iter()
        .flat_map(|page| page["people"].as_array().cloned().unwrap_or_default())
        .filter_map(|user| user.as_str().map(str::to_owned))
        .collect();
    assert_eq!(kept, order, "the kept list, in its drawn order");
    assert_eq!(
        draw::order(seed, &kept),
        order,
        "re-derived from the seed and the list"
    );
    let placed = each(&tokens, |token| async move {
        status(system, &token, EVENT)
            .await
            .json::<Value>()
            .await
            .expect("JSON")
    })
    .await;
    for (user, answer) in users.iter().zip(&placed) {
        let expected = order.iter().position(|u| u == user).map(|at| at as u64 + 1);
        assert_eq!(answer["position"].as_u64(), expected, "{user}: {answer}");
    }
    let admitted = placed
        .iter()
        .filter(|answer| answer["admitted"] == true)
        .count();
    assert_eq!(admitted, 10, "the admit limit");

    // Passes out by count and by rate: each ten that leave let ten more in, until the
    // minute's thirty are out.
    let token_of = |user: &str| tokens[users.iter().position(|u| u == user).unwrap_or(0)].clone();
    for round in 0..3 {
        for user in &order[round * 10..round * 10 + 10] {
            leave(system, &token_of(user), EVENT).await;
        }
        let room = room_status(system, EVENT).await;
        assert!(room["passesLive"].as_u64() <= Some(10), "{room}");
        assert!(
            room["passesIssuedLastMinute"].as_u64() <= Some(30),
            "{room}"
        );
    }
    let room = room_status(system, EVENT).await;
    assert_eq!(
        (
            room["passesIssuedLastMinute"].clone(),
            room["passesLive"].clone()
        ),
        (json!(30), json!(0)),
        "thirty issued this minute, the rate holds the next: {room}"
    );
    let next: Value = status(system, &token_of(&order[30]), EVENT)
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        (next["position"].clone(), next["admitted"].clone()),
        (json!(1), json!(false))
    );
}

#[tokio::test]
async fn a_paused_drop_issues_no_pass_and_resumes_where_it_stopped() {
    let system = start_drop().await;
    let (code, defined) = system
        .set_event(
            json!({"eventId": EVENT, "stock": 5, "amount": 1000, "gated": true, "admitLimit": 1}),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{defined}");
    let (a, b) = (system.token("a", 600), system.token("b", 600));
    assert_eq!(enter(&system, &a, EVENT).await["admitted"], true);
    let (paused, room) = admin(&system, reqwest::Method::POST, &format!("/{EVENT}/pause")).await;
    assert_eq!(
        (paused, room["paused"].clone()),
        (StatusCode::OK, json!(true)),
        "{room}"
    );
    let waiting = enter(&system, &b, EVENT).await;
    assert_eq!(
        (waiting["position"].clone(), waiting["paused"].clone()),
        (json!(2), json!(true))
    );
    leave(&system, &a, EVENT).await;
    let held: Value = status(&system, &b, EVENT).await.json().await.expect("JSON");
    assert_eq!(
        (
            held["position"].clone(),
            held["admitted"].clone(),
            held["paused"].clone()
        ),
        (json!(1), json!(false), json!(true)),
        "nobody gets a pass while paused: {held}"
    );
    let (resumed, _) = admin(&system, reqwest::Method::POST, &format!("/{EVENT}/resume")).await;
    assert_eq!(resumed, StatusCode::OK);
    let now: Value = status(&system, &b, EVENT).await.json().await.expect("JSON");
    assert_eq!(
        (now["admitted"].clone(), now.get("paused")),
        (json!(true), None),
        "{now}"
    );

    let (closed, _) = admin(&system, reqwest::Method::POST, &format!("/{EVENT}/close")).await;
    assert_eq!(closed, StatusCode::OK);
    let turned_away = enter(&system, &system.token("c", 600), EVENT).await;
    assert_eq!(
        (
            turned_away["position"].clone(),
            turned_away["closed"].clone()
        ),
        (json!(0), json!(true))
    );
    let (reopen, body) = admin(&system, reqwest::Method::POST, &format!("/{EVENT}/resume")).await;
    assert_eq!(
        (reopen, body["code"].clone()),
        (StatusCode::CONFLICT, json!("DROP_CLOSED"))
    );
}

#[tokio::test]
async fn bad_settings_are_refused_by_name_and_change_nothing_at_either_part() {
    let system = start_drop().await;
    let base = json!({"eventId": EVENT, "stock": 2, "amount": 1000});
    let (status, _) = system.set_event(base.clone()).await;
    assert_eq!(status, StatusCode::OK);
    let with = |field: &str, value: Value| {
        let mut body = base.clone();
        body[field] = value;
        body
    };
    for (body, expected, named) in [
        (
            with("admitLimt", json!(3)),
            StatusCode::BAD_REQUEST,
            "admitLimt",
        ),
        (
            with("admitLimit", json!(0)),
            StatusCode::BAD_REQUEST,
            "admitLimit",
        ),
        (
            with("admitPerMinute", json!(0)),
            StatusCode::BAD_REQUEST,
            "admitPerMinute",
        ),
        (
            with("opensAt", json!(now_ms() - 1_000)),
            StatusCode::BAD_REQUEST,
            "opensAt",
        ),
        (
            json!({"eventId": EVENT, "stock": 2, "amount": 1000,
                   "opensAt": now_ms() + 60_000, "prequeueFrom": now_ms() + 120_000}),
            StatusCode::BAD_REQUEST,
            "prequeueFrom",
        ),
        (with("stock", json!(-1)), StatusCode::BAD_REQUEST, "stock"),
    ] {
        let (status, answer) = system.set_event(body.clone()).await;
        assert_eq!(status, expected, "{body}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(named), "{body}: {answer}");
    }
    let (_, event) = admin(&system, reqwest::Method::GET, &format!("/{EVENT}")).await;
    assert_eq!(
        (event["stock"].clone(), event.get("room")),
        (json!(2), None),
        "{event}"
    );
    // Nothing reached the edge: the event has no room there, so it has no queue.
    let token = system.token("a", 600);
    let path = format!("{EVENT}/enter");
    let none = queue_call(&system, &token, reqwest::Method::POST, &path).await;
    assert_eq!(none.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        none.json::<Value>().await.expect("JSON")["code"],
        "EVENT_NOT_FOUND"
    );

    // Room settings not signed by the origin are refused at the edge, and define nothing.
    let forged = system
        .http
        .post(format!("{}/internal/rooms/{EVENT}", system.edge))
        .json(&json!({"settings": {"gated": false}, "state": "OPEN", "version": 99}))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
    let still = queue_call(&system, &token, reqwest::Method::POST, &path).await;
    assert_eq!(still.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn before_its_prequeue_a_drop_answers_not_open_yet_with_its_times() {
    let system = start_drop().await;
    let (opens_at, from) = (now_ms() + 120_000, now_ms() + 60_000);
    let (code, defined) = system
        .set_event(json!({"eventId": EVENT, "stock": 5, "amount": 1000,
                          "opensAt": opens_at, "prequeueFrom": from}))
        .await;
    assert_eq!(code, StatusCode::OK, "{defined}");
    let answer = queue_call(
        &system,
        &system.token("a", 600),
        reqwest::Method::POST,
        &format!("{EVENT}/enter"),
    )
    .await;
    assert_eq!(answer.status(), StatusCode::CONFLICT);
    let body: Value = answer.json().await.expect("JSON");
    assert_eq!(
        (
            body["code"].clone(),
            body["opensAt"].clone(),
            body["prequeueFrom"].clone()
        ),
        (json!("NOT_OPEN_YET"), json!(opens_at), json!(from))
    );
}
