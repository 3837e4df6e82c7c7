//! `PAYMENT_STATUS_CHANGED` webhooks over real sockets: the simulator, served
//! by its own server, posts to a tiny axum receiver on loopback that records
//! each delivery, headers and bytes, and answers as scripted.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use gateway_sim::config::{SecretKey, WebhookConfig, DEFAULT_SECRET_KEY};
use gateway_sim::{serve, SimState};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

/// Longer than any webhook takes on loopback, retries included.
const PATIENCE: Duration = Duration::from_secs(5);

/// One webhook as the receiver got it.
struct Delivery {
    at: Instant,
    headers: HeaderMap,
    bytes: Bytes,
}

impl Delivery {
    fn body(&self) -> Value {
        serde_json::from_slice(&self.bytes).expect("a JSON body")
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header"))
    }
}

/// Answers each webhook with the next scripted status, then 200.
#[derive(Clone)]
struct Receiver {
    script: Arc<Mutex<VecDeque<StatusCode>>>,
    deliveries: mpsc::UnboundedSender<Delivery>,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, bytes: Bytes) -> StatusCode {
    let _ = receiver.deliveries.send(Delivery {
        at: Instant::now(),
        headers,
        bytes,
    });
    let scripted = receiver
        .script
        .lock()
        .map(|mut script| script.pop_front())
        .unwrap_or_default();
    scripted.unwrap_or(StatusCode::OK)
}

struct Setup {
    sim: String,
    deliveries: mpsc::UnboundedReceiver<Delivery>,
    _stop: oneshot::Sender<()>,
}

