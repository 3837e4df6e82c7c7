//! The origin's side of the waiting-room gate on confirm: a replay-only confirm creates
//! nothing, a gated event's confirm needs its pass, and an order is looked up before its
//! price; and `POST /admin/events` gating a drop with an opening.

use crate::support;

use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::http::{Request, StatusCode};
use axum::routing::post;
use axum::Router;
use origin::clock::now_ms;
use origin::store::EventSpec;
use rules::drop::{RoomSettings, RoomState};
use rules::pass::Gate;
use serde_json::{json, Value};
use support::{serve, signed_as, simulator, stub_gateway, Origin, OPERATOR_TOKEN};
use tower::ServiceExt as _;

const EVENT: &str = "drop-1";
const PRICE: i64 = 5000;

fn body(order_id: &str, amount: i64, event_id: Option<&str>) -> String {
    let mut body = json!({
        "orderId": order_id,
        "paymentKey": format!("pk-{order_id}"),
        "amount": amount,
    });
    if let Some(event_id) = event_id {
        body["eventId"] = event_id.into();
    }
    body.to_string()
}

fn pass(event_id: &str, order_id: &str) -> Gate {
    Gate::Claimed {
        event_id: event_id.into(),
        room: 1,
        order_id: order_id.into(),
    }
}

/// Sends a confirm as `user` with `gate`: the status, the body, and whether it was
/// marked a replay.
async fn confirm(
    origin: &Origin,
    user: &str,
    gate: &Gate,
    key: &str,
    body: &str,
) -> (StatusCode, Value, bool) {
    let request = signed_as(user, gate, "POST", "/payments/confirm", Some(key), body);
    let response = origin.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|value| value == "true");
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, body, replayed)
}

async fn event(origin: &Origin, gated: bool) {
    let now = now_ms();
    if gated {
        let settings = RoomSettings {
            gated: true,
            ..RoomSettings::default()
        };
        origin
            .store
            .set_event_room(EVENT, &settings, RoomState::Open, now, None)
            .await
            .unwrap();
    }
    let spec = EventSpec {
        event_id: EVENT.into(),
        stock: 10,
        amount: PRICE,
    };
    origin.store.upsert_event(&spec, now).await.unwrap();
}

/// Whether any payment holds `order_id`.
async fn has_payment(origin: &Origin, order_id: &str) -> bool {
    origin
        .store
        .payment_by_order_id(order_id)
        .await
        .expect("the store answers")
        .is_some()
}

async fn origin() -> Origin {
    Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await
}

#[tokio::test]
async fn a_replay_only_confirm_replays_a_finished_key_exactly() {
    let origin = origin().await;
    let order = body("order-1", PRICE, None);
    let first = confirm(&origin, "user-1", &Gate::Ungated, "key-1", &order).await;
    assert_eq!(
        (first.0, first.2),
        (StatusCode::CREATED, false),
        "{}",
        first.1
    );
    let replay = confirm(&origin, "user-1", &Gate::ReplayOnly, "key-1", &order).await;
    assert_eq!(replay, (first.0, first.1, true));
    let other = body("order-2", PRICE, None);
    let reused = confirm(&origin, "user-1", &Gate::ReplayOnly, "key-1", &other).await;
    assert_eq!(
        (reused.0, reused.1["code"].as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("IDEMPOTENCY_KEY_REUSED")
        )
    );
    assert!(origin.metrics_text().await.contains("REPLAYED"));
}

