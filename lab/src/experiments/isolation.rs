//! Experiment 1 — a stalled PG, and whether the unrelated API survives it: the PG holds
//! every request 30 s; 10 payments/s and 20 unrelated reads/s for 75 s; the origin's
//! timeout above the stall, the breaker off, the bulkhead off and then on (50).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::{count, failures, mixed, mixed_chart, verdict, Plan, Report, Table};
use crate::stack::Stack;
use crate::stats::{percentile_ms, range};

const SECONDS: u64 = 75;

/// One configuration's figures over its runs (experiments 1 and 5).
#[derive(Default)]
pub struct Figures {
    read_p95: Vec<f64>,
    read_failures: Vec<f64>,
    first_failure: Vec<Option<f64>>,
    in_flight_peak: Vec<f64>,
    refused: Vec<f64>,
    /// Each run's payment answers, by outcome.
    outcomes: Vec<BTreeMap<String, usize>>,
}

/// Runs the stall `runs` times per bulkhead setting (`label`, slots; 0 is off), charting
/// the last run of each as `{chart}-{label}.svg`.
pub async fn run(
    runs: u32,
    out: &Path,
    chart: &str,
    bulkheads: &[(&'static str, u32)],
) -> anyhow::Result<Vec<(&'static str, Figures)>> {
    let mut all = Vec::new();
    for &(label, bulkhead) in bulkheads {
        let mut figures = Figures::default();
        for run in 1..=runs {
            let stack = Stack::start(&[
                ("GATEWAY_TIMEOUT_MS", "60000".into()),
                ("BREAKER_ENABLED", "false".into()),
                ("BULKHEAD_MAX_CONCURRENT", bulkhead.to_string()),
            ])
            .await?;
            let plan = Plan {
                prefix: &format!("stall-{label}-{run}"),
                payments_per_s: 10.0,
                reads_per_s: 20.0,
                duration: Duration::from_secs(SECONDS),
                faults: vec![(
                    Duration::ZERO,
                    json!({"mode": "HANG_BEFORE_PROCESSING", "delayMs": 30_000}),
                )],
            };
            let result = mixed(&stack, &plan).await?;
            let reads: Vec<_> = result.reads.iter().collect();
            let failed = failures(&result.reads);
            figures.read_p95.push(percentile_ms(&reads, 95.0));
            figures.read_failures.push(failed.len() as f64);
            figures
                .first_failure
                .push(failed.first().map(|sample| sample.sent_at.as_secs_f64()));
            figures.in_flight_peak.push(
                result
                    .points
                    .iter()
                    .filter_map(|point| point.in_flight)
                    .fold(0.0, f64::max),
            );
            figures
                .refused
                .push(count(&result.payments, "FAILED:BULKHEAD_FULL") as f64);
            let mut outcomes = BTreeMap::new();
            for payment in &result.payments {
                *outcomes
                    .entry(format!("{} {}", payment.status, payment.outcome))
                    .or_insert(0) += 1;
            }
            figures.outcomes.push(outcomes);
            if run == runs {
                mixed_chart(
                    out,
                    &format!("{chart}-{label}.svg"),
                    &format!("Stalled PG (30 s), bulkhead {label}: run {run}"),
                    &result,
                    SECONDS as f64 + 35.0,
                )?;
            }
        }
        all.push((label, figures));
    }
    Ok(all)
}

/// `408 REQUEST_TIMEOUT: 150; …` with min–max over the runs, most frequent first.
fn outcome_ranges(runs: &[BTreeMap<String, usize>]) -> String {
    let mut names: Vec<&String> = runs.iter().flat_map(BTreeMap::keys).collect();
    names.sort();
    names.dedup();
    let total = |name: &String| runs.iter().filter_map(|run| run.get(name)).sum::<usize>();
    names.sort_by_key(|name| std::cmp::Reverse(total(name)));
    names
        .into_iter()
        .map(|name| {
            let counts: Vec<f64> = runs
                .iter()
                .map(|run| run.get(name).copied().unwrap_or(0) as f64)
                .collect();
            format!("{name}: {}", range(&counts, 0))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Figures {
    pub fn row(&self, label: &str) -> Vec<String> {
        let f = self;
        let collapse = {
            let times: Vec<f64> = f.first_failure.iter().flatten().copied().collect();
            if times.is_empty() {
                "none".to_owned()
            } else {
                format!(
                    "{} s ({} of {} runs)",
                    range(&times, 1),
                    times.len(),
                    f.first_failure.len()
                )
            }
        };
        vec![
            label.to_owned(),
            format!("{} ms", range(&f.read_p95, 1)),
            range(&f.read_failures, 0),
            collapse,
            range(&f.in_flight_peak, 0),
            range(&f.refused, 0),
            outcome_ranges(&f.outcomes),
        ]
    }

    /// The unrelated reads' acceptance check (after "unrelated-read"): p95 ≤ 10 ms and
    /// no failure in any run.
    pub fn read_check(&self) -> String {
        let (p95, failed) = (self.read_p95_max(), self.read_failures_max());
        format!(
            "p95 ≤ 10 ms and 0 failures — worst run {p95:.1} ms and {failed:.0} failures: {}",
            verdict(p95 <= 10.0 && failed == 0.0)
        )
    }

    pub fn read_p95_max(&self) -> f64 {
        self.read_p95.iter().copied().fold(0.0, f64::max)
    }

    pub fn read_failures_max(&self) -> f64 {
        self.read_failures.iter().copied().fold(0.0, f64::max)
    }

    pub fn in_flight_peak_max(&self) -> f64 {
        self.in_flight_peak.iter().copied().fold(0.0, f64::max)
    }
}

pub const HEADER: [&str; 7] = [
    "bulkhead",
    "unrelated read p95",
    "read failures",
    "unrelated API collapse",
    "PG calls in flight, peak",
    "payments refused (BULKHEAD_FULL)",
    "payment answers (HTTP status, outcome: count)",
];

pub fn setup() -> String {
    format!(
        "The PG holds every confirm 30 s (`HANG_BEFORE_PROCESSING`, then drops the \
         connection); 10 payments/s and 20 unrelated reads/s (`GET /payments`, database \
         only) for {SECONDS} s, open model. Origin: `GATEWAY_TIMEOUT_MS=60000` (above the \
         stall, as the seed's 120 s read timeout), breaker off, \
         `ORIGIN_MAX_CONCURRENT_REQUESTS` 256 (the default: our counterpart of Tomcat's \
         200 threads; past it a request is answered 503 `BUSY` at once). Read failures \
         are any answer but 2xx; the read p95 is over every read, failed ones included. \
         The API's 30 s request deadline answers a payment held that long 408 \
         `REQUEST_TIMEOUT`; the payment itself goes on in the background and ends UNKNOWN, \
         for recovery."
    )
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let figures = run(runs, out, "isolation", &[("off", 0), ("50", 50)]).await?;
    let rows = figures.iter().map(|(label, f)| f.row(label)).collect();
    let mut notes = Vec::new();
    if let Some((_, on)) = figures.iter().find(|(label, _)| *label == "50") {
        notes.push(format!(
            "Acceptance (bulkhead on): unrelated-read {}.",
            on.read_check()
        ));
    }
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "1. Stalled PG: does the unrelated API survive?",
        setup: setup(),
        seed: Table {
            header: vec![
                "threads",
                "read p95",
                "read failures",
                "unrelated API collapse",
                "Tomcat busy max",
            ],
            rows: vec![
                vec![
                    "platform (200), 3 runs".into(),
                    "30,001–30,003 ms".into(),
                    "184–195".into(),
                    "23.7–24.0 s".into(),
                    "197–199 / 200".into(),
                ],
                vec![
                    "virtual (default), 3 runs".into(),
                    "7.0–8.1 ms".into(),
                    "0".into(),
                    "none".into(),
                    "— (300 calls waiting on the PG)".into(),
                ],
            ],
        },
        ours: Table {
            header: HEADER.to_vec(),
            rows,
        }
        .into(),
        notes,
        charts: vec!["isolation-off.svg".into(), "isolation-50.svg".into()],
    })
}
