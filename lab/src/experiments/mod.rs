//! The experiments, one module each, and what they share: a mixed run of payments and
//! unrelated reads against a [`Stack`], with faults switched at set times and the
//! origin observed throughout; and the [`Report`] each one writes.

pub mod breaker;
pub mod bulkhead;
pub mod concurrency;
pub mod isolation;
pub mod limiter;
pub mod outage_drop;
pub mod retries;
pub mod spike;

use std::fmt::Write as _;
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::chart::{self, Panel, Series};
use crate::load::{open_model, outcome_of, Sample};
use crate::observe::{self, Point};
use crate::stack::Stack;

/// The runtime of every experiment but the spike: the lab in place of the edge.
pub const ORIGIN_DIRECT: &str = "origin and gateway simulator as release builds on \
    loopback, SQLite, one origin; the lab drives the origin directly, signing requests as \
    the edge does";

/// The outcomes of payments the origin's guard refused: never sent to the PG.
pub const GUARD_REFUSALS: [&str; 4] = [
    "FAILED:CIRCUIT_OPEN",
    "FAILED:CONCURRENCY_LIMITED",
    "FAILED:BULKHEAD_FULL",
    "FAILED:RATE_LIMITED",
];

/// The approval breaker's transitions as `/admin/guard` lists them (the latest 20), each at
/// seconds since `start` on the lab's clock: `(at, "FROM→TO")`.
pub async fn breaker_transitions(
    stack: &Stack,
    start: Instant,
) -> anyhow::Result<Vec<(f64, String)>> {
    let guard = stack.operator_get("/admin/guard").await?;
    let offset_ms =
        start.elapsed().as_millis() as f64 - guard["breaker"]["nowMs"].as_f64().unwrap_or_default();
    let text = |value: &Value| value.as_str().unwrap_or("?").to_owned();
    Ok(guard["breaker"]["transitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let at = (t["atMs"].as_f64().unwrap_or_default() + offset_ms) / 1e3;
            (at, format!("{}→{}", text(&t["from"]), text(&t["to"])))
        })
        .collect())
}

/// An acceptance check's verdict as the reports write it.
pub fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "**not met**"
    }
}

/// How long the lab waits for any one answer; past it the sample is `CLIENT_TIMEOUT`.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(70);

/// What an experiment found, as Markdown.
pub struct Report {
    /// Where the figures come from.
    pub runtime: &'static str,
    pub title: &'static str,
    /// The conditions, as the seed states them and as we ran them.
    pub setup: String,
    pub seed: Table,
    pub ours: Ours,
    /// Acceptance checks and observations, one paragraph each.
    pub notes: Vec<String>,
    /// Chart files written beside the report.
    pub charts: Vec<String>,
}

pub struct Table {
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

/// Our figures: one table, or one for each case the experiment compares, each under
/// its caption.
pub enum Ours {
    Table(Table),
    Cases(Vec<(String, Table)>),
}

impl From<Table> for Ours {
    fn from(table: Table) -> Self {
        Ours::Table(table)
    }
}

impl Table {
    fn markdown(&self) -> String {
        let mut text = format!("| {} |\n", self.header.join(" | "));
        let _ = writeln!(text, "|{}", "---|".repeat(self.header.len()));
        for row in &self.rows {
            let _ = writeln!(text, "| {} |", row.join(" | "));
        }
        text
    }
}

impl Report {
    /// The report; charts are linked as `{charts}{file}`.
    pub fn markdown(&self, charts: &str) -> String {
        let runtime = self.runtime;
        let mut text = format!("## {}\n\n{}\n\n", self.title, self.setup);
        let _ = write!(
            text,
            "**Seed** (its harness, Spring on the JVM):\n\n{}\n",
            self.seed.markdown()
        );
        match &self.ours {
            Ours::Table(table) => {
                let _ = write!(text, "**Ours** ({runtime}):\n\n{}\n", table.markdown());
            }
            Ours::Cases(cases) => {
                let _ = write!(text, "**Ours** ({runtime}):\n\n");
                for (caption, table) in cases {
                    let _ = write!(text, "*{caption}*:\n\n{}\n", table.markdown());
                }
            }
        }
        for note in &self.notes {
            let _ = write!(text, "{note}\n\n");
        }
        for chart in &self.charts {
            let _ = write!(text, "![{chart}]({charts}{chart})\n\n");
        }
        text
    }
}

/// Payments and unrelated reads sent together, and what the origin showed meanwhile.
pub struct Mixed {
    pub payments: Vec<Sample>,
    pub reads: Vec<Sample>,
    pub points: Vec<Point>,
    /// When the run started, on the lab's clock.
    pub start: Instant,
}

/// What a mixed run sends, and when the faults change.
pub struct Plan<'a> {
    /// Order ids are `{prefix}-{n}`.
    pub prefix: &'a str,
    pub payments_per_s: f64,
    pub reads_per_s: f64,
    pub duration: Duration,
    /// (from the start, the simulator's faults from then on).
    pub faults: Vec<(Duration, Value)>,
}

pub async fn mixed(stack: &Stack, plan: &Plan<'_>) -> anyhow::Result<Mixed> {
    let start = Instant::now();
    let (stop, stopped) = watch::channel(false);
    let observing = observe::sample(stack, start, stopped);
    let faults = async {
        for (at, faults) in &plan.faults {
            tokio::time::sleep_until((start + *at).into()).await;
            stack.set_faults(faults.clone()).await?;
        }
        anyhow::Ok(())
    };
    let payments = open_model(start, plan.payments_per_s, plan.duration, |n| {
        confirm(stack, &format!("{}-{n}", plan.prefix))
    });
    let reads = open_model(start, plan.reads_per_s, plan.duration, |_| read(stack));
    let load = async {
        let (payments, reads, faults) = tokio::join!(payments, reads, faults);
        let _ = stop.send(true);
        (payments, reads, faults)
    };
    let ((payments, reads, faults), points) = tokio::join!(load, observing);
    faults?;
    Ok(Mixed {
        payments,
        reads,
        points,
        start,
    })
}

