//! The outbox delivered to a merchant on loopback, in process: each payment's changes
//! reach it signed, in order per order, the same `webhook-id` on every attempt; a
//! failing receiver is tried again with backoff, one that answers 410 disables the
//! endpoint until an operator enables it, one that never acknowledges in time leaves a
//! dead letter an operator can send again; and the pull API pages through the same
//! events by a cursor. (The receiver verifying with the `standardwebhooks` library, and
//! crashes, are the end-to-end tests' `tests/merchant_webhooks.rs`.)

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::routing::post;
use axum::Router;
use harness::eventually::eventually;
use origin::outbox::config::MerchantWebhooks;
use origin::outbox::signature::Secrets;
use origin::policy::delivery::Schedule;
use serde_json::{json, Value};
use support::{serve, signed, simulator, Origin, OPERATOR_TOKEN};
use tokio::io::AsyncReadExt as _;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// What the receiver got, and how it answers next.
#[derive(Default)]
struct Receiver {
    got: Vec<(String, Value)>,
    answers: Vec<StatusCode>,
}

type Shared = Arc<Mutex<Receiver>>;

/// Records every delivery whose signature holds (by our own signing: the library's
/// verification is the end-to-end tests'), and answers the next planned status, else 204.
async fn receive(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (id, timestamp) = (header("webhook-id"), header("webhook-timestamp"));
    let expected = Secrets::parse(SECRET).expect("the secret").sign(
        &id,
        timestamp.parse().unwrap_or(0),
        &body,
    );
    if header("webhook-signature") != expected {
        return StatusCode::BAD_REQUEST;
    }
    let mut receiver = shared.lock().unwrap();
    receiver
        .got
        .push((id, serde_json::from_slice(&body).unwrap_or(Value::Null)));
    if receiver.answers.is_empty() {
        StatusCode::NO_CONTENT
    } else {
        receiver.answers.remove(0)
    }
}

async fn merchant(answers: &[StatusCode], schedule: Schedule) -> (Origin, Shared) {
    let shared = Shared::default();
    shared.lock().unwrap().answers = answers.to_vec();
    let url = serve(
        Router::new()
            .route("/hooks", post(receive))
            .with_state(shared.clone()),
    )
    .await;
    let webhooks = MerchantWebhooks {
        url: format!("{url}/hooks").parse().expect("a URL"),
        secrets: Secrets::parse(SECRET).expect("the secret"),
        concurrency: 4,
        timeout: Duration::from_secs(2),
        schedule,
    };
    let origin = Origin::with_merchant_webhooks(&simulator().await, webhooks).await;
    (origin, shared)
}

fn quick() -> Schedule {
    Schedule {
        first_ms: 20,
        max_ms: 100,
        give_up_after_ms: 60_000,
    }
}

fn operator(method: &str, path: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {OPERATOR_TOKEN}"))
        .body(Body::empty())
        .unwrap()
}

