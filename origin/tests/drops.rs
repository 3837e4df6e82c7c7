//! The operator routes of a drop as the console uses them: a change names the room's
//! version it was made from and is refused at any other (two operators, one of them
//! on a stale page; two changes racing from the same version); bad input refused with
//! the field named; the events listed with their rooms and currency; and the history
//! the console's charts are drawn from.

use crate::support;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::post;
use axum::Router;
use origin::clock::now_ms;
use rules::drop::RoomState;
use serde_json::{json, Value};
use support::{serve, signed, simulator, Origin, OPERATOR_TOKEN};

const EVENT: &str = "spring";

/// An edge that applies every room it is handed, and cannot report one.
async fn stub_edge() -> String {
    serve(Router::new().route(
        "/internal/rooms/{event_id}",
        post(|| async { axum::Json(json!({ "applied": true })) }),
    ))
    .await
}

async fn origin() -> Origin {
    Origin::with_edge(&simulator().await, &stub_edge().await).await
}

fn operator(method: &str, path: &str, body: Option<Value>) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
        .header("content-type", "application/json")
        .body(body.map_or_else(Body::empty, |body| Body::from(body.to_string())))
        .unwrap()
}

fn drop_with(admit_limit: u32, expected: Option<u64>) -> Value {
    let mut drop = json!({
        "eventId": EVENT, "stock": 10, "amount": 5000, "gated": false, "admitLimit": admit_limit,
    });
    if let Some(version) = expected {
        drop["expectedVersion"] = version.into();
    }
    drop
}

async fn define(origin: &Origin, drop: Value) -> (StatusCode, Value) {
    origin
        .send(operator("POST", "/admin/events", Some(drop)))
        .await
}

async fn stored(origin: &Origin) -> (u64, Option<u32>, RoomState) {
    let room = origin.store.event_room(EVENT).await.unwrap().unwrap();
    (room.version, room.settings.admit_limit, room.state)
}