#[tokio::test]
async fn a_replay_only_confirm_without_a_record_answers_the_users_payment() {
    let origin = origin().await;
    let order = body("order-1", PRICE, None);
    let first = confirm(&origin, "user-1", &Gate::Ungated, "key-1", &order).await;
    assert_eq!(first.0, StatusCode::CREATED, "{}", first.1);
    let answer = confirm(&origin, "user-1", &Gate::ReplayOnly, "key-2", &order).await;
    assert_eq!(answer, (StatusCode::CREATED, first.1, false));
    let stranger = confirm(&origin, "user-2", &Gate::ReplayOnly, "key-2", &order).await;
    assert_eq!(
        (stranger.0, stranger.1["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("QUEUE_PASS_REQUIRED"))
    );
}

#[tokio::test]
async fn a_replay_only_confirm_with_nothing_to_answer_creates_nothing() {
    let origin = origin().await;
    let order = body("order-1", PRICE, None);
    let refused = confirm(&origin, "user-1", &Gate::ReplayOnly, "key-1", &order).await;
    assert_eq!(
        (refused.0, refused.1["code"].as_str(), refused.2),
        (StatusCode::FORBIDDEN, Some("QUEUE_PASS_REQUIRED"), false)
    );
    assert!(refused.1["message"].is_string());
    assert!(!has_payment(&origin, "order-1").await);
    // The key was never claimed: the same key runs afresh.
    let fresh = confirm(&origin, "user-1", &Gate::Ungated, "key-1", &order).await;
    assert_eq!(
        (fresh.0, fresh.1["status"].as_str(), fresh.2),
        (StatusCode::CREATED, Some("APPROVED"), false)
    );
}

#[tokio::test]
async fn a_gated_event_takes_only_the_pass_for_its_own_event_and_order() {
    let origin = origin().await;
    event(&origin, true).await;
    let order = body("order-1", PRICE, Some(EVENT));
    for gate in [
        Gate::Ungated,
        pass(EVENT, "order-2"),
        pass("drop-2", "order-1"),
    ] {
        let refused = confirm(&origin, "user-1", &gate, "key-1", &order).await;
        assert_eq!(
            (refused.0, refused.1["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("QUEUE_PASS_REQUIRED")),
            "{gate:?}"
        );
    }
    assert!(!has_payment(&origin, "order-1").await);
    let view = origin.store.event(EVENT).await.unwrap().unwrap();
    assert_eq!((view.reserved, view.sold), (0, 0));
    let admitted = confirm(&origin, "user-1", &pass(EVENT, "order-1"), "key-1", &order).await;
    assert_eq!(
        (admitted.0, admitted.1["status"].as_str(), admitted.2),
        (StatusCode::CREATED, Some("APPROVED"), false)
    );
}

#[tokio::test]
async fn an_ungated_event_takes_any_gate() {
    let origin = origin().await;
    event(&origin, false).await;
    let order = body("order-1", PRICE, Some(EVENT));
    let taken = confirm(&origin, "user-1", &Gate::Ungated, "key-1", &order).await;
    assert_eq!(taken.0, StatusCode::CREATED, "{}", taken.1);
}

#[tokio::test]
async fn an_existing_order_is_409_before_its_amount_is_checked() {
    let origin = origin().await;
    event(&origin, false).await;
    let first = body("order-1", PRICE, Some(EVENT));
    let paid = confirm(&origin, "user-1", &Gate::Ungated, "key-1", &first).await;
    assert_eq!(paid.0, StatusCode::CREATED, "{}", paid.1);
    let again = body("order-1", PRICE + 1, Some(EVENT));
    let exists = confirm(&origin, "user-1", &Gate::Ungated, "key-2", &again).await;
    assert_eq!(
        (exists.0, exists.1["code"].as_str()),
        (StatusCode::CONFLICT, Some("ORDER_EXISTS"))
    );
    let taken = confirm(&origin, "user-2", &Gate::Ungated, "key-3", &again).await;
    assert_eq!(
        (taken.0, taken.1["code"].as_str()),
        (StatusCode::CONFLICT, Some("ORDER_ID_TAKEN"))
    );
    let new = body("order-2", PRICE + 1, Some(EVENT));
    let mismatch = confirm(&origin, "user-2", &Gate::Ungated, "key-4", &new).await;
    assert_eq!(
        (mismatch.0, mismatch.1["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("AMOUNT_MISMATCH"))
    );
}

#[tokio::test]
async fn an_order_in_flight_is_409_before_its_amount_is_checked() {
    let gateway = stub_gateway(StatusCode::OK, json!({}), Duration::from_secs(2)).await;
    let origin = std::sync::Arc::new(Origin::with_gateway(&gateway, Duration::from_secs(5)).await);
    event(&origin, false).await;
    let first = tokio::spawn({
        let origin = origin.clone();
        async move {
            let order = body("order-1", PRICE, Some(EVENT));
            confirm(&origin, "user-1", &Gate::Ungated, "key-1", &order).await
        }
    });
    while !has_payment(&origin, "order-1").await {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let again = body("order-1", PRICE + 1, Some(EVENT));
    let exists = confirm(&origin, "user-1", &Gate::Ungated, "key-2", &again).await;
    assert_eq!(
        (exists.0, exists.1["code"].as_str()),
        (StatusCode::CONFLICT, Some("ORDER_EXISTS"))
    );
    let taken = confirm(&origin, "user-2", &Gate::Ungated, "key-2", &again).await;
    assert_eq!(
        (taken.0, taken.1["code"].as_str()),
        (StatusCode::CONFLICT, Some("ORDER_ID_TAKEN"))
    );
    first.await.unwrap();
}

/// An edge that applies every room it is handed.
async fn stub_edge() -> String {
    serve(Router::new().route(
        "/internal/rooms/{event_id}",
        post(|| async { axum::Json(json!({ "applied": true })) }),
    ))
    .await
}

fn put_event(body: Value) -> Request<Body> {
    Request::post("/admin/events")
        .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn a_drop_with_an_opening_is_gated() {
    let origin = Origin::with_edge(&simulator().await, &stub_edge().await).await;
    let opens_at = now_ms() + 3_600_000;
    let event = json!({ "eventId": EVENT, "stock": 10, "amount": PRICE, "opensAt": opens_at });
    let (status, answer) = origin.send(put_event(event)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let room = origin.store.event_room(EVENT).await.unwrap().unwrap();
    assert!(room.settings.gated);
    assert_eq!(room.settings.opens_at, Some(opens_at));

    let ungated = json!({
        "eventId": "drop-2", "stock": 10, "amount": PRICE,
        "prequeueFrom": opens_at - 1_000, "opensAt": opens_at, "gated": false,
    });
    let (status, refusal) = origin.send(put_event(ungated)).await;
    assert_eq!(
        (status, refusal["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("INVALID_REQUEST"))
    );
    assert!(
        refusal["message"].as_str().unwrap().starts_with("gated"),
        "{refusal}"
    );
    assert!(origin.store.event("drop-2").await.unwrap().is_none());
    assert!(origin.store.event_room("drop-2").await.unwrap().is_none());
}
