//! The seed's limiter experiment (experiment 4) against the real system: 80 confirms a
//! second for 20 s through the edge, against a global limit of 50 per second, with
//! refusals never waited on. Admissions are counted where the seed counted them — at
//! the payment gateway, by approval time — and also by the client's send time. Prints
//! the maximum admitted in any 1 s and any 100 ms interval (sliding, not fixed slices).
//!
//! `cargo build --release -p origin -p gateway-sim` then
//! `E2E_BIN_DIR=target/release cargo bench --bench limiter_load`: release builds keep
//! the pipeline behind the limiter from adding its own jitter to the count.

// A benchmark uses a part of the end-to-end harness.
#[allow(dead_code)]
#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness::signed::now_ms;
use reqwest::StatusCode;
use serde_json::json;
use support::{EdgeSetup, System};

const RATE_PER_SECOND: u64 = 80;
const SECONDS: u64 = 20;
const LIMIT: usize = 50;

/// The most times in any half-open interval of `width_ms`.
fn max_in_any_interval(times: &mut [i64], width_ms: i64) -> usize {
    times.sort_unstable();
    let mut best = 0;
    let mut start = 0;
    for end in 0..times.len() {
        while times[end] - times[start] >= width_ms {
            start += 1;
        }
        best = best.max(end - start + 1);
    }
    best
}

/// The most times in one fixed slice `[k·width, (k+1)·width)`.
fn max_in_fixed_slice(times: &[i64], width_ms: i64) -> usize {
    let mut slices: HashMap<i64, usize> = HashMap::new();
    for time in times {
        *slices.entry(time.div_euclid(width_ms)).or_default() += 1;
    }
    slices.into_values().max().unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let system = Arc::new(
        System::start_with(EdgeSetup {
            vars: vec![
                ("RATE_LIMIT_GLOBAL", format!("{LIMIT}/1s")),
                ("RATE_LIMIT_USER", "1000/1s".into()),
            ],
            ..EdgeSetup::default()
        })
        .await,
    );
    let token = Arc::new(system.token("load-user", 3600));
    let sent_admitted = Arc::new(Mutex::new(Vec::<(String, i64)>::new()));
    let refused = Arc::new(Mutex::new(0usize));
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / RATE_PER_SECOND));
    let started = Instant::now();
    let mut requests = Vec::new();
    for i in 0..RATE_PER_SECOND * SECONDS {
        ticker.tick().await;
        let (system, token) = (system.clone(), token.clone());
        let (sent_admitted, refused) = (sent_admitted.clone(), refused.clone());
        requests.push(tokio::spawn(async move {
            let sent_at = now_ms();
            let order_id = format!("load-{i}");
            let response = system
                .http
                .post(format!("{}/payments/confirm", system.edge))
                .bearer_auth(token.as_str())
                .header("idempotency-key", &order_id)
                .json(&json!({ "orderId": order_id, "paymentKey": "pk", "amount": 1000 }))
                .send()
                .await
                .expect("the edge answers");
            match response.status() {
                StatusCode::CREATED => {
                    sent_admitted
                        .lock()
                        .expect("not poisoned")
                        .push((order_id, sent_at));
                }
                StatusCode::TOO_MANY_REQUESTS => *refused.lock().expect("not poisoned") += 1,
                other => panic!("unexpected {other}"),
            }
        }));
    }
    for request in requests {
        request.await.expect("the request task");
    }
    let elapsed = started.elapsed();

    let ledger = system.ledger().await;
    let approvals: HashMap<&str, i64> = ledger["approvals"]
        .as_array()
        .expect("approvals")
        .iter()
        .filter_map(|a| Some((a["orderId"].as_str()?, a["approvedAt"].as_i64()?)))
        .collect();
    let mut approved: Vec<i64> = approvals.values().copied().collect();
    let sent_admitted = sent_admitted.lock().expect("not poisoned").clone();
    let mut sent: Vec<i64> = sent_admitted.iter().map(|(_, at)| *at).collect();
    let mut transit: Vec<i64> = sent_admitted
        .iter()
        .filter_map(|(order, at)| Some(approvals.get(order.as_str())? - at))
        .collect();
    transit.sort_unstable();
    let refused = *refused.lock().expect("not poisoned");
    println!(
        "{} requests in {elapsed:.1?} against a global limit of {LIMIT}/s",
        RATE_PER_SECOND * SECONDS
    );
    println!(
        "admitted {} ({:.1}/s), refused {refused}",
        approved.len(),
        approved.len() as f64 / SECONDS as f64
    );
    println!(
        "max in any 1 s:   {} at the gateway, {} by client send time",
        max_in_any_interval(&mut approved, 1000),
        max_in_any_interval(&mut sent, 1000)
    );
    println!(
        "max in any 100 ms: {} at the gateway, {} by client send time",
        max_in_any_interval(&mut approved, 100),
        max_in_any_interval(&mut sent, 100)
    );
    println!(
        "max in a fixed 1 s slice: {} at the gateway, {} by client send time",
        max_in_fixed_slice(&approved, 1000),
        max_in_fixed_slice(&sent, 1000)
    );
    println!(
        "send -> gateway approval, ms: min {} p50 {} p99 {} max {}",
        transit[0],
        transit[transit.len() / 2],
        transit[transit.len() * 99 / 100],
        transit[transit.len() - 1]
    );
    println!(
        "seed (50/s limit, 80/s load): fixed window 77-100, token bucket 86, sliding window 52"
    );
}
