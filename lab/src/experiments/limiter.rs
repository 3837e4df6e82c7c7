//! Experiment 4 — the limiter algorithms differ in the instant: 80 payments/s for 20 s
//! against a PG limit of 50/s, with the origin's token bucket and sliding window; what
//! the PG admitted, and the most in any 1 s and 100 ms, from the simulator's ledger.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{confirm, verdict, Report, Table};
use crate::chart::{self, Panel, Series};
use crate::edge::Edge;
use crate::load::open_model;
use crate::load::outcome_of;
use crate::stack::{received, Stack};
use crate::stats::{max_in_any_window, percentile_ms, range};
use harness::signed::now_ms;

const RATE: f64 = 80.0;
const SECONDS: u64 = 20;
const LIMIT: usize = 50;

const HEADER: [&str; 6] = [
    "algorithm",
    "admitted (20 s)",
    "max in any 1 s",
    "max in any 100 ms",
    "payment p95",
    "refused payments at the PG",
];

#[derive(Default)]
struct Figures {
    admitted: Vec<f64>,
    max_1s: Vec<f64>,
    max_100ms: Vec<f64>,
    p95: Vec<f64>,
    refused_at_pg: Vec<f64>,
}

impl Figures {
    /// One run's admissions, by the PG's receive times.
    fn add_admitted(&mut self, times: &[u64]) {
        self.admitted.push(times.len() as f64);
        self.max_1s.push(max_in_any_window(times, 1_000) as f64);
        self.max_100ms.push(max_in_any_window(times, 100) as f64);
    }

    fn row(&self, label: &str) -> Vec<String> {
        vec![
            label.to_owned(),
            range(&self.admitted, 0),
            range(&self.max_1s, 0),
            range(&self.max_100ms, 0),
            format!("{} ms", range(&self.p95, 1)),
            range(&self.refused_at_pg, 0),
        ]
    }
}