/// `POST /payments/confirm` for `order_id`, 5,000 won, its own Idempotency-Key.
pub fn confirm(
    stack: &Stack,
    order_id: &str,
) -> impl Future<Output = (u16, String)> + Send + 'static {
    let body =
        json!({ "orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 5000 })
            .to_string();
    let request = stack
        .signed(
            "POST",
            "/payments/confirm",
            "lab-payer",
            order_id,
            body.as_bytes(),
        )
        .timeout(CLIENT_TIMEOUT);
    async move { outcome_of(request.send().await).await }
}

/// `GET /payments`: the unrelated read, database only.
pub fn read(stack: &Stack) -> impl Future<Output = (u16, String)> + Send + 'static {
    let request = stack
        .signed("GET", "/payments", "lab-reader", "", b"")
        .timeout(CLIENT_TIMEOUT);
    async move { outcome_of(request.send().await).await }
}

/// How many samples have this outcome.
pub fn count(samples: &[Sample], outcome: &str) -> usize {
    samples
        .iter()
        .filter(|sample| sample.outcome == outcome)
        .count()
}

/// Samples that did not get a 2xx answer.
pub fn failures(samples: &[Sample]) -> Vec<&Sample> {
    samples
        .iter()
        .filter(|sample| !(200..300).contains(&sample.status))
        .collect()
}

/// p50 and p95 latency (ms) per `slice` of send time, for a chart.
pub fn latency_series(name: &str, samples: &[Sample], slice: Duration, p: f64) -> Series {
    let slices = samples
        .iter()
        .map(|sample| (sample.sent_at.as_secs_f64() / slice.as_secs_f64()) as usize)
        .max()
        .map_or(0, |last| last + 1);
    let points = (0..slices)
        .map(|index| {
            let inside: Vec<&Sample> = samples
                .iter()
                .filter(|s| (s.sent_at.as_secs_f64() / slice.as_secs_f64()) as usize == index)
                .collect();
            let at = (index as f64 + 0.5) * slice.as_secs_f64();
            let value = (!inside.is_empty()).then(|| crate::stats::percentile_ms(&inside, p));
            (at, value)
        })
        .collect();
    Series {
        name: format!("{name} p{p:.0} (ms)"),
        points,
    }
}

/// How many samples per `slice` of send time are `counted`, for a chart.
pub fn count_series(
    name: &str,
    samples: &[Sample],
    slice: Duration,
    counted: impl Fn(&Sample) -> bool,
) -> Series {
    let index_of = |sample: &Sample| (sample.sent_at.as_secs_f64() / slice.as_secs_f64()) as usize;
    let slices = samples
        .iter()
        .map(index_of)
        .max()
        .map_or(0, |last| last + 1);
    let mut counts = vec![0.0; slices];
    for sample in samples.iter().filter(|sample| counted(sample)) {
        counts[index_of(sample)] += 1.0;
    }
    Series {
        name: name.to_owned(),
        points: counts
            .into_iter()
            .enumerate()
            .map(|(index, count)| ((index as f64 + 0.5) * slice.as_secs_f64(), Some(count)))
            .collect(),
    }
}

/// The chart every mixed run gets: PG calls in flight and the breaker (when it is on);
/// the payments' and the reads' p95 per second; what went wrong, per second.
pub fn mixed_chart(
    out: &Path,
    file: &str,
    title: &str,
    mixed: &Mixed,
    seconds: f64,
) -> anyhow::Result<String> {
    let at = |point: &Point| point.at.as_secs_f64();
    let second = Duration::from_secs(1);
    let mut panels = vec![Panel {
        title: "PG calls in flight (origin_gateway_in_flight)".into(),
        y_label: "calls".into(),
        series: vec![Series {
            name: "in flight".into(),
            points: mixed.points.iter().map(|p| (at(p), p.in_flight)).collect(),
        }],
    }];
    if mixed.points.iter().any(|point| point.breaker.is_some()) {
        panels.push(Panel {
            title: "Breaker: 0 CLOSED, 1 HALF_OPEN, 2 OPEN".into(),
            y_label: "state".into(),
            series: vec![Series {
                name: "breaker".into(),
                points: mixed.points.iter().map(|p| (at(p), p.breaker)).collect(),
            }],
        });
    }
    panels.extend([
        Panel {
            title: "Latency by second sent".into(),
            y_label: "ms".into(),
            series: vec![
                latency_series("payment", &mixed.payments, second, 95.0),
                latency_series("unrelated read", &mixed.reads, second, 95.0),
            ],
        },
        Panel {
            title: "What went wrong, by second sent".into(),
            y_label: "requests".into(),
            series: vec![
                count_series("payments UNKNOWN", &mixed.payments, second, |s| {
                    s.outcome == "UNKNOWN"
                }),
                count_series(
                    "payments refused by the guard",
                    &mixed.payments,
                    second,
                    |s| GUARD_REFUSALS.contains(&s.outcome.as_str()),
                ),
                count_series("unrelated reads failed", &mixed.reads, second, |s| {
                    !(200..300).contains(&s.status)
                }),
            ],
        },
    ]);
    chart::write(&out.join(file), title, seconds, &panels)?;
    Ok(file.to_owned())
}
