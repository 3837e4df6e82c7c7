//! The `capacity` and `lineLimit` faults through the router, on paused time: confirms
//! wait their turn for a slot, a full line is refused at once with nothing recorded,
//! look-ups and cancels are never capped, and a change at run time acts at once.
//! Over a real socket, in `tests/server.rs`.

use crate::common;

use std::time::Duration;

use common::{confirm_body, Reply, Sim};
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A confirm of `order` sent now from a task of its own: its answer and the
/// milliseconds since `start` it took to come.
fn confirm(sim: &Sim, start: Instant, order: &str) -> JoinHandle<(Reply, u128)> {
    let sim = sim.clone();
    let body = confirm_body(order, &format!("pk-{order}"), 1000);
    tokio::spawn(async move {
        let reply = sim.confirm(body).await;
        (reply, start.elapsed().as_millis())
    })
}

/// Lets the confirms sent so far reach where they wait, without moving the clock.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

fn capped(capacity: u32, line_limit: u32, delay_ms: u64) -> Value {
    json!({ "mode": "NORMAL", "capacity": capacity, "lineLimit": line_limit, "delayMs": delay_ms })
}

fn received(ledger: &Value) -> Vec<&str> {
    ledger["requests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|request| request["orderId"].as_str())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn confirms_wait_their_turn_so_latency_grows_with_load() {
    let sim = Sim::new();
    sim.put_faults(capped(2, 10, 200)).await;
    let start = Instant::now();
    let confirms: Vec<_> = (1..=6)
        .map(|n| confirm(&sim, start, &format!("order-{n}")))
        .collect();
    let mut took = Vec::new();
    for confirm in confirms {
        let (reply, ms) = confirm.await.expect("the confirm");
        assert_eq!(reply.assert_ok()["status"], "DONE");
        took.push(ms);
    }
    assert_eq!(took, [200, 200, 400, 400, 600, 600]);
}

#[tokio::test(start_paused = true)]
async fn past_the_line_a_confirm_is_refused_at_once_and_nothing_is_recorded() {
    let sim = Sim::new();
    sim.put_faults(capped(1, 1, 200)).await;
    let start = Instant::now();
    let processing = confirm(&sim, start, "order-1");
    let waiting = confirm(&sim, start, "order-2");
    settle().await;

    let refused = sim
        .confirm_keyed("key-3", confirm_body("order-3", "pk-order-3", 1000))
        .await;
    refused.assert_error(429, "TOO_MANY_REQUESTS");
    assert_eq!(start.elapsed(), Duration::ZERO, "answered at once");
    let load = sim.unauthenticated_get("/admin/capacity").await.assert_ok();
    assert_eq!(
        load,
        json!({ "processing": 1, "waiting": 1, "refused": 1, "served": 0, "serviceP95Ms": null }),
        "counted apart"
    );

    for confirm in [processing, waiting] {
        confirm.await.expect("the confirm").0.assert_ok();
    }
    let ledger = sim.ledger().await;
    assert_eq!(received(&ledger), ["order-1", "order-2"], "{ledger}");
    assert_eq!(ledger["approvals"].as_array().map(Vec::len), Some(2));
    sim.get("/v1/payments/orders/order-3")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    // No answer was kept under its key: sent again, it is processed afresh.
    let again = sim
        .confirm_keyed("key-3", confirm_body("order-3", "pk-order-3", 1000))
        .await;
    assert_eq!(again.assert_ok()["status"], "DONE");
}

#[tokio::test(start_paused = true)]
async fn a_confirm_waiting_for_a_slot_is_not_received_yet() {
    let sim = Sim::new();
    sim.put_faults(capped(1, 1, 200)).await;
    let start = Instant::now();
    let processing = confirm(&sim, start, "order-1");
    let waiting = confirm(&sim, start, "order-2");
    settle().await;
    assert_eq!(
        sim.get("/v1/payments/orders/order-1").await.assert_ok()["status"],
        "IN_PROGRESS"
    );
    sim.get("/v1/payments/orders/order-2")
        .await
        .assert_error(404, "NOT_FOUND_PAYMENT");
    assert_eq!(received(&sim.ledger().await), ["order-1"]);
    for confirm in [processing, waiting] {
        confirm.await.expect("the confirm").0.assert_ok();
    }
}

#[tokio::test(start_paused = true)]
async fn look_ups_and_cancels_are_never_capped() {
    let sim = Sim::new();
    sim.put_faults(capped(1, 0, 0)).await;
    let start = Instant::now();
    let (paid, _) = confirm(&sim, start, "order-1").await.expect("the confirm");
    paid.assert_ok();

    sim.put_faults(capped(1, 0, 1000)).await;
    let holding = confirm(&sim, start, "order-2");
    settle().await;
    let asked_at = Instant::now();
    assert_eq!(
        sim.get("/v1/payments/orders/order-1").await.assert_ok()["status"],
        "DONE"
    );
    assert_eq!(
        sim.cancel("pk-order-1").await.assert_ok()["status"],
        "CANCELED"
    );
    assert_eq!(
        asked_at.elapsed(),
        Duration::ZERO,
        "neither waited for a slot"
    );
    confirm(&sim, start, "order-3")
        .await
        .expect("the confirm")
        .0
        .assert_error(429, "TOO_MANY_REQUESTS");
    holding.await.expect("the confirm").0.assert_ok();
}

#[tokio::test(start_paused = true)]
async fn a_waiter_whose_client_leaves_gives_its_place_up() {
    let sim = Sim::new();
    sim.put_faults(capped(1, 1, 300)).await;
    let start = Instant::now();
    let processing = confirm(&sim, start, "order-1");
    settle().await;
    let gave_up = tokio::time::timeout(
        Duration::from_millis(100),
        sim.confirm(confirm_body("order-2", "pk-order-2", 1000)),
    )
    .await;
    assert!(gave_up.is_err(), "answered while every slot was busy");

    let next = confirm(&sim, start, "order-3");
    let (first, first_ms) = processing.await.expect("the confirm");
    let (third, third_ms) = next.await.expect("the confirm");
    first.assert_ok();
    third.assert_ok();
    assert_eq!(
        (first_ms, third_ms),
        (300, 600),
        "order-3 took the line's place"
    );
    assert_eq!(received(&sim.ledger().await), ["order-1", "order-3"]);
}

#[tokio::test(start_paused = true)]
async fn a_capacity_raised_at_run_time_lets_the_line_in_at_once() {
    let sim = Sim::new();
    sim.put_faults(capped(1, 5, 200)).await;
    let start = Instant::now();
    let confirms: Vec<_> = (1..=3)
        .map(|n| confirm(&sim, start, &format!("order-{n}")))
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let answer = sim.put_faults(capped(3, 5, 200)).await;
    assert_eq!(
        (answer["capacity"].clone(), answer["lineLimit"].clone()),
        (json!(3), json!(5))
    );

    let mut took = Vec::new();
    for confirm in confirms {
        let (reply, ms) = confirm.await.expect("the confirm");
        reply.assert_ok();
        took.push(ms);
    }
    assert_eq!(took, [200, 250, 250]);
}

#[tokio::test(start_paused = true)]
async fn with_a_capacity_delay_is_the_time_a_confirm_holds_its_slot() {
    let sim = Sim::new();
    sim.put_faults(json!({ "mode": "DELAY", "delayMs": 200, "capacity": 1, "lineLimit": 1 }))
        .await;
    let start = Instant::now();
    let confirms = [
        confirm(&sim, start, "order-1"),
        confirm(&sim, start, "order-2"),
    ];
    let mut took = Vec::new();
    for confirm in confirms {
        let (reply, ms) = confirm.await.expect("the confirm");
        reply.assert_ok();
        took.push(ms);
    }
    assert_eq!(took, [200, 400]);
}
