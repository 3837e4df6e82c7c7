//! Experiment 2 — what a retrying client does to the PG. The product never retries an
//! approval; this is a lab-only client that calls the simulator directly, as a naive
//! integration would, retrying a timed-out confirm. The PG approves and then holds the
//! answer 6 s, past the client's 3 s timeout, so every attempt times out. Beside it: the
//! same load through our origin.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{confirm, count, Report, Table};
use crate::load::{open_model, Sample};
use crate::stack::{received, Stack};
use crate::stats::{max_in_any_window, percentile_ms, range};

const RATE: f64 = 10.0;
const SECONDS: u64 = 30;
const TIMEOUT: Duration = Duration::from_secs(3);
/// The key the simulator accepts when `GATEWAY_SECRET_KEY` is unset, as the lab's
/// stack leaves it: Toss's public documentation test key.
const SIM_SECRET_KEY: &str = "test_sk_zXLkKEypNArWmo50nX3lmeaxYG5R";

#[derive(Clone, Copy)]
enum Retry {
    None,
    Immediate,
    Backoff,
}

#[derive(Default)]
struct Figures {
    gateway_requests: Vec<f64>,
    client: Vec<f64>,
    approvals: Vec<f64>,
    gateway_max_per_s: Vec<f64>,
    p95: Vec<f64>,
}

const HEADER: [&str; 6] = [
    "retries",
    "PG requests / client requests",
    "factor",
    "approvals recorded at the PG",
    "PG max per second",
    "payment p95",
];

pub async fn report(runs: u32, _out: &Path) -> anyhow::Result<Report> {
    let configs = [
        ("none", Retry::None, true),
        ("3 attempts, immediate", Retry::Immediate, true),
        ("3 attempts, exponential + jitter", Retry::Backoff, true),
        (
            "3 attempts, immediate — PG not idempotent",
            Retry::Immediate,
            false,
        ),
    ];
    let mut rows = Vec::new();
    for (label, retry, idempotent) in configs {
        let mut f = Figures::default();
        for run in 1..=runs {
            let stack = Stack::start(&[]).await?;
            stack
                .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 6_000, "idempotent": idempotent}))
                .await?;
            let prefix = format!("retry-{}-{run}", label.len());
            let start = Instant::now();
            let samples = open_model(start, RATE, Duration::from_secs(SECONDS), |n| {
                attempts(
                    stack.http.clone(),
                    stack.sim.clone(),
                    format!("{prefix}-{n}"),
                    retry,
                )
            })
            .await;
            record(&mut f, &stack, &samples).await?;
        }
        rows.push(row(label, &f));
    }
    // Ours: the same load through the origin, which sends each approval once.
    let mut f = Figures::default();
    let mut unknown = Vec::new();
    let mut refused = Vec::new();
    for run in 1..=runs {
        let stack = Stack::start(&[]).await?;
        stack
            .set_faults(json!({"mode": "HANG_AFTER_PROCESSING", "delayMs": 6_000}))
            .await?;
        let prefix = format!("retry-origin-{run}");
        let samples = open_model(Instant::now(), RATE, Duration::from_secs(SECONDS), |n| {
            confirm(&stack, &format!("{prefix}-{n}"))
        })
        .await;
        unknown.push(count(&samples, "UNKNOWN") as f64);
        refused.push(count(&samples, "FAILED:CIRCUIT_OPEN") as f64);
        record(&mut f, &stack, &samples).await?;
    }
    rows.push(row(
        "our origin, as shipped (never retries; breaker on)",
        &f,
    ));
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "2. What retries do to the PG",
        setup: format!(
            "The PG approves at once and holds the answer 6 s (`HANG_AFTER_PROCESSING`); a \
             3 s client timeout; {RATE} payments/s for {SECONDS} s. A retry repeats the same \
             confirm under the same Idempotency-Key. Exponential + jitter waits 100 ms × 2^k, \
             ±50 %. The retrying client is lab code calling the simulator directly — the \
             product never retries an approval."
        ),
        seed: Table {
            header: HEADER.to_vec(),
            rows: vec![
                vec![
                    "none (default), 3 runs".into(),
                    "300–301 / 300–301".into(),
                    "1.00×".into(),
                    "300–301".into(),
                    "11".into(),
                    "3,034–3,036 ms".into(),
                ],
                vec![
                    "3 immediate, 3 runs".into(),
                    "900–903 / 300–301".into(),
                    "3.00×".into(),
                    "300–301".into(),
                    "33".into(),
                    "9,047–9,050 ms".into(),
                ],
                vec![
                    "3 exponential + jitter, 3 runs".into(),
                    "900–903 / 300–301".into(),
                    "3.00×".into(),
                    "300–301".into(),
                    "38–41".into(),
                    "10,279–10,370 ms".into(),
                ],
                vec![
                    "(a non-idempotent PG, by the seed's arithmetic)".into(),
                    "—".into(),
                    "—".into(),
                    "903".into(),
                    "—".into(),
                    "—".into(),
                ],
            ],
        },
        ours: Table {
            header: HEADER.to_vec(),
            rows,
        }
        .into(),
        notes: vec![format!(
            "Through our origin no confirm reached the PG twice. Those sent came back UNKNOWN \
             after the 3 s timeout ({} per run), for recovery to settle (a retrying client's \
             next attempt is answered from what the PG kept under its Idempotency-Key); \
             once they had timed out, the breaker opened and the rest were refused at once, \
             unsent ({} FAILED `CIRCUIT_OPEN` per run): the PG saw a fraction of one request \
             per payment, not two or three.",
            range(&unknown, 0),
            range(&refused, 0)
        )],
        charts: Vec::new(),
    })
}