fn refused(answer: &(StatusCode, Value)) -> (StatusCode, &str, &str) {
    (
        answer.0,
        answer.1["code"].as_str().unwrap_or_default(),
        answer.1["message"].as_str().unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_change_from_a_stale_page_is_refused_and_changes_nothing() {
    let origin = origin().await;
    let first = define(&origin, drop_with(2, Some(0))).await;
    assert_eq!(first.0, StatusCode::OK, "{}", first.1);
    // Another operator changes it; the first one's page still shows version 1.
    let other = define(&origin, drop_with(5, Some(1))).await;
    assert_eq!(other.0, StatusCode::OK, "{}", other.1);
    assert_eq!(stored(&origin).await, (2, Some(5), RoomState::Open));

    let stale = define(&origin, drop_with(3, Some(1))).await;
    let (status, code, message) = refused(&stale);
    assert_eq!((status, code), (StatusCode::CONFLICT, "STALE_VERSION"));
    assert!(
        message.starts_with("expectedVersion:") && message.contains("version 2"),
        "{message}"
    );
    let pause = origin
        .send(operator(
            "POST",
            &format!("/admin/events/{EVENT}/pause"),
            Some(json!({"expectedVersion": 1})),
        ))
        .await;
    assert_eq!(refused(&pause).1, "STALE_VERSION");
    // Defining it anew over a room that exists is stale too, and so is a stock change.
    assert_eq!(
        refused(&define(&origin, drop_with(3, Some(0))).await).1,
        "STALE_VERSION"
    );
    let stock = json!({"eventId": EVENT, "stock": 7, "amount": 5000, "expectedVersion": 1});
    assert_eq!(refused(&define(&origin, stock).await).1, "STALE_VERSION");
    assert_eq!(stored(&origin).await, (2, Some(5), RoomState::Open));
    let event = origin.store.event(EVENT).await.unwrap().unwrap();
    assert_eq!(event.stock, 10);

    // At the version in force, each goes through.
    let pause = origin
        .send(operator(
            "POST",
            &format!("/admin/events/{EVENT}/pause"),
            Some(json!({"expectedVersion": 2})),
        ))
        .await;
    assert_eq!(pause.0, StatusCode::OK, "{}", pause.1);
    assert_eq!(stored(&origin).await, (3, Some(5), RoomState::Paused));
    // And without a version, as the command line sends them.
    let resume = origin
        .send(operator(
            "POST",
            &format!("/admin/events/{EVENT}/resume"),
            Some(json!({})),
        ))
        .await;
    assert_eq!(resume.0, StatusCode::OK, "{}", resume.1);
    assert_eq!(stored(&origin).await, (4, Some(5), RoomState::Open));
}

#[tokio::test]
async fn of_two_changes_from_the_same_version_one_is_made() {
    let origin = origin().await;
    assert_eq!(
        define(&origin, drop_with(2, Some(0))).await.0,
        StatusCode::OK
    );
    for round in 0..10u64 {
        let version = 1 + round;
        let (a, b) = tokio::join!(
            define(&origin, drop_with(3, Some(version))),
            define(&origin, drop_with(4, Some(version))),
        );
        let made = [&a, &b].iter().filter(|x| x.0 == StatusCode::OK).count();
        assert_eq!(made, 1, "round {round}: {} {} / {} {}", a.0, a.1, b.0, b.1);
        let loser = if a.0 == StatusCode::OK { &b } else { &a };
        assert_eq!(refused(loser).1, "STALE_VERSION", "{}", loser.1);
        assert_eq!(stored(&origin).await.0, version + 1);
    }
}

#[tokio::test]
async fn bad_input_is_refused_with_its_field_named() {
    let origin = origin().await;
    for (body, field) in [
        (
            json!({"eventId": EVENT, "stock": "ten", "amount": 5000}),
            "stock",
        ),
        (
            json!({"eventId": EVENT, "stock": 1.5, "amount": 5000}),
            "stock",
        ),
        (json!({"eventId": EVENT, "stock": 10}), "amount"),
        (json!({"stock": 10, "amount": 5000}), "eventId"),
        (
            json!({"eventId": EVENT, "stock": -1, "amount": 5000}),
            "stock",
        ),
        (
            json!({"eventId": EVENT, "stock": 10, "amount": 5000, "admitLimit": 0}),
            "admitLimit",
        ),
        (
            json!({"eventId": EVENT, "stock": 10, "amount": 5000, "opensAt": "soon"}),
            "opensAt",
        ),
        (
            json!({"eventId": EVENT, "stock": 10, "amount": 5000, "expectedVersion": -1}),
            "expectedVersion",
        ),
        (
            json!({"eventId": "a b", "stock": 10, "amount": 5000}),
            "eventId",
        ),
    ] {
        let answer = define(&origin, body.clone()).await;
        let (status, code, message) = refused(&answer);
        assert_eq!(
            (status, code),
            (StatusCode::BAD_REQUEST, "INVALID_REQUEST"),
            "{body}: {}",
            answer.1
        );
        assert!(
            message.starts_with(&format!("{field}:")),
            "{body}: {message}"
        );
    }
    let unknown = define(
        &origin,
        json!({"eventId": EVENT, "stock": 1, "amount": 1, "admitLimits": 2}),
    )
    .await;
    assert!(refused(&unknown).2.contains("admitLimits"), "{}", unknown.1);
    assert!(origin.store.event(EVENT).await.unwrap().is_none());

    assert_eq!(define(&origin, drop_with(2, None)).await.0, StatusCode::OK);
    let bad = origin
        .send(operator(
            "POST",
            &format!("/admin/events/{EVENT}/close"),
            Some(json!({"expectedVersion": "one"})),
        ))
        .await;
    assert_eq!(refused(&bad).0, StatusCode::BAD_REQUEST, "{}", bad.1);
    assert_eq!(stored(&origin).await.2, RoomState::Open);
}

#[tokio::test]
async fn events_are_listed_with_their_rooms_and_currency() {
    let origin = origin().await;
    assert_eq!(define(&origin, drop_with(2, None)).await.0, StatusCode::OK);
    let plain = json!({"eventId": "plain", "stock": 5, "amount": 1000});
    assert_eq!(define(&origin, plain).await.0, StatusCode::OK);
    let (status, list) = origin.send(operator("GET", "/admin/events", None)).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["currency"], "KRW");
    assert_eq!(list["events"][0]["eventId"], "plain");
    assert!(list["events"][0].get("room").is_none(), "{list}");
    assert_eq!(list["events"][1]["room"]["version"], 1, "{list}");
    assert_eq!(
        list["events"][1]["room"]["settings"]["admitLimit"], 2,
        "{list}"
    );
    let (_, one) = origin
        .send(operator("GET", &format!("/admin/events/{EVENT}"), None))
        .await;
    assert_eq!(one["currency"], "KRW", "{one}");
}

#[tokio::test]
async fn the_history_holds_each_drops_confirms_and_the_guards_calls() {
    let origin = origin().await;
    assert_eq!(define(&origin, drop_with(2, None)).await.0, StatusCode::OK);
    let body =
        json!({"orderId": "order-1", "paymentKey": "pk-order-1", "amount": 5000, "eventId": EVENT});
    let (status, paid) = origin
        .send(signed(
            "POST",
            "/payments/confirm",
            Some("key-1"),
            &body.to_string(),
        ))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{paid}");
    let now = now_ms();
    origin::history::sample(&origin.history, now).await;

    let (status, history) = origin.send(operator("GET", "/admin/history", None)).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    assert_eq!(history["intervalMs"], 5000);
    assert_eq!(history["windowMs"], 900_000);
    let drop = &history["drops"][EVENT][0];
    assert_eq!(drop["atMs"], now, "{history}");
    assert_eq!(
        (
            drop["approved"].as_u64(),
            drop["failed"].as_u64(),
            drop["unknown"].as_u64()
        ),
        (Some(1), Some(0), Some(0)),
        "{history}"
    );
    // The stub edge cannot report the room: its figures are unknown, not zero.
    assert!(drop["waiting"].is_null(), "{history}");
    let guard = &history["guard"]["samples"][0];
    assert_eq!(guard["calls"], 1, "{history}");
    assert!(
        guard["p50Ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{history}"
    );
    assert_eq!(guard["breaker"], "CLOSED", "{history}");

    // The next sample counts only what came since.
    origin::history::sample(&origin.history, now + 5_000).await;
    let (_, history) = origin.send(operator("GET", "/admin/history", None)).await;
    assert_eq!(history["drops"][EVENT][1]["approved"], 0, "{history}");
    assert_eq!(history["guard"]["samples"][1]["calls"], 0, "{history}");
    assert!(
        history["guard"]["samples"][1]["p50Ms"].is_null(),
        "{history}"
    );
}
