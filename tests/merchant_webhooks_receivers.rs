//! The merchant's webhooks end to end against receivers that misbehave (issue 39): the
//! simulator and the origin as real processes, the merchant the receiver of
//! `harness::merchant`, which verifies every delivery with PyPI's `standardwebhooks`. A
//! receiver answering 500 for a while, one that never answers, one that answers 410, one
//! and one that answers 100 MB
//! (one down for long: `merchant_webhooks_outage.rs`): each time every payment's outcome
//! reaches it afterwards, in order per order, none lost, repeats only under their own
//! `webhook-id`, nothing refused (`support::merchant::delivered_whole`).

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use harness::eventually::eventually;
use harness::merchant::MerchantReceiver;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::merchant::{arrivals, delivered_whole, outbox, Arrival};
use support::System;

/// `whsec_` and the base64 of 33 bytes.
pub(crate) const SECRET: &str = "whsec_ZTJlLW1lcmNoYW50LXJlY2VpdmVycy1zZWNyZXQtMzJi";
/// How long another process may take to get somewhere on a loaded 2-core machine.
pub(crate) const WITHIN: Duration = Duration::from_secs(120);
const EVERY: Duration = Duration::from_millis(100);

/// The simulator and an origin delivering to `receiver`, configured with `more` over
/// this. A failed delivery is tried again after 100 ms, doubling to 2 s (the production
/// default: 5 s doubling to an hour), so a receiver that recovers gets everything within
/// seconds instead of a test waiting out the real backoff.
pub(crate) async fn start(receiver: &MerchantReceiver, more: &[(&'static str, &str)]) -> System {
    let url = receiver.url();
    let mut vars = vec![
        ("MERCHANT_WEBHOOK_URL", url.as_str()),
        ("MERCHANT_WEBHOOK_SECRET", SECRET),
        ("MERCHANT_WEBHOOK_RETRY_FIRST_MS", "100"),
        ("MERCHANT_WEBHOOK_RETRY_MAX_MS", "2000"),
    ];
    // Set later, a variable wins.
    vars.extend_from_slice(more);
    System::backend(&vars).await
}

/// Confirms `order` at the origin, declined by the PG when `declined`: how long the
/// origin took to answer, after asserting the payment's outcome.
pub(crate) async fn confirm(system: &System, order: &str, declined: bool) -> Duration {
    if declined {
        system
            .set_faults(json!({"mode": "NORMAL", "declineRate": 1.0}))
            .await;
    }
    let asked = Instant::now();
    let (status, payment) = system.confirm_order(order).await;
    let took = asked.elapsed();
    if declined {
        system.set_faults(json!({"mode": "NORMAL"})).await;
    }
    let expected = if declined { "FAILED" } else { "APPROVED" };
    assert_eq!(
        (status, payment["status"].as_str()),
        (StatusCode::CREATED, Some(expected)),
        "{order}: {payment}"
    );
    took
}

/// Pays `count` orders named `{prefix}-{n}`: approved, but the last of two or more,
/// which the PG declines.
pub(crate) async fn pay(system: &System, prefix: &str, count: usize) {
    for n in 1..=count {
        confirm(system, &format!("{prefix}-{n}"), count > 1 && n == count).await;
    }
}

/// How many times each id arrived and was not acknowledged.
fn unacknowledged_arrivals(arrived: &[Arrival]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for arrival in arrived.iter().filter(|a| !a.acknowledged()) {
        *counts.entry(arrival.id.as_str()).or_default() += 1;
    }
    counts
}

/// Waits until `ids` or more ids were each delivered and not acknowledged twice or more:
/// tried, failed, tried again under the same id.
async fn tried_again(receiver: &MerchantReceiver, ids: usize) {
    eventually("deliveries tried again", WITHIN, EVERY, || async {
        let arrived = arrivals(receiver).await;
        let counts = unacknowledged_arrivals(&arrived);
        let again = counts.values().filter(|n| **n >= 2).count();
        if again >= ids {
            Ok(())
        } else {
            Err(format!("{counts:?}"))
        }
    })
    .await;
}

pub(crate) async fn webhooks_status(system: &System) -> Value {
    system.operator_get("/admin/webhooks").await
}

#[tokio::test]
async fn a_receiver_failing_for_a_while_gets_everything_under_the_same_ids_once_it_answers() {
    let receiver = MerchantReceiver::start(SECRET).await;
    receiver.set_mode("error").await;
    let system = start(&receiver, &[]).await;
    pay(&system, "failing", 4).await;
    // Each order's first event answered 500 at least twice; the later ones wait.
    tried_again(&receiver, 4).await;
    let status = webhooks_status(&system).await;
    assert!(status["pending"].as_i64() >= Some(8), "{status}");
    let failing = status["failing"].as_array().expect("failures listed");
    assert!(
        failing.iter().all(|e| e["delivery"]["lastStatus"] == 500) && !failing.is_empty(),
        "{status}"
    );

    receiver.set_mode("ok").await;
    let (_, arrived) = delivered_whole(&system, &system.origin, &receiver).await;
    let answered_500 = unacknowledged_arrivals(&arrived);
    assert!(answered_500.len() >= 4, "{answered_500:?}");
    for id in answered_500.keys() {
        assert!(
            arrived.iter().any(|a| a.id == *id && a.acknowledged()),
            "{id} was answered 500 and never taken under its own id"
        );
    }
    assert_eq!(webhooks_status(&system).await["pending"], 0);
}

#[tokio::test]
async fn a_hanging_receiver_times_out_and_is_tried_again_while_payments_go_on() {
    let receiver = MerchantReceiver::start(SECRET).await;
    // The receiver has 1 s to answer (the default: 10 s); a confirm has 5 s at the PG.
    let system = start(
        &receiver,
        &[
            ("MERCHANT_WEBHOOK_TIMEOUT_MS", "1000"),
            ("GATEWAY_TIMEOUT_MS", "5000"),
        ],
    )
    .await;
    let before = confirm(&system, "before-hang", false).await;
    delivered_whole(&system, &system.origin, &receiver).await;

    receiver.set_mode("hang").await;
    confirm(&system, "hang-1", false).await;
    tried_again(&receiver, 1).await;
    // Deliveries hang while these are confirmed.
    let mut meanwhile = Vec::new();
    for (n, declined) in [(2, false), (3, false), (4, true)] {
        meanwhile.push(confirm(&system, &format!("hang-{n}"), declined).await);
    }
    eprintln!("a confirm took {before:?} before the receiver hung, {meanwhile:?} while it did");
    for took in &meanwhile {
        assert!(*took < Duration::from_secs(5), "{meanwhile:?}");
    }
    tried_again(&receiver, 4).await;
    let status = webhooks_status(&system).await;
    let failing = status["failing"].as_array().expect("failures listed");
    assert!(
        failing
            .iter()
            .any(|e| e["delivery"]["lastError"] == "no answer in time"),
        "{status}"
    );

    receiver.set_mode("ok").await;
    delivered_whole(&system, &system.origin, &receiver).await;
}

#[tokio::test]
async fn a_gone_receiver_is_sent_nothing_more_until_an_operator_enables_it() {
    let receiver = MerchantReceiver::start(SECRET).await;
    receiver.set_mode("gone").await;
    let system = start(&receiver, &[]).await;
    pay(&system, "gone", 3).await;
    let disabled = eventually("the endpoint disabled", WITHIN, EVERY, || async {
        let status = webhooks_status(&system).await;
        if status["endpoint"]["disabled"].is_null() {
            Err(status.to_string())
        } else {
            Ok(status)
        }
    })
    .await;
    assert_eq!(
        disabled["endpoint"]["disabled"]["reason"], "answered 410 Gone",
        "{disabled}"
    );
    let when_disabled = arrivals(&receiver).await.len();
    pay(&system, "while-disabled", 2).await;
    // Nothing arriving needs a span to be seen: 3 s is more than the longest retry wait
    // (2 s) and the delivery loop's rest while the endpoint is disabled (1 s).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let arrived = arrivals(&receiver).await;
    let late: Vec<&str> = arrived[when_disabled..]
        .iter()
        .map(|a| a.id.as_str())
        .collect();
    // At most those already on their way, one per order of the first three.
    assert!(late.len() <= 3, "sent while disabled: {late:?}");
    assert!(
        arrived.iter().all(|a| !a.body["data"]["orderId"]
            .as_str()
            .is_some_and(|o| o.starts_with("while-disabled"))),
        "an order paid while the endpoint was disabled was sent"
    );
    assert!(webhooks_status(&system).await["pending"].as_i64() >= Some(10));

    receiver.set_mode("ok").await;
    let enable = system
        .http
        .post(format!("{}/admin/webhooks/enable", system.origin_admin));
    let (status, enabled) = system.operator_call(enable).await;
    assert_eq!(
        (status, &enabled["disabled"]),
        (StatusCode::OK, &Value::Null)
    );
    delivered_whole(&system, &system.origin, &receiver).await;
    assert!(webhooks_status(&system).await["endpoint"]["disabled"].is_null());
}

/// The origin's peak resident memory so far (`VmHWM`), in bytes.
fn peak_memory(system: &System) -> u64 {
    let pid = system.pid("origin").expect("the origin runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|err| panic!("/proc/{pid}/status: {err}"));
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| {
            value
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    kib * 1024
}

#[tokio::test]
async fn huge_answers_count_as_delivered_without_the_origin_holding_them() {
    const MIB: u64 = 1024 * 1024;
    let receiver = MerchantReceiver::start(SECRET).await;
    let system = start(&receiver, &[]).await;
    pay(&system, "warm", 1).await;
    delivered_whole(&system, &system.origin, &receiver).await;
    let before = peak_memory(&system);

    receiver.set_mode("huge").await;
    pay(&system, "huge", 4).await;
    pay(&system, "after", 2).await;
    let (_, arrived) = delivered_whole(&system, &system.origin, &receiver).await;
    let huge: BTreeSet<&str> = arrived
        .iter()
        .filter(|a| a.mode == "huge")
        .map(|a| a.id.as_str())
        .collect();
    assert_eq!(
        huge.len(),
        12,
        "each event of the six orders answered 100 MB"
    );
    for event in outbox(&system, &system.origin).await {
        let status = if huge.contains(event["id"].as_str().expect("an id")) {
            200
        } else {
            204
        };
        assert_eq!(event["delivery"]["lastStatus"], status, "{event}");
    }
    let after = peak_memory(&system);
    eprintln!(
        "the origin's peak memory: {} MiB before, {} MiB after",
        before / MIB,
        after / MIB
    );
    // Each answer is 100 MB: one held whole would show.
    assert!(after < before + 48 * MIB, "{before} -> {after}");
}