/// One payment by the retrying client: up to three attempts, each with the secret key
/// and the payment's one Idempotency-Key, as Toss wants retries sent.
async fn attempts(
    http: reqwest::Client,
    sim: String,
    order_id: String,
    retry: Retry,
) -> (u16, String) {
    let tries = if matches!(retry, Retry::None) { 1 } else { 3 };
    let body = json!({"orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 5000});
    let key = format!("confirm:{order_id}");
    for attempt in 0..tries {
        let answer = http
            .post(format!("{sim}/v1/payments/confirm"))
            .basic_auth(SIM_SECRET_KEY, None::<&str>)
            .header("Idempotency-Key", &key)
            .json(&body)
            .timeout(TIMEOUT)
            .send()
            .await;
        if let Ok(response) = answer {
            return (response.status().as_u16(), "ANSWERED".into());
        }
        if matches!(retry, Retry::Backoff) && attempt + 1 < tries {
            let base = 100.0 * 2f64.powi(attempt);
            let jitter = 0.5 + jitter_fraction(&order_id, attempt);
            tokio::time::sleep(Duration::from_secs_f64(base * jitter / 1e3)).await;
        }
    }
    (0, "CLIENT_TIMEOUT".into())
}

/// A fraction in [0, 1) that differs per order and attempt (jitter without a random
/// number generator, reproducible run to run).
fn jitter_fraction(order_id: &str, attempt: i32) -> f64 {
    let hash = order_id
        .bytes()
        .fold(u64::from(attempt.unsigned_abs()) + 0x9e37, |h, b| {
            h.wrapping_mul(31).wrapping_add(u64::from(b))
        });
    (hash % 1_000) as f64 / 1_000.0
}

async fn record(f: &mut Figures, stack: &Stack, samples: &[Sample]) -> anyhow::Result<()> {
    let ledger: Value = stack.ledger().await?;
    let times: Vec<u64> = received(&ledger).into_iter().map(|(_, at)| at).collect();
    let all: Vec<_> = samples.iter().collect();
    f.gateway_requests.push(times.len() as f64);
    f.client.push(samples.len() as f64);
    f.approvals
        .push(ledger["approvals"].as_array().map_or(0, Vec::len) as f64);
    f.gateway_max_per_s
        .push(max_in_any_window(&times, 1_000) as f64);
    f.p95.push(percentile_ms(&all, 95.0));
    Ok(())
}

fn row(label: &str, f: &Figures) -> Vec<String> {
    let factors: Vec<f64> = f
        .gateway_requests
        .iter()
        .zip(&f.client)
        .map(|(pg, c)| pg / c.max(1.0))
        .collect();
    vec![
        label.to_owned(),
        format!(
            "{} / {}",
            range(&f.gateway_requests, 0),
            range(&f.client, 0)
        ),
        format!("{}×", range(&factors, 2)),
        range(&f.approvals, 0),
        range(&f.gateway_max_per_s, 0),
        format!("{} ms", range(&f.p95, 0)),
    ]
}