/// Starts a receiver answering `script` first, and a simulator sending it
/// webhooks, retried after `retry_pauses` if given; both stop when the test
/// ends.
async fn start(script: &[StatusCode], retry_pauses: Option<Vec<Duration>>) -> Setup {
    let (deliveries_tx, deliveries) = mpsc::unbounded_channel();
    let receiver = Receiver {
        script: Arc::new(Mutex::new(script.iter().copied().collect())),
        deliveries: deliveries_tx,
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!(
        "http://{}/gateway/webhook",
        listener.local_addr().expect("bound")
    );
    let app = Router::new()
        .route("/gateway/webhook", post(receive))
        .with_state(receiver);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let mut config = WebhookConfig::new(&url).expect("valid config");
    if let Some(pauses) = retry_pauses {
        config.retry_pauses = pauses;
    }
    let state = SimState::new(SecretKey::default(), Some(config)).expect("client");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let sim = format!("http://{}", listener.local_addr().expect("bound"));
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, state, async {
        let _ = stopped.await;
    }));
    Setup {
        sim,
        deliveries,
        _stop: stop,
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

fn authorization() -> String {
    format!(
        "Basic {}",
        STANDARD.encode(format!("{DEFAULT_SECRET_KEY}:"))
    )
}

impl Setup {
    async fn next_delivery(&mut self) -> Delivery {
        tokio::time::timeout(PATIENCE, self.deliveries.recv())
            .await
            .expect("a webhook in time")
            .expect("the receiver is running")
    }

    /// Fails if a webhook arrives within `wait`.
    async fn assert_no_delivery(&mut self, wait: Duration) {
        if let Ok(Some(delivery)) = tokio::time::timeout(wait, self.deliveries.recv()).await {
            panic!("unexpected webhook: {}", delivery.body());
        }
    }

    async fn post(&self, path: &str, body: Value) -> reqwest::Response {
        client()
            .post(format!("{}{path}", self.sim))
            .header("authorization", authorization())
            .json(&body)
            .send()
            .await
            .expect("answered")
    }

    async fn confirm(&self, order_id: &str) -> reqwest::Response {
        let body =
            json!({ "paymentKey": format!("pk-{order_id}"), "orderId": order_id, "amount": 1000 });
        self.post("/v1/payments/confirm", body).await
    }

    async fn cancel(&self, order_id: &str) -> reqwest::Response {
        let path = format!("/v1/payments/pk-{order_id}/cancel");
        self.post(&path, json!({ "cancelReason": "refund" })).await
    }

    async fn put_faults(&self, faults: Value) {
        let response = client()
            .put(format!("{}/admin/faults", self.sim))
            .json(&faults)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
    }

    async fn ledger(&self) -> Value {
        let response = client()
            .get(format!("{}/admin/ledger", self.sim))
            .send()
            .await
            .expect("answered");
        response.json().await.expect("JSON body")
    }

    /// The ledger's webhooks once each has `attempts` attempts.
    async fn webhooks_once_attempted(&self, attempts: &[u64]) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let webhooks = self.ledger().await["webhooks"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let tried: Vec<_> = webhooks
                .iter()
                .map(|w| w["attempts"].as_u64().unwrap_or(0))
                .collect();
            if tried == attempts {
                return webhooks;
            }
            assert!(
                Instant::now() < deadline,
                "attempts {tried:?}, not {attempts:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn a_decision_is_told_as_payment_status_changed_with_toss_s_headers() {
    let mut setup = start(&[], None).await;
    let answer: Value = setup.confirm("order-1").await.json().await.expect("JSON");

    let delivery = setup.next_delivery().await;
    let body = delivery.body();
    assert_eq!(body["eventType"], "PAYMENT_STATUS_CHANGED");
    assert_eq!(body["data"], answer, "the full Payment object");
    let created_at = body["createdAt"].as_str().expect("createdAt");
    assert_eq!(
        created_at.len(),
        26,
        "yyyy-MM-dd'T'HH:mm:ss.SSSSSS: {created_at}"
    );
    assert!(
        !created_at.contains('+') && created_at.as_bytes()[19] == b'.',
        "{created_at}"
    );
    assert_eq!(
        delivery.header("tosspayments-webhook-transmission-retried-count"),
        "0"
    );
    assert!(delivery
        .header("tosspayments-webhook-transmission-time")
        .ends_with("+09:00"));
    let id = delivery
        .header("tosspayments-webhook-transmission-id")
        .to_owned();
    assert!(
        !delivery
            .headers
            .contains_key("tosspayments-webhook-signature"),
        "unsigned"
    );
    assert_eq!(delivery.header("content-type"), "application/json");

    let webhooks = setup.webhooks_once_attempted(&[1]).await;
    assert_eq!(webhooks[0]["orderId"], "order-1");
    assert_eq!(webhooks[0]["paymentKey"], "pk-order-1");
    assert_eq!(webhooks[0]["status"], "DONE");
    assert_eq!(webhooks[0]["transmissionId"], id);
    assert!(webhooks[0]["deliveredAt"].is_u64());
}

#[tokio::test]
async fn hang_after_processing_sends_the_webhook_before_the_held_answer() {
    let mut setup = start(&[], None).await;
    setup
        .put_faults(json!({ "mode": "HANG_AFTER_PROCESSING", "delayMs": 1000 }))
        .await;
    let started = Instant::now();
    let held = tokio::spawn({
        let sim = setup.sim.clone();
        async move {
            let response = client()
                .post(format!("{sim}/v1/payments/confirm"))
                .header("authorization", authorization())
                .json(&json!({ "paymentKey": "pk-1", "orderId": "order-1", "amount": 1000 }))
                .send()
                .await
                .expect("answered in the end");
            (
                Instant::now(),
                response.json::<Value>().await.expect("JSON"),
            )
        }
    });
    let delivery = setup.next_delivery().await;
    assert!(!held.is_finished(), "the answer came before the webhook");
    assert!(delivery.at.duration_since(started) < Duration::from_millis(1000));
    let (answered, answer) = held.await.expect("client task");
    assert!(answered > delivery.at);
    assert_eq!(
        delivery.body()["data"],
        answer,
        "the webhook and the answer tell the same"
    );
}

#[tokio::test]
async fn error_500_after_processing_still_tells_the_approval() {
    let mut setup = start(&[], None).await;
    setup
        .put_faults(json!({ "mode": "ERROR_500_AFTER_PROCESSING" }))
        .await;
    assert_eq!(setup.confirm("order-1").await.status(), 500);
    assert_eq!(setup.next_delivery().await.body()["data"]["status"], "DONE");
}

#[tokio::test]
async fn a_webhook_not_answered_200_is_retried_after_a_pause_as_the_same_transmission() {
    let mut setup = start(&[StatusCode::INTERNAL_SERVER_ERROR], None).await;
    setup.confirm("order-1").await;
    let first = setup.next_delivery().await;
    let second = setup.next_delivery().await;
    assert_eq!(first.bytes, second.bytes, "the same body, byte for byte");
    let id = "tosspayments-webhook-transmission-id";
    assert_eq!(first.header(id), second.header(id));
    assert_eq!(
        second.header("tosspayments-webhook-transmission-retried-count"),
        "1"
    );
    let pause = second.at.duration_since(first.at);
    assert!(
        pause >= Duration::from_millis(450),
        "retried after {pause:?}"
    );

    let webhooks = setup.webhooks_once_attempted(&[2]).await;
    assert!(webhooks[0]["deliveredAt"].is_u64());
    setup.assert_no_delivery(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn only_a_200_delivers_and_seven_retries_are_the_most() {
    let refusals = [StatusCode::NO_CONTENT].repeat(20);
    let mut setup = start(&refusals, Some(vec![Duration::from_millis(10); 7])).await;
    setup.confirm("order-1").await;
    for retried in 0..8 {
        let delivery = setup.next_delivery().await;
        assert_eq!(
            delivery.header("tosspayments-webhook-transmission-retried-count"),
            retried.to_string()
        );
    }
    setup.assert_no_delivery(Duration::from_millis(200)).await;
    let webhooks = setup.webhooks_once_attempted(&[8]).await;
    assert_eq!(webhooks[0]["deliveredAt"], Value::Null, "given up");
}

#[tokio::test]
async fn declines_and_cancels_are_told_and_refusals_are_not() {
    let mut setup = start(&[], None).await;
    setup.confirm("order-1").await;
    assert_eq!(setup.next_delivery().await.body()["data"]["status"], "DONE");
    assert_eq!(setup.cancel("order-1").await.status(), 200);
    let cancelled = setup.next_delivery().await.body();
    assert_eq!(cancelled["data"]["status"], "CANCELED");
    assert_eq!(cancelled["data"]["cancels"][0]["cancelReason"], "refund");
    // Repeats change nothing and tell nothing.
    assert_eq!(setup.cancel("order-1").await.status(), 400);
    assert_eq!(setup.confirm("order-1").await.status(), 400);

    setup
        .put_faults(json!({ "mode": "DELAY", "delayMs": 50, "declineRate": 1.0 }))
        .await;
    assert_eq!(setup.confirm("order-2").await.status(), 403);
    let declined = setup.next_delivery().await.body();
    assert_eq!(declined["data"]["status"], "ABORTED");
    assert_eq!(declined["data"]["failure"]["code"], "REJECT_CARD_PAYMENT");

    let told: Vec<_> = setup
        .webhooks_once_attempted(&[1, 1, 1])
        .await
        .iter()
        .map(|w| (w["orderId"].clone(), w["status"].clone()))
        .collect();
    assert_eq!(
        told,
        [
            (json!("order-1"), json!("DONE")),
            (json!("order-1"), json!("CANCELED")),
            (json!("order-2"), json!("ABORTED")),
        ]
    );
    setup.assert_no_delivery(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn webhooks_false_suppresses_them_until_set_again() {
    let mut setup = start(&[], None).await;
    setup
        .put_faults(json!({ "mode": "NORMAL", "webhooks": false }))
        .await;
    setup.confirm("order-1").await;
    setup.cancel("order-1").await;
    setup.assert_no_delivery(Duration::from_millis(300)).await;
    assert_eq!(setup.ledger().await["webhooks"], json!([]));

    setup.put_faults(json!({ "mode": "NORMAL" })).await;
    setup.confirm("order-2").await;
    assert_eq!(
        setup.next_delivery().await.body()["data"]["orderId"],
        "order-2"
    );
}
