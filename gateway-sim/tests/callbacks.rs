//! Signed callbacks over real sockets: the simulator, served by its own
//! server, calls back a tiny axum receiver on loopback that checks each
//! callback with `rules::callback::verify`, as the origin will.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use gateway_sim::config::CallbackConfig;
use gateway_sim::{serve, SimState};
use rules::callback::{self, CallbackBody, CallbackStatus, SIGNATURE_HEADER, TIMESTAMP_HEADER};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

const SECRET: &str = "a callback secret of at least thirty-two bytes";
/// Longer than any callback takes on loopback, retries included.
const PATIENCE: Duration = Duration::from_secs(5);

/// One callback as the receiver got it.
struct Delivery {
    at: Instant,
    body: CallbackBody,
}

/// Answers each callback with the next scripted status, then 200; passes on
/// every callback whose signature verifies and fails the test on any other.
#[derive(Clone)]
struct Receiver {
    script: Arc<Mutex<VecDeque<StatusCode>>>,
    deliveries: mpsc::UnboundedSender<Result<Delivery, String>>,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name| headers.get(name).and_then(|value| value.to_str().ok());
    let verified = callback::verify(
        SECRET.as_bytes(),
        header(TIMESTAMP_HEADER),
        header(SIGNATURE_HEADER),
        &body,
        now_ms(),
    )
    .map_err(|rejection| rejection.to_string())
    .and_then(|()| serde_json::from_slice(&body).map_err(|err| err.to_string()))
    .map(|body| Delivery {
        at: Instant::now(),
        body,
    });
    let _ = receiver.deliveries.send(verified);
    let scripted = receiver
        .script
        .lock()
        .map(|mut script| script.pop_front())
        .unwrap_or_default();
    scripted.unwrap_or(StatusCode::OK)
}

struct Setup {
    sim: String,
    deliveries: mpsc::UnboundedReceiver<Result<Delivery, String>>,
    _stop: oneshot::Sender<()>,
}

