//! A merchant's receiver down for sixty retry caps (15 s in `make test`, five minutes in
//! `make soak`): payments go on meanwhile, one UNKNOWN settled by recovery mid-outage,
//! the oldest-waiting gauge climbs through the outage, and once the receiver is back it
//! gets everything, in order, none lost, and the gauge falls to 0. The start and the
//! payments are those of `merchant_webhooks_receivers.rs`.

use crate::merchant_webhooks_receivers::{confirm, pay, start, webhooks_status, SECRET, WITHIN};
use crate::support;

use std::time::{Duration, Instant};

use harness::eventually::eventually;
use harness::merchant::MerchantReceiver;
use reqwest::StatusCode;
use serde_json::json;
use support::merchant::delivered_whole;
use support::System;

/// The origin's `origin_webhook_backlog_oldest_age_seconds`.
async fn oldest_waiting_seconds(system: &System) -> f64 {
    let metrics = system.origin_metrics().await;
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("origin_webhook_backlog_oldest_age_seconds "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no origin_webhook_backlog_oldest_age_seconds in {metrics}"))
}

/// How long the receiver is down: `WEBHOOK_OUTAGE_SECONDS`, 15 s in `make test` and
/// five minutes in `make soak`. Everything else in the outage scales with it, so the
/// short run retries as often at the cap as the long one.
fn outage() -> Duration {
    let seconds = std::env::var("WEBHOOK_OUTAGE_SECONDS")
        .ok()
        .and_then(|seconds| seconds.parse().ok())
        .unwrap_or(15);
    Duration::from_secs(seconds)
}

#[tokio::test]
async fn a_receiver_down_for_sixty_retry_caps_gets_everything_once_it_is_back() {
    let outage = outage();
    // Sixty ticks of the outage; a delivery is tried again a tick apart at most (5 s
    // in a five-minute outage), so it is refused some sixty times at the cap and
    // delivery resumes within a tick of the receiver's return; the production default
    // doubles to an hour between tries.
    let tick = outage / 60;
    let retry_max_ms = tick.as_millis().max(1).to_string();
    let mut receiver = MerchantReceiver::start(SECRET).await;
    // Recovery runs when the test asks; the PG has 2 s to answer a confirm. Its one late
    // answer would open the breaker for BREAKER_OPEN_MS (10 s), which does not shrink
    // with the outage: the payments after it are what this test needs, not the breaker.
    let system = start(
        &receiver,
        &[
            ("MERCHANT_WEBHOOK_RETRY_MAX_MS", retry_max_ms.as_str()),
            ("MERCHANT_WEBHOOK_RETRY_FIRST_MS", "1"),
            ("GATEWAY_TIMEOUT_MS", "2000"),
            ("BREAKER_ENABLED", "false"),
            ("RECOVERY_INTERVAL_MS", "3600000"),
            ("RECOVERY_MIN_AGE_MS", "0"),
        ],
    )
    .await;
    pay(&system, "before", 2).await;
    delivered_whole(&system, &system.origin, &receiver).await;

    receiver.stop();
    let down = Instant::now();
    pay(&system, "down", 3).await;
    // One the PG approves but answers too late: UNKNOWN until recovery, mid-outage.
    system
        .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 10_000}))
        .await;
    let (status, unknown) = system.confirm_order("down-unknown").await;
    assert_eq!(
        (status, unknown["status"].as_str()),
        (StatusCode::ACCEPTED, Some("UNKNOWN")),
        "{unknown}"
    );
    system.set_faults(json!({"mode": "NORMAL"})).await;
    let (mut highest, mut ticks, mut recovered) = (0.0_f64, 0_u32, false);
    while down.elapsed() < outage {
        // Paced, not waited on: a payment every six ticks, recovery once past the
        // outage's middle, the gauge every tick.
        tokio::time::sleep(tick).await;
        ticks += 1;
        if ticks % 6 == 0 {
            confirm(&system, &format!("down-late-{ticks}"), false).await;
        }
        if !recovered && down.elapsed() >= outage / 2 {
            let report = system.run_recovery_at(&system.origin).await;
            assert_eq!(report["approved"], 1, "{report}");
            recovered = true;
        }
        highest = highest.max(oldest_waiting_seconds(&system).await);
    }
    assert!(recovered, "recovery ran mid-outage");
    let status = webhooks_status(&system).await;
    eprintln!(
        "after {:?} down: {} waiting, the oldest {} ms; the gauge's highest: {highest}",
        down.elapsed(),
        status["pending"],
        status["oldestAgeMs"]
    );
    // The first event down has waited nearly the whole outage.
    let most = outage.mul_f64(0.8);
    assert!(
        status["oldestAgeMs"].as_i64() > Some(most.as_millis() as i64),
        "{status}"
    );
    assert!(
        highest > most.as_secs_f64(),
        "the oldest waited {highest} s at most"
    );

    receiver.restart().await;
    let back = Instant::now();
    delivered_whole(&system, &system.origin, &receiver).await;
    eprintln!(
        "everything delivered {:?} after the receiver's return",
        back.elapsed()
    );
    eventually(
        "the gauge back to 0",
        WITHIN,
        Duration::from_secs(1),
        || async {
            let oldest = oldest_waiting_seconds(&system).await;
            if oldest == 0.0 {
                Ok(())
            } else {
                Err(format!("{oldest}"))
            }
        },
    )
    .await;
}
