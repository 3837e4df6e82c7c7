//! The merchant's webhooks as the end-to-end tests check them (issue 39): what a
//! [`MerchantReceiver`] received, against the origin's outbox read through the pull API.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use harness::eventually::eventually;
use harness::merchant::MerchantReceiver;
use serde_json::Value;

use super::System;

/// How long deliveries may take to catch up on a loaded 2-core machine, a dead
/// instance's leases (the receiver's timeout plus 20 s) included.
const CAUGHT_UP_WITHIN: Duration = Duration::from_secs(120);

/// One delivery as the receiver recorded it.
pub struct Arrival {
    pub id: String,
    pub body: Value,
    /// How the receiver answered it: `ok`, `error`, `gone`, `hang` or `huge`.
    pub mode: String,
}

impl Arrival {
    /// Answered 2xx (`ok`: 204, `huge`: 200): the receiver took it.
    pub fn acknowledged(&self) -> bool {
        self.mode == "ok" || self.mode == "huge"
    }
}

/// What the receiver recorded, in arrival order.
pub async fn arrivals(receiver: &MerchantReceiver) -> Vec<Arrival> {
    let deliveries = receiver.deliveries().await;
    let listed = deliveries
        .as_array()
        .expect("the receiver lists deliveries");
    listed
        .iter()
        .map(|delivery| Arrival {
            id: delivery["webhookId"]
                .as_str()
                .expect("a webhook-id")
                .to_owned(),
            body: delivery["body"].clone(),
            mode: delivery["mode"].as_str().expect("a mode").to_owned(),
        })
        .collect()
}

/// Every event of the outbox of the origin at `base`: all pages of
/// `GET /admin/payment-events`, in their published order.
pub async fn outbox(system: &System, base: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = "0".to_owned();
    loop {
        let path = format!("/admin/payment-events?after={after}&limit=1000");
        let page = system.operator_get_at(base, &path).await;
        let listed = page["events"].as_array().expect("a page of events");
        if listed.is_empty() {
            return events;
        }
        events.extend(listed.iter().cloned());
        after = page["next"].as_str().expect("a cursor").to_owned();
    }
}

fn id_of(event: &Value) -> &str {
    event["id"].as_str().expect("an event's id")
}

/// An event of the pull API as its webhook carries it: without id, position, delivery.
fn message(event: &Value) -> Value {
    let mut message = event.clone();
    if let Some(fields) = message.as_object_mut() {
        for field in ["id", "position", "delivery"] {
            fields.remove(field);
        }
    }
    message
}

/// Waits until the origin at `base` holds every event of its outbox delivered and the
/// receiver has each, then checks issue 39's five: (1) every payment's final status
/// reached the receiver as the latest event of its order; (2) per order, the ids follow
/// the published order and none arrived before the receiver had acknowledged the one
/// before it; (3) none lost: the receiver's ids are the outbox's, each with the outbox's
/// message; (4) repeats only under their own `webhook-id` (same id, same body; no event
/// under two ids); (5) nothing refused. Returns the outbox and what arrived, in order.
pub async fn delivered_whole(
    system: &System,
    base: &str,
    receiver: &MerchantReceiver,
) -> (Vec<Value>, Vec<Arrival>) {
    let every = Duration::from_millis(500);
    let what = "every event of the outbox delivered and received";
    let (events, arrived) = eventually(what, CAUGHT_UP_WITHIN, every, || async {
        let events = outbox(system, base).await;
        let arrived = arrivals(receiver).await;
        let ids: BTreeSet<&str> = arrived.iter().map(|a| a.id.as_str()).collect();
        let waiting: Vec<String> = events
            .iter()
            .filter(|e| e["delivery"]["state"] != "DELIVERED" || !ids.contains(id_of(e)))
            .map(|e| format!("{} {}", id_of(e), e["delivery"]))
            .collect();
        match waiting.len() {
            0 => Ok((events, arrived)),
            n => Err(format!(
                "{n} of {}: {:?}",
                events.len(),
                &waiting[..n.min(5)]
            )),
        }
    })
    .await;
    assert_eq!(receiver.refused().await, 0, "(5) the receiver refused some");

    let by_id: BTreeMap<&str, Value> = events.iter().map(|e| (id_of(e), message(e))).collect();
    for arrival in &arrived {
        assert_eq!(
            Some(&arrival.body),
            by_id.get(arrival.id.as_str()),
            "(3, 4) {} is not the outbox's event of that id",
            arrival.id
        );
    }
    let distinct: BTreeSet<String> = by_id.values().map(Value::to_string).collect();
    assert_eq!(distinct.len(), by_id.len(), "(4) one event under two ids");

    // The outbox in its published order: each order's line.
    let mut lines: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for event in &events {
        let order = event["data"]["orderId"].as_str().expect("an order");
        lines.entry(order).or_default().push(id_of(event));
    }
    for (order, line) in &lines {
        for pair in line.windows(2) {
            let (earlier, later) = (pair[0], pair[1]);
            assert!(number(earlier) < number(later), "(2) {order}: {line:?}");
            let first = arrived.iter().position(|a| a.id == later).unwrap_or(0);
            let taken = arrived[..first]
                .iter()
                .any(|a| a.id == earlier && a.acknowledged());
            assert!(
                taken,
                "(2) {order}: {later} arrived before {earlier} was acknowledged"
            );
        }
    }

    let payments = system.payments_at(base).await;
    assert!(!payments.is_empty(), "no payment made");
    for (order, payment) in &payments {
        let latest = lines.get(order.as_str()).and_then(|line| {
            line.iter()
                .rev()
                .find_map(|id| by_id[id]["data"]["status"].as_str())
        });
        assert_eq!(
            latest,
            payment["status"].as_str(),
            "(1) {order}'s final status did not reach the receiver"
        );
    }
    (events, arrived)
}

/// The number of a `msg_…` id.
pub fn number(id: &str) -> u64 {
    id.strip_prefix("msg_")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("`{id}` is not msg_ and a number"))
}