/// Starts a receiver answering `script` first, and a simulator calling it
/// back; both stop when the test ends.
async fn start(script: &[StatusCode]) -> Setup {
    let (deliveries_tx, deliveries) = mpsc::unbounded_channel();
    let receiver = Receiver {
        script: Arc::new(Mutex::new(script.iter().copied().collect())),
        deliveries: deliveries_tx,
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let callback_url = format!(
        "http://{}/gateway/callback",
        listener.local_addr().expect("bound")
    );
    let app = Router::new()
        .route("/gateway/callback", post(receive))
        .with_state(receiver);
    tokio::spawn(async move { axum::serve(listener, app).await });

    let config = CallbackConfig::new(&callback_url, SECRET).expect("valid config");
    let state = SimState::with_callbacks(config).expect("client");
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

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Setup {
    /// The next verified callback; fails on a bad one or none in time.
    async fn next_delivery(&mut self) -> Delivery {
        tokio::time::timeout(PATIENCE, self.deliveries.recv())
            .await
            .expect("a callback in time")
            .expect("the receiver is running")
            .unwrap_or_else(|reason| panic!("a callback failed verification: {reason}"))
    }

    /// Fails if a callback arrives within `wait`.
    async fn assert_no_delivery(&mut self, wait: Duration) {
        if let Ok(Some(delivery)) = tokio::time::timeout(wait, self.deliveries.recv()).await {
            let what = delivery.map(|delivery| delivery.body);
            panic!("unexpected callback: {what:?}");
        }
    }

    async fn confirm(&self, order_id: &str) -> Value {
        let response = client()
            .post(format!("{}/v1/payments/confirm", self.sim))
            .json(&json!({ "paymentKey": "pk", "orderId": order_id, "amount": 1000 }))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
        response.json().await.expect("JSON body")
    }

    async fn cancel(&self, order_id: &str) {
        let response = client()
            .post(format!("{}/v1/payments/{order_id}/cancel", self.sim))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
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

    /// The ledger's callbacks once every one of them has reached a 2xx.
    async fn delivered_callbacks(&self) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let ledger: Value = client()
                .get(format!("{}/admin/ledger", self.sim))
                .send()
                .await
                .expect("answered")
                .json()
                .await
                .expect("JSON body");
            let callbacks = ledger["callbacks"].as_array().cloned().unwrap_or_default();
            if callbacks.iter().all(|c| c["deliveredAt"].is_u64()) {
                return callbacks;
            }
            assert!(Instant::now() < deadline, "undelivered: {ledger}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn hang_after_processing_calls_back_before_the_held_answer() {
    let mut setup = start(&[]).await;
    setup
        .put_faults(json!({ "mode": "HANG_AFTER_PROCESSING", "delayMs": 1000 }))
        .await;
    let started = Instant::now();
    let held = tokio::spawn({
        let sim = setup.sim.clone();
        async move {
            let response = client()
                .post(format!("{sim}/v1/payments/confirm"))
                .json(&json!({ "paymentKey": "pk", "orderId": "o-1", "amount": 1000 }))
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
    assert!(!held.is_finished(), "the answer came before the callback");
    assert!(delivery.at.duration_since(started) < Duration::from_millis(1000));
    assert_eq!(delivery.body.order_id, "o-1");
    assert_eq!(delivery.body.status, CallbackStatus::Approved);
    assert_eq!(delivery.body.amount, 1000);

    let (answered, answer) = held.await.expect("client task");
    assert!(answered > delivery.at);
    assert_eq!(answer["status"], "APPROVED");
    assert_eq!(
        answer["approvedAt"].as_i64(),
        delivery.body.approved_at,
        "the callback and the answer tell the same approval"
    );
    let callbacks = setup.delivered_callbacks().await;
    assert_eq!(callbacks.len(), 1);
    assert_eq!(callbacks[0]["orderId"], "o-1");
    assert_eq!(callbacks[0]["status"], "APPROVED");
    assert_eq!(callbacks[0]["attempts"], 1);
}

#[tokio::test]
async fn a_callback_answered_500_is_retried_after_a_pause() {
    let mut setup = start(&[StatusCode::INTERNAL_SERVER_ERROR]).await;
    setup.confirm("o-1").await;

    let first = setup.next_delivery().await;
    let second = setup.next_delivery().await;
    assert_eq!(first.body, second.body, "the same callback again");
    let pause = second.at.duration_since(first.at);
    assert!(
        pause >= Duration::from_millis(450),
        "retried after {pause:?}"
    );

    let callbacks = setup.delivered_callbacks().await;
    assert_eq!(callbacks.len(), 1);
    assert_eq!(callbacks[0]["attempts"], 2);
    setup.assert_no_delivery(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn declines_and_cancels_are_called_back() {
    let mut setup = start(&[]).await;
    setup.confirm("o-1").await;
    assert_eq!(
        setup.next_delivery().await.body.status,
        CallbackStatus::Approved
    );
    setup.cancel("o-1").await;
    let cancelled = setup.next_delivery().await.body;
    assert_eq!(cancelled.status, CallbackStatus::Cancelled);
    assert_eq!(cancelled.order_id, "o-1");
    assert!(cancelled.approved_at.is_some(), "{cancelled:?}");
    // A repeat cancel changes nothing and tells nothing.
    setup.cancel("o-1").await;

    setup
        .put_faults(json!({ "mode": "DELAY", "delayMs": 50, "declineRate": 1.0 }))
        .await;
    setup.confirm("o-2").await;
    let declined = setup.next_delivery().await.body;
    assert_eq!(declined.status, CallbackStatus::Declined);
    assert_eq!(declined.approved_at, None);

    let statuses: Vec<_> = setup
        .delivered_callbacks()
        .await
        .iter()
        .map(|c| (c["orderId"].clone(), c["status"].clone()))
        .collect();
    assert_eq!(
        statuses,
        [
            (json!("o-1"), json!("APPROVED")),
            (json!("o-1"), json!("CANCELLED")),
            (json!("o-2"), json!("DECLINED")),
        ]
    );
    setup.assert_no_delivery(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn callbacks_false_suppresses_them_until_set_again() {
    let mut setup = start(&[]).await;
    setup
        .put_faults(json!({ "mode": "NORMAL", "callbacks": false }))
        .await;
    setup.confirm("o-1").await;
    setup.cancel("o-1").await;
    setup.assert_no_delivery(Duration::from_millis(300)).await;
    assert_eq!(setup.delivered_callbacks().await, Vec::<Value>::new());

    setup.put_faults(json!({ "mode": "NORMAL" })).await;
    setup.confirm("o-2").await;
    let delivery = setup.next_delivery().await;
    assert_eq!(delivery.body.order_id, "o-2");
    assert_eq!(setup.delivered_callbacks().await.len(), 1);
}