async fn pay(origin: &Origin, order_id: &str, key: &str) {
    let body = json!({"orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 1000});
    let (status, paid) = origin
        .send(signed(
            "POST",
            "/payments/confirm",
            Some(key),
            &body.to_string(),
        ))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{paid}");
}

/// The receiver's deliveries once it holds `count`: (webhook-id, type, order).
async fn received(shared: &Shared, count: usize) -> Vec<(String, String, String)> {
    eventually(
        "the deliveries",
        Duration::from_secs(20),
        Duration::from_millis(20),
        || async {
            let got: Vec<_> = shared
                .lock()
                .unwrap()
                .got
                .iter()
                .map(|(id, body)| {
                    let kind = body["type"].as_str().unwrap_or_default().to_owned();
                    let order = body["data"]["orderId"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    (id.clone(), kind, order)
                })
                .collect();
            if got.len() >= count {
                Ok(got)
            } else {
                Err(format!("{got:?}"))
            }
        },
    )
    .await
}

#[tokio::test]
async fn a_stopped_delivery_leaves_no_request_out() {
    // A receiver that reads a request and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let webhooks = MerchantWebhooks {
        url: format!("http://{}/hooks", listener.local_addr().unwrap())
            .parse()
            .expect("a URL"),
        secrets: Secrets::parse(SECRET).expect("the secret"),
        concurrency: 4,
        // Far longer than the test waits: only the stop can end the request.
        timeout: Duration::from_secs(120),
        schedule: quick(),
    };
    let origin = Origin::with_merchant_webhooks(&simulator().await, webhooks).await;
    pay(&origin, "order-stopped", "key-stopped").await;
    let (mut connection, _) = tokio::time::timeout(Duration::from_secs(20), listener.accept())
        .await
        .expect("the delivery connects")
        .unwrap();
    let mut request = vec![0u8; 64 * 1024];
    let read = tokio::time::timeout(Duration::from_secs(20), connection.read(&mut request))
        .await
        .expect("the request arrives")
        .unwrap();
    assert!(read > 0, "the request was sent");

    drop(origin);
    // The origin's side closes the connection: the request under way was dropped with
    // the loop, not left to run until its timeout.
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match connection.read(&mut request).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the request is still out after the delivery stopped"
    );
}

#[tokio::test]
async fn each_change_reaches_the_merchant_signed_in_order_and_is_tried_again_until_acknowledged() {
    let (origin, shared) = merchant(&[StatusCode::INTERNAL_SERVER_ERROR; 2], quick()).await;
    pay(&origin, "order-1", "key-1").await;
    pay(&origin, "order-2", "key-2").await;
    let got = received(&shared, 6).await;
    // Two attempts were answered 500 and came again: the same message, the same id.
    let mut unique: Vec<&(String, String, String)> = Vec::new();
    for delivery in &got {
        if !unique.contains(&delivery) {
            unique.push(delivery);
        }
    }
    assert_eq!((got.len(), unique.len()), (6, 4), "{got:?}");
    for order in ["order-1", "order-2"] {
        let at = |kind: &str| -> Vec<usize> {
            got.iter()
                .enumerate()
                .filter(|(_, (_, k, o))| o == order && k == kind)
                .map(|(at, _)| at)
                .collect()
        };
        let (created, approved) = (at("payment.created"), at("payment.approved"));
        assert_eq!(approved.len(), 1, "{got:?}");
        assert!(
            created.iter().all(|&c| c < approved[0]),
            "an approval before its order's creation was acknowledged: {got:?}"
        );
    }
    // Acknowledgements are written together at the delivery loop's next pass.
    let recorded = "every acknowledgement recorded";
    eventually(
        recorded,
        Duration::from_secs(20),
        Duration::from_millis(20),
        || async {
            let (status, view) = origin.send(operator("GET", "/admin/webhooks")).await;
            match (status, view["pending"].as_i64()) {
                (StatusCode::OK, Some(0)) => Ok(()),
                _ => Err(format!("{status} {view}")),
            }
        },
    )
    .await;
}

#[tokio::test]
async fn a_gone_endpoint_is_disabled_until_an_operator_enables_it() {
    let (origin, shared) = merchant(&[StatusCode::GONE], quick()).await;
    pay(&origin, "order-1", "key-1").await;
    received(&shared, 1).await;
    let view = eventually(
        "disabled",
        Duration::from_secs(10),
        Duration::from_millis(20),
        || async {
            let (_, view) = origin.send(operator("GET", "/admin/webhooks")).await;
            if view["endpoint"]["disabled"].is_object() {
                Ok(view)
            } else {
                Err(view.to_string())
            }
        },
    )
    .await;
    assert_eq!(
        view["endpoint"]["disabled"]["reason"], "answered 410 Gone",
        "{view}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        shared.lock().unwrap().got.len(),
        1,
        "nothing more while disabled"
    );

    let (status, enabled) = origin
        .send(operator("POST", "/admin/webhooks/enable"))
        .await;
    assert_eq!(status, StatusCode::OK, "{enabled}");
    let got = received(&shared, 3).await;
    assert_eq!(got[0], got[1], "the same message, again");
    assert_eq!(got[2].1, "payment.approved");
}

#[tokio::test]
async fn a_dead_letter_holds_its_order_until_it_is_sent_again() {
    let schedule = Schedule {
        first_ms: 20,
        max_ms: 50,
        give_up_after_ms: 1_000,
    };
    let (origin, shared) = merchant(&[StatusCode::INTERNAL_SERVER_ERROR; 1_000], schedule).await;
    pay(&origin, "order-1", "key-1").await;
    let view = eventually(
        "a dead letter",
        Duration::from_secs(20),
        Duration::from_millis(50),
        || async {
            let (_, view) = origin.send(operator("GET", "/admin/webhooks")).await;
            if view["dead"] == 1 {
                Ok(view)
            } else {
                Err(view.to_string())
            }
        },
    )
    .await;
    let dead = &view["deadLetters"][0];
    assert_eq!(
        (
            dead["type"].as_str(),
            dead["delivery"]["lastStatus"].as_i64()
        ),
        (Some("payment.created"), Some(500)),
        "{view}"
    );
    assert_eq!(view["pending"], 1, "the approval waits behind it: {view}");
    let id = dead["id"].as_str().expect("an id").to_owned();

    shared.lock().unwrap().answers.clear();
    let seen = shared.lock().unwrap().got.len();
    let (status, again) = origin
        .send(operator("POST", &format!("/admin/webhooks/{id}/redeliver")))
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let got = received(&shared, seen + 2).await;
    assert_eq!(got[seen].0, id);
    assert_eq!(got[seen + 1].1, "payment.approved");
    let (status, refused) = origin
        .send(operator("POST", &format!("/admin/webhooks/{id}/redeliver")))
        .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (StatusCode::CONFLICT, Some("NOT_A_DEAD_LETTER"))
    );
    let (status, bad) = origin
        .send(operator("POST", "/admin/webhooks/nope/redeliver"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
}

#[tokio::test]
async fn the_pull_api_pages_through_the_events_by_cursor() {
    let origin = Origin::with_gateway(&simulator().await, Duration::from_secs(3)).await;
    for n in 0..3 {
        pay(&origin, &format!("order-{n}"), &format!("key-{n}")).await;
    }
    let (status, first) = origin
        .send(operator("GET", "/admin/payment-events?limit=4"))
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let events = first["events"].as_array().expect("events");
    assert_eq!(events.len(), 4);
    assert_eq!(events[0]["type"], "payment.created");
    assert_eq!(events[0]["position"], 1);
    assert_eq!(first["next"], "4");
    let (_, rest) = origin
        .send(operator("GET", "/admin/payment-events?after=4&limit=100"))
        .await;
    let kinds: Vec<&str> = rest["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(kinds, ["payment.created", "payment.approved"], "{rest}");
    let (_, end) = origin
        .send(operator("GET", "/admin/payment-events?after=6"))
        .await;
    assert_eq!(
        (end["events"].as_array().map(Vec::len), end["next"].as_str()),
        (Some(0), Some("6"))
    );
    for bad in ["after=x", "after=-1", "limit=0", "limit=1001", "cursor=1"] {
        let (status, refused) = origin
            .send(operator("GET", &format!("/admin/payment-events?{bad}")))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {refused}");
    }
}
