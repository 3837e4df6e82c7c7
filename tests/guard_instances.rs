//! The PG guard across origin instances sharing one PostgreSQL database: an operator's
//! setting of the breaker reaches every instance, and the limiter's budget is one for all
//! of them, as the PG counts.

use crate::support;

use std::time::Duration;

use harness::eventually::eventually;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::calls::paused_for;
use support::{order_body, System, OPERATOR_TOKEN};

/// An operator's setting of the breaker, made on one instance, is in force on another
/// instance on the same PostgreSQL database, and survives a restart. Within a second is
/// what the 500 ms reads give (`guard::control`'s tests, on paused time); here the time
/// is printed, and a loaded machine is allowed five.
#[tokio::test]
async fn a_breaker_setting_reaches_every_instance_and_survives_a_restart() {
    let mut system = System::backend_on_postgres(&[]).await;
    let second = system.second_origin.clone().expect("a second instance");
    let set = system
        .http
        .post(format!("{}/admin/guard/breaker", system.origin_admin))
        .bearer_auth(OPERATOR_TOKEN)
        .json(&json!({"state": "FORCED_OPEN", "reason": "PG incident 42"}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), StatusCode::OK);
    let set_at = std::time::Instant::now();
    eventually(
        "the second instance follows the setting",
        Duration::from_secs(5),
        Duration::from_millis(50),
        || async {
            let guard = system.operator_get_at(&second, "/admin/guard").await;
            let control = &guard["breaker"]["control"];
            (control["mode"] == "FORCED_OPEN" && control["reason"] == "PG incident 42")
                .then_some(())
                .ok_or_else(|| control.to_string())
        },
    )
    .await;
    println!("the second instance followed in {:?}", set_at.elapsed());
    let (status, paused_for, payment) = {
        let response = system
            .try_confirm_at(
                &second,
                "user-1",
                Some("key-forced"),
                &order_body("order-forced"),
            )
            .await
            .unwrap();
        (
            response.status(),
            paused_for(&response),
            response.json::<serde_json::Value>().await.unwrap(),
        )
    };
    assert_eq!(status, reqwest::StatusCode::CREATED);
    assert_eq!(payment["failureReason"], "CIRCUIT_OPEN");
    assert_eq!(
        paused_for,
        Some(10_000),
        "forced open: asked again after an open breaker's wait"
    );
    assert_eq!(system.ledger().await["requestCount"], 0);

    system.restart_origin().await;
    let guard = system.operator_get("/admin/guard").await;
    assert_eq!(
        guard["breaker"]["control"]["mode"], "FORCED_OPEN",
        "{guard}"
    );
}

/// The most of `times` (ms) in any window of `window_ms`.
fn most_in_any_window(times: &[u64], window_ms: u64) -> usize {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let mut first = 0;
    (0..sorted.len())
        .map(|last| {
            while sorted[first] + window_ms <= sorted[last] {
                first += 1;
            }
            last + 1 - first
        })
        .max()
        .unwrap_or(0)
}

/// Two instances on one PostgreSQL database share the PG's budget: 80 confirms a second
/// offered across both against `LIMITER_RATE=50/1s`, and the simulator receives at most
/// 50 in any second of its own clock.
#[tokio::test]
async fn two_instances_on_postgres_keep_one_limit_at_the_pg_together() {
    const OFFERED: u64 = 400;
    const EVERY: Duration = Duration::from_micros(12_500);
    // The limiter alone: no breaker to open on a call the loaded machine made slow.
    let system = System::backend_on_postgres(&[
        ("LIMITER", "sliding-window"),
        ("LIMITER_RATE", "50/1s"),
        ("BREAKER_ENABLED", "false"),
    ])
    .await;
    let second = system.second_origin.clone().expect("a second instance");
    let instances = [system.origin.clone(), second];
    let start = tokio::time::Instant::now();
    let answers = futures_util::future::join_all((0..OFFERED).map(|n| {
        let (system, instances) = (&system, &instances);
        async move {
            tokio::time::sleep_until(start + EVERY * n as u32).await;
            let order = format!("order-{n}");
            let base = &instances[n as usize % 2];
            let answer = system
                .try_confirm_at(base, "user-1", Some(&order), &order_body(&order))
                .await
                .expect("the origin answers");
            let status = answer.status();
            let payment: Value = answer.json().await.expect("JSON");
            match payment["failureReason"].as_str() {
                Some(reason) => reason.to_owned(),
                None => format!("{status} {payment}"),
            }
        }
    }))
    .await;
    let ledger = system.ledger().await;
    let received: Vec<u64> = ledger["requests"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|entry| entry["receivedAt"].as_u64().expect("a time"))
        .collect();
    let limited = answers.iter().filter(|r| *r == "RATE_LIMITED").count();
    let most = most_in_any_window(&received, 1_000);
    println!(
        "offered {OFFERED} in {:?}; the PG received {} (most in any 1 s: {most}), {limited} refused",
        start.elapsed(),
        received.len(),
    );
    assert!(most <= 50, "the PG saw {most} in one second");
    assert_eq!(received.len() + limited, OFFERED as usize, "{answers:?}");
    assert!(
        received.len() >= 100,
        "both instances still send: {}",
        received.len()
    );
}