/// `edge_build`: the edge build its run through the edge uses (`build/` when `None`).
pub async fn report(runs: u32, out: &Path, edge_build: Option<&Path>) -> anyhow::Result<Report> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut fixed = Figures::default();
    let mut panels = Vec::new();
    for (label, limiter) in [
        ("token bucket", "token-bucket"),
        ("sliding window", "sliding-window"),
    ] {
        let mut f = Figures::default();
        for run in 1..=runs {
            let stack = Stack::start(&[
                ("LIMITER", limiter.into()),
                ("LIMITER_RATE", format!("{LIMIT}/1s")),
            ])
            .await?;
            let prefix = format!("limit-{limiter}-{run}");
            let started_ms = u64::try_from(now_ms())?;
            let start = Instant::now();
            let payments = open_model(start, RATE, Duration::from_secs(SECONDS), |n| {
                confirm(&stack, &format!("{prefix}-{n}"))
            })
            .await;
            let ledger = stack.ledger().await?;
            let received = received(&ledger);
            let times: Vec<u64> = received.iter().map(|(_, at)| *at).collect();
            let at_pg: HashSet<&str> = received.iter().map(|(order, _)| order.as_str()).collect();
            let all: Vec<_> = payments.iter().collect();
            f.add_admitted(&times);
            f.p95.push(percentile_ms(&all, 95.0));
            f.refused_at_pg.push(
                payments
                    .iter()
                    .filter(|s| s.outcome == "FAILED:RATE_LIMITED")
                    .filter(|s| at_pg.contains(format!("{prefix}-{}", s.seq).as_str()))
                    .count() as f64,
            );
            if limiter == "sliding-window" {
                // The reference: a fixed one-second window over the same arrivals,
                // windows aligned to the wall clock's seconds.
                let sent: Vec<u64> = payments
                    .iter()
                    .map(|s| started_ms + s.sent_at.as_millis() as u64)
                    .collect();
                fixed.add_admitted(&fixed_window(&sent, LIMIT, 1_000));
            }
            if run == runs {
                let base = times.iter().copied().min().unwrap_or(started_ms);
                panels.push(Series {
                    name: format!("{label}: admitted per 100 ms"),
                    points: per_slice(&times, base, 100),
                });
            }
        }
        if limiter == "sliding-window" {
            let worst = f.max_1s.iter().copied().fold(0.0, f64::max);
            notes.push(format!(
                "Acceptance: sliding-window maximum in any 1 s ≤ {LIMIT}, counted on the PG's \
                 clock as it received the confirms — worst run {worst:.0}: {}.",
                verdict(worst <= LIMIT as f64)
            ));
            notes.push(
                "The origin's window counts a call from when it is sent until a second after \
                 its answer, so a confirm that travels slower than the next cannot bring two \
                 admissions closer on the PG's clock than a second (an earlier version counted \
                 calls by when they were sent and saw 51 here)."
                    .into(),
            );
        }

        rows.push(f.row(label));
    }
    let mut through_edge = Figures::default();
    for run in 1..=runs {
        let (times, payments) = through_the_edge(run, edge_build).await?;
        let all: Vec<_> = payments.iter().collect();
        through_edge.add_admitted(&times);
        through_edge.p95.push(percentile_ms(&all, 95.0));
        let started = times.iter().copied().min().unwrap_or_default();
        if run == runs {
            panels.push(Series {
                name: "edge global limit: admitted per 100 ms".into(),
                points: per_slice(&times, started, 100),
            });
        }
    }
    let worst_edge = through_edge.max_1s.iter().copied().fold(0.0, f64::max);
    notes.push(format!(
        "The edge's global window decides on the limiter object's clock, before the confirm \
         travels on to the origin and the PG; counted as the PG received them, its worst \
         second held {worst_edge:.0}{}",
        if worst_edge > LIMIT as f64 {
            ": a few milliseconds of transit, not always the same, brought admissions closer \
             together. The edge's limits protect capacity; the PG's own limit is the origin \
             sliding window's to keep, on the PG's clock (docs/design/rate-limits.md, \"Whose clock\")."
        } else {
            "."
        }
    ));
    rows.push(through_edge.row(
        "edge global limiter (sliding window in a Durable Object; edge under `workerd serve`)",
    ));
    rows.insert(
        0,
        vec![
            "fixed window (reference: computed by the lab over the sliding-window runs' arrivals)"
                .into(),
            range(&fixed.admitted, 0),
            range(&fixed.max_1s, 0),
            range(&fixed.max_100ms, 0),
            "—".into(),
            "—".into(),
        ],
    );
    notes.push(
        "The origin has no fixed-window limiter (it is what the seed warns against), so its \
         row is the fixed window applied by the lab to the very arrival times the \
         sliding-window runs sent, windows on the wall clock's seconds. The edge row: the \
         same 80/s as confirms from 80 logged-in users (1/s each) through the edge, whose \
         only limit is `RATE_LIMITED_ROUTES=POST /payments/confirm global=50/1s`, the \
         origin's limiter off; refused confirms are 429 at the edge and never reach the \
         origin. \"Refused payments at the PG\" does not apply there."
            .into(),
    );
    chart::write(
        &out.join("limiter.svg"),
        "80/s against 50/s: admitted per 100 ms at the PG (last run of each)",
        SECONDS as f64 + 1.0,
        &[Panel {
            title: "PG confirms received per 100 ms".into(),
            y_label: "confirms".into(),
            series: panels,
        }],
    )?;
    Ok(Report {
        runtime: "origin and gateway simulator as release builds on loopback, SQLite, one \
            origin; the lab drives the origin directly, signing requests as the edge does — \
            except the edge row, sent through the edge under `workerd serve`",
        title: "4. Limiter algorithms differ in the instant",
        setup: format!(
            "{RATE} payments/s for {SECONDS} s against `LIMITER_RATE={LIMIT}/1s` at the origin; \
             PG healthy. Admitted = confirms the simulator received, by its `receivedAt`."
        ),
        seed: Table {
            header: HEADER.to_vec(),
            rows: vec![
                vec![
                    "fixed window, 3 runs".into(),
                    "1,027–1,031".into(),
                    "77–82 (100 in a trial)".into(),
                    "14–18".into(),
                    "18.1–20.4 ms".into(),
                    "0".into(),
                ],
                vec![
                    "token bucket, 3 runs".into(),
                    "1,047".into(),
                    "86".into(),
                    "13–14".into(),
                    "17.6–18.6 ms".into(),
                    "0".into(),
                ],
                vec![
                    "sliding window, 3 runs".into(),
                    "998–1,000".into(),
                    "52".into(),
                    "14–18".into(),
                    "17.8–19.8 ms".into(),
                    "0".into(),
                ],
            ],
        },
        ours: Table {
            header: HEADER.to_vec(),
            rows,
        }
        .into(),
        notes,
        charts: vec!["limiter.svg".into()],
    })
}

