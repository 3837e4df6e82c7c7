//! The simulator behind a real socket, for the faults that act below HTTP:
//! a refused port, closed keep-alive connections, a dropped connection, and
//! a shutdown that does not wait for held answers; and the capacity, under
//! clients confirming at once.

use std::io;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use gateway_sim::config::DEFAULT_SECRET_KEY;
use gateway_sim::{serve, SimState};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

struct Sim {
    base: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<io::Result<()>>,
}

async fn start() -> Sim {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("bound address"));
    let (stop, stopped) = oneshot::channel();
    let shutdown = async {
        // A dropped sender stops the server too.
        let _ = stopped.await;
    };
    let task = tokio::spawn(serve(listener, SimState::default(), shutdown));
    Sim { base, stop, task }
}

fn authorization() -> String {
    format!(
        "Basic {}",
        STANDARD.encode(format!("{DEFAULT_SECRET_KEY}:"))
    )
}

/// A client of its own, so no connection is shared with another.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

impl Sim {
    async fn confirm(
        &self,
        client: &reqwest::Client,
        order_id: &str,
    ) -> reqwest::Result<reqwest::Response> {
        client
            .post(format!("{}/v1/payments/confirm", self.base))
            .header("authorization", authorization())
            .json(&json!({ "paymentKey": format!("pk-{order_id}"), "orderId": order_id, "amount": 1000 }))
            .send()
            .await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let response = client()
            .get(format!("{}{path}", self.base))
            .header("authorization", authorization())
            .send()
            .await
            .expect("answered");
        let status = response.status().as_u16();
        (status, response.json().await.expect("JSON body"))
    }

    async fn put_faults(&self, faults: Value) -> Value {
        let response = client()
            .put(format!("{}/admin/faults", self.base))
            .json(&faults)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
        response.json().await.expect("JSON body")
    }

    async fn stop(self) -> io::Result<()> {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("serve returns soon after shutdown")
            .expect("serve did not panic")
    }
}

