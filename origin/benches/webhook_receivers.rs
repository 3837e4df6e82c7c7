//! What a misbehaving merchant costs the payments: a confirm's latency (through the
//! origin's router, the simulator on loopback as the PG, SQLite) while the outbox is
//! delivered to a receiver that acknowledges, answers 500, hangs past the timeout,
//! answers 200 with a 100 MB body, or answers 410 — beside an origin that pushes
//! nothing. The retries wait as by default, and for one 500 variant 10 to 100 ms. Each
//! variant runs alone (its own origin and database, nothing else delivering), in turns,
//! a round of confirms each, so the machine's noise falls on all of them alike. The
//! receiver runs on a thread and runtime of its own, as a merchant's server is not on
//! the origin's scheduler; the machine's two cores it still shares.
//!
//! A round times a running origin, not a starting one: its delivery has made its first
//! pass (and opened its connections) before the timing starts, and the round lasts
//! long enough — half a second — to hold what a running origin does every so often,
//! with webhooks or without: SQLite's checkpoints (every 250 ms), the outbox's passes.
//! Each p99 ratio comes with its 95 % bootstrap interval: the baseline's own spans
//! about 0.75–1.3, so one run tells a ratio only to a quarter either way.
//!
//! `cargo bench -p origin --bench webhook_receivers`

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use origin::outbox::config::MerchantWebhooks;
use origin::outbox::signature::Secrets;
use origin::policy::delivery::Schedule;
use proptest::prelude::RngExt as _;
use proptest::test_runner::{RngAlgorithm, TestRng};
use support::{signed, simulator, Origin};

const ROUNDS: usize = 8;
/// Bootstrap resamples behind each p99 ratio's interval.
const RESAMPLES: usize = 2_000;
const PER_ROUND: usize = 200;
/// Confirms a fresh origin makes before its round is timed.
const WARM_UP: usize = 5;
/// And the rest after them, long enough for the delivery's first pass (the loop rests
/// 50 ms when idle) to send their events: a running origin has its connections to
/// the receiver open already; a fresh one's first pass opens them all at once.
const SETTLE: Duration = Duration::from_millis(150);

/// A receiver that answers as `kind` says.
fn receiver(kind: &'static str) -> Router {
    Router::new().route(
        "/hooks",
        post(move || async move {
            match kind {
                "ok" => (StatusCode::NO_CONTENT, Body::empty()),
                "500" | "500, retried every 10–100 ms" => {
                    (StatusCode::INTERNAL_SERVER_ERROR, Body::empty())
                }
                "410" => (StatusCode::GONE, Body::empty()),
                "hang" => {
                    tokio::time::sleep(Duration::from_secs(3_600)).await;
                    (StatusCode::NO_CONTENT, Body::empty())
                }
                _ => {
                    // One megabyte, sent a hundred times: the receiver's cost is sending.
                    let megabyte = Bytes::from(vec![b'x'; 1 << 20]);
                    let chunks = futures_util::stream::iter(
                        (0..100).map(move |_| Ok::<_, std::io::Error>(megabyte.clone())),
                    );
                    (StatusCode::OK, Body::from_stream(chunks))
                }
            }
        }),
    )
}

/// Serves `router` on a thread with a runtime of its own, until the bench ends.
fn serve_apart(router: Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            axum::serve(listener, router)
                .await
                .expect("the receiver serves");
        });
    });
    url
}

async fn origin_for(kind: &'static str, gateway: &str) -> Origin {
    if kind == "none" {
        return Origin::with_gateway(gateway, Duration::from_secs(3)).await;
    }
    let url = serve_apart(receiver(kind));
    let webhooks = MerchantWebhooks {
        url: format!("{url}/hooks").parse().expect("a URL"),
        secrets: Secrets::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("a secret"),
        concurrency: 32,
        timeout: Duration::from_secs(10),
        // The defaults (5 s, doubling); or tried again at once and often, the worst a
        // failing receiver can make of it.
        schedule: if kind.contains("every") {
            Schedule {
                first_ms: 10,
                max_ms: 100,
                give_up_after_ms: 3_600_000,
            }
        } else {
            Schedule::default()
        },
    };
    Origin::with_merchant_webhooks(gateway, webhooks).await
}

#[tokio::main]
async fn main() {
    let gateway = simulator().await;
    let kinds = [
        "none",
        "ok",
        "500",
        "500, retried every 10–100 ms",
        "hang",
        "huge",
        "410",
    ];
    let mut took: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    let mut order = 0;
    for _ in 0..ROUNDS {
        for (index, kind) in kinds.iter().enumerate() {
            // One origin at a time, its own database: nothing else delivers meanwhile.
            let origin = origin_for(kind, &gateway).await;
            for round_trip in 0..WARM_UP + PER_ROUND {
                if round_trip == WARM_UP {
                    tokio::time::sleep(SETTLE).await;
                }
                order += 1;
                let body = serde_json::json!({
                    "orderId": format!("order-{order}"), "paymentKey": format!("pk-{order}"), "amount": 1000,
                });
                let key = format!("key-{order}");
                let started = Instant::now();
                let (status, answer) = origin
                    .send(signed(
                        "POST",
                        "/payments/confirm",
                        Some(&key),
                        &body.to_string(),
                    ))
                    .await;
                if round_trip >= WARM_UP {
                    took[index].push(started.elapsed().as_secs_f64() * 1_000.0);
                }
                assert_eq!(status, StatusCode::CREATED, "{answer}");
            }
        }
    }
    println!("| receiver | confirms | p50 ms | p95 ms | p99 ms | p50 × no webhooks | p99 × no webhooks | its 95 % interval |");
    println!("|---|---|---|---|---|---|---|---|");
    let base = took[0].clone();
    let (base50, base99) = (
        quantile(&mut base.clone(), 0.5),
        quantile(&mut base.clone(), 0.99),
    );
    for (kind, times) in kinds.iter().zip(took.iter_mut()) {
        let (p50, p95, p99) = (
            quantile(times, 0.5),
            quantile(times, 0.95),
            quantile(times, 0.99),
        );
        let (low, high) = p99_ratio_interval(times, &base);
        println!(
            "| {kind} | {} | {p50:.2} | {p95:.2} | {p99:.2} | {:.2} | {:.2} | {low:.2}–{high:.2} |",
            times.len(),
            p50 / base50,
            p99 / base99
        );
    }
}

fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let at = ((values.len() as f64 * q).ceil() as usize).clamp(1, values.len()) - 1;
    values[at]
}

/// How far the p99 ratio of `times` to `base` could be from this run's by chance: the
/// 2.5th and 97.5th percentiles of the ratio over [`RESAMPLES`] bootstrap resamples of
/// both (the 99th percentile of 1,600 confirms is their 16th slowest, so a few slow
/// confirms more or fewer move it). The resamples are drawn from a seeded generator,
/// so a run's interval is reproducible from its confirms.
fn p99_ratio_interval(times: &[f64], base: &[f64]) -> (f64, f64) {
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let p99 = quantile(&mut resample(times, &mut rng), 0.99);
            p99 / quantile(&mut resample(base, &mut rng), 0.99)
        })
        .collect();
    (quantile(&mut ratios, 0.025), quantile(&mut ratios, 0.975))
}

/// As many values drawn from `values`, with replacement.
fn resample(values: &[f64], rng: &mut TestRng) -> Vec<f64> {
    (0..values.len())
        .map(|_| values[rng.random_range(0..values.len())])
        .collect()
}