/// Users the edge run spreads its confirms over, so no per-user limit applies.
const EDGE_USERS: usize = 80;
const PASSWORD: &str = "limiter-password";

/// 80 confirms/s for 20 s through the edge's global limit of 50/1s: the PG's receive
/// times, and the answers.
async fn through_the_edge(
    run: u32,
    edge_build: Option<&Path>,
) -> anyhow::Result<(Vec<u64>, Vec<crate::load::Sample>)> {
    let stack = Stack::start(&[]).await?;
    for user in 0..EDGE_USERS {
        stack.add_user(&format!("limit{user}"), PASSWORD)?;
    }
    let edge = Edge::start(
        &stack.origin,
        stack.edge_secret(),
        &[(
            "RATE_LIMITED_ROUTES",
            format!("POST /payments/confirm global={LIMIT}/1s user=100/1s"),
        )],
        edge_build,
    )
    .await?;
    let mut tokens = Vec::with_capacity(EDGE_USERS);
    for user in 0..EDGE_USERS {
        tokens.push(
            edge.login(&stack.http, &format!("limit{user}"), PASSWORD)
                .await?,
        );
    }
    let payments = open_model(Instant::now(), RATE, Duration::from_secs(SECONDS), |n| {
        let order_id = format!("edge-limit-{run}-{n}");
        let body =
            json!({"orderId": order_id, "paymentKey": format!("pk-{order_id}"), "amount": 5000});
        let request = stack
            .http
            .post(format!("{}/payments/confirm", edge.url))
            .bearer_auth(&tokens[n as usize % EDGE_USERS])
            .header("idempotency-key", &order_id)
            .json(&body)
            .timeout(super::CLIENT_TIMEOUT);
        async move { outcome_of(request.send().await).await }
    })
    .await;
    let ledger = stack.ledger().await?;
    let times = received(&ledger).into_iter().map(|(_, at)| at).collect();
    Ok((times, payments))
}

/// The times a fixed window of `limit` per `window_ms` (aligned to multiples of it)
/// lets through.
fn fixed_window(times: &[u64], limit: usize, window_ms: u64) -> Vec<u64> {
    let mut admitted = Vec::new();
    let mut current = (u64::MAX, 0);
    for &at in times {
        let window = at / window_ms;
        if current.0 != window {
            current = (window, 0);
        }
        if current.1 < limit {
            current.1 += 1;
            admitted.push(at);
        }
    }
    admitted
}

/// Counts per `slice_ms` from `base`, as chart points in seconds.
fn per_slice(times: &[u64], base: u64, slice_ms: u64) -> Vec<(f64, Option<f64>)> {
    let slices = times
        .iter()
        .map(|t| (t - base) / slice_ms)
        .max()
        .map_or(0, |last| last + 1);
    (0..slices)
        .map(|index| {
            let inside = times
                .iter()
                .filter(|t| (*t - base) / slice_ms == index)
                .count();
            ((index * slice_ms) as f64 / 1e3, Some(inside as f64))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_window_lets_a_burst_through_at_its_boundary() {
        let times: Vec<u64> = (900..1_000).chain(1_000..1_100).collect();
        let admitted = fixed_window(&times, 50, 1_000);
        assert_eq!(admitted.len(), 100);
        assert_eq!(
            max_in_any_window(&admitted, 1_000),
            100,
            "twice the limit in one second"
        );
    }
}