#[tokio::test]
async fn refuse_connections_closes_the_port_then_listens_again() {
    let sim = start().await;
    let pooled = client();
    let warm = sim.confirm(&pooled, "order-1").await.expect("answered");
    assert_eq!(warm.status(), 200);

    let started = Instant::now();
    let answer = sim
        .put_faults(json!({ "mode": "REFUSE_CONNECTIONS", "durationMs": 1500 }))
        .await;
    assert_eq!(answer["mode"], "REFUSE_CONNECTIONS");
    assert_eq!(answer["durationMs"], 1500);

    let fresh = sim
        .confirm(&client(), "order-2")
        .await
        .expect_err("the port is closed");
    assert!(fresh.is_connect(), "{fresh:?}");
    let reused = sim.confirm(&pooled, "order-3").await;
    assert!(
        reused.is_err(),
        "answered over a kept-alive connection: {reused:?}"
    );

    let reopened = loop {
        match sim.confirm(&client(), "order-4").await {
            Ok(response) => break response,
            Err(err) => {
                assert!(err.is_connect(), "{err:?}");
                assert!(started.elapsed() < Duration::from_secs(10), "still closed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert_eq!(reopened.status(), 200);
    let (_, faults) = sim.get("/admin/faults").await;
    assert_eq!(faults["mode"], "NORMAL");
    assert_eq!(faults["durationMs"], Value::Null);

    let retried = sim
        .confirm(&pooled, "order-3")
        .await
        .expect("the pooled client connects again");
    assert_eq!(retried.status(), 200);

    let (_, ledger) = sim.get("/admin/ledger").await;
    let received: Vec<_> = ledger["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| r["orderId"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        received,
        ["order-1", "order-4", "order-3"],
        "nothing got in while refusing"
    );
    sim.stop().await.expect("serve ends cleanly");
}

#[tokio::test]
async fn hang_before_processing_drops_the_connection_without_an_answer() {
    let sim = start().await;
    sim.put_faults(json!({ "mode": "HANG_BEFORE_PROCESSING", "delayMs": 300 }))
        .await;

    let patient = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let started = Instant::now();
    let err = sim
        .confirm(&patient, "order-1")
        .await
        .expect_err("no answer comes");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(!err.is_timeout(), "the connection was dropped: {err:?}");

    let (_, ledger) = sim.get("/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 1);
    assert_eq!(ledger["approvals"], json!([]));
    let (status, _) = sim.get("/v1/payments/pk-order-1").await;
    assert_eq!(status, 404);
    sim.stop().await.expect("serve ends cleanly");
}

#[tokio::test]
async fn shutdown_does_not_wait_for_a_held_answer() {
    let sim = start().await;
    sim.put_faults(json!({ "mode": "HANG_AFTER_PROCESSING" }))
        .await;
    let held = tokio::spawn(
        client()
            .post(format!("{}/v1/payments/confirm", sim.base))
            .header("authorization", authorization())
            .json(&json!({ "paymentKey": "pk-1", "orderId": "order-1", "amount": 1000 }))
            .send(),
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, ledger) = sim.get("/admin/ledger").await;
        if ledger["approvals"][0]["orderId"] == "order-1" {
            break;
        }
        assert!(Instant::now() < deadline, "never processed: {ledger}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The answer is held for ten minutes; `stop` allows five seconds.
    sim.stop().await.expect("serve ends cleanly");
    let answer = held.await.expect("the client task did not panic");
    assert!(answer.is_err(), "a held answer was sent: {answer:?}");
}

#[tokio::test]
async fn at_capacity_the_line_fills_and_the_rest_are_refused_with_nothing_charged() {
    let sim = start().await;
    let faults = sim
        .put_faults(json!({ "mode": "NORMAL", "capacity": 2, "lineLimit": 2, "delayMs": 1500 }))
        .await;
    assert_eq!(
        (faults["capacity"].clone(), faults["lineLimit"].clone()),
        (json!(2), json!(2))
    );
    let (_, in_force) = sim.get("/admin/faults").await;
    assert_eq!(in_force, faults);

    // Eight at once, each on its own connection: two processed, two waiting, four
    // refused before the first is done.
    let mut confirms = tokio::task::JoinSet::new();
    for n in 1..=8 {
        let order = format!("order-{n}");
        let (base, client) = (sim.base.clone(), client());
        confirms.spawn(async move {
            let answer = client
                .post(format!("{base}/v1/payments/confirm"))
                .header("authorization", authorization())
                .json(&json!({ "paymentKey": format!("pk-{order}"), "orderId": order, "amount": 1000 }))
                .send()
                .await
                .expect("answered");
            let status = answer.status().as_u16();
            let body: Value = answer.json().await.expect("JSON body");
            (order, status, body)
        });
    }
    let mut answered = Vec::new();
    while let Some(done) = confirms.join_next().await {
        answered.push(done.expect("the confirm did not panic"));
    }
    let statuses: Vec<u16> = answered.iter().map(|(_, status, _)| *status).collect();
    assert_eq!(
        statuses,
        [429, 429, 429, 429, 200, 200, 200, 200],
        "in the order answered"
    );
    let mut refused = Vec::new();
    for (order, _, body) in answered.iter().filter(|(_, status, _)| *status == 429) {
        assert_eq!(body["code"], "TOO_MANY_REQUESTS", "{body}");
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        refused.push(order.as_str());
    }

    let (_, ledger) = sim.get("/admin/ledger").await;
    assert_eq!(ledger["requestCount"], 4, "{ledger}");
    let approved: Vec<&str> = ledger["approvals"]
        .as_array()
        .expect("approvals")
        .iter()
        .filter_map(|approval| approval["orderId"].as_str())
        .collect();
    assert_eq!(approved.len(), 4, "{ledger}");
    for order in refused {
        assert!(!approved.contains(&order), "{order} was charged: {ledger}");
        let (status, _) = sim.get(&format!("/v1/payments/orders/{order}")).await;
        assert_eq!(status, 404, "{order}");
    }
    let (_, load) = sim.get("/admin/capacity").await;
    assert_eq!(
        [
            &load["processing"],
            &load["waiting"],
            &load["refused"],
            &load["served"]
        ],
        [0, 0, 4, 4],
        "{load}"
    );
    assert!(load["serviceP95Ms"].is_u64(), "{load}");
    sim.stop().await.expect("serve ends cleanly");
}
