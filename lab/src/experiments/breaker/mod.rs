//! Experiment 3 — what becomes of payments while the breaker is open: the PG answers
//! after 6 s (past the 3 s timeout) for 40 s, then is healthy; 10 payments/s and 5
//! reads/s for 90 s; breaker on with the concurrency limit on (the defaults) and off,
//! on with the limit while the whole PG stalls (look-ups too), and both off. Its variant
//! [`warm`] lets the limit learn a healthy PG first.

mod limit;
mod notes;
mod table;
pub mod warm;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{breaker_transitions, count, mixed, mixed_chart, Plan, Report, Table, GUARD_REFUSALS};
use crate::load::Sample;
use crate::stack::{received, Stack};
use table::{header, row};

const SECONDS: u64 = 90;
const OUTAGE: Duration = Duration::from_secs(40);
/// The acceptance bound on UNKNOWN payments in one run, with the limit on (issue 36).
const UNKNOWN_BOUND: f64 = 5.0;
/// Payments sent into a stall after the breaker first opened: the first half-open
/// cycle's; after it went unanswered the breaker probes with confirms of no payment.
const PROBES: f64 = 1.0;
/// How soon after the breaker closes the limit must be back at its healthy level.
const BACK_TO_NORMAL_S: f64 = 2.0;
/// The healthy level without a warm-up: the limit's median over the run's last 30 s.
const HEALTHY_FROM_S: f64 = 60.0;
/// With a warm-up, the learned level: the limit's median over the last 5 s before the stall.
const LEARNED_OVER_S: f64 = 5.0;

#[derive(Default)]
struct Figures {
    approved: Vec<f64>,
    circuit_open: Vec<f64>,
    limited: Vec<f64>,
    unknown: Vec<f64>,
    /// UNKNOWN payments sent before the breaker first opened, and after.
    unknown_before_open: Vec<f64>,
    unknown_after_open: Vec<f64>,
    refused_at_pg: Vec<f64>,
    half_open_cycles: Vec<f64>,
    back_to_closed: Vec<Option<f64>>,
    closed_after_first_probe: Vec<Option<f64>>,
    /// Seconds from CLOSED after recovery until the limit was back at its healthy level.
    limit_back: Vec<Option<f64>>,
    healthy_limit: Vec<f64>,
    /// The limit's last read before the stall (with a warm-up).
    limit_at_stall: Vec<f64>,
    timelines: Vec<String>,
}

/// One configuration: its row's label, its chart's name, the origin's variables, whether
/// the breaker and the concurrency limit are on, whether look-ups stall too, and how long
/// a healthy PG (0–300 ms) is driven before the stall.
struct Variant {
    label: &'static str,
    chart: &'static str,
    env: Vec<(&'static str, String)>,
    enabled: bool,
    limit: bool,
    whole_pg: bool,
    warm_up: Duration,
}

fn variants() -> [Variant; 4] {
    let limit_off = ("GATEWAY_CONCURRENCY", "off".to_owned());
    [
        Variant {
            label: "on, limit on",
            chart: "breaker-on",
            env: Vec::new(),
            enabled: true,
            limit: true,
            whole_pg: false,
            warm_up: Duration::ZERO,
        },
        Variant {
            label: "on, limit off",
            chart: "breaker-on-limit-off",
            env: vec![limit_off.clone()],
            enabled: true,
            limit: false,
            whole_pg: false,
            warm_up: Duration::ZERO,
        },
        Variant {
            label: "on, limit on, whole PG stalls",
            chart: "breaker-on-whole-pg",
            env: Vec::new(),
            enabled: true,
            limit: true,
            whole_pg: true,
            warm_up: Duration::ZERO,
        },
        Variant {
            label: "off, limit off",
            chart: "breaker-off",
            env: vec![("BREAKER_ENABLED", "false".into()), limit_off],
            enabled: false,
            limit: false,
            whole_pg: false,
            warm_up: Duration::ZERO,
        },
    ]
}

impl Variant {
    /// The PG stalled: confirms answered after 6 s, and look-ups too for the whole PG.
    fn stall(&self) -> serde_json::Value {
        if self.whole_pg {
            json!({"mode": "DELAY", "delayMs": 6_000, "statusDelayMs": 6_000})
        } else {
            json!({"mode": "DELAY", "delayMs": 6_000})
        }
    }

    /// When the faults change: the stall from the start, or after a warm-up on a healthy
    /// PG answering in 0–300 ms; healthy again once the outage is over.
    fn faults(&self) -> Vec<(Duration, serde_json::Value)> {
        if self.warm_up.is_zero() {
            return vec![
                (Duration::ZERO, self.stall()),
                (OUTAGE, json!({"mode": "NORMAL"})),
            ];
        }
        let healthy = json!({"mode": "DELAY", "delayMs": 0, "jitterMs": 300});
        vec![
            (Duration::ZERO, healthy.clone()),
            (self.warm_up, self.stall()),
            (self.warm_up + OUTAGE, healthy),
        ]
    }

    /// The limit's healthy level and when it was last read before the stall: learned in
    /// the warm-up, or without one its median over the run's last 30 s.
    fn healthy_limit(&self, limits: &limit::Limits) -> (Option<f64>, Option<f64>) {
        let stall = self.warm_up.as_secs_f64();
        if self.warm_up.is_zero() {
            let end = SECONDS as f64;
            return (limit::median(limits, HEALTHY_FROM_S, end), None);
        }
        let last = limits.iter().rev().find(|(at, _)| *at < stall);
        (
            limit::median(limits, stall - LEARNED_OVER_S, stall),
            last.map(|(_, limit)| *limit),
        )
    }
}

/// Every run of each variant: its table's rows, its notes and its charts.
async fn run_variants(
    variants: Vec<Variant>,
    runs: u32,
    out: &Path,
) -> anyhow::Result<(Vec<Vec<String>>, Vec<String>, Vec<String>)> {
    let (mut rows, mut notes, mut charts) = (Vec::new(), Vec::new(), Vec::new());
    for variant in variants {
        let mut f = Figures::default();
        for run in 1..=runs {
            let chart = (run == runs).then(|| format!("{}.svg", variant.chart));
            measure(&variant, run, out, chart.as_deref(), &mut f).await?;
            charts.extend(chart);
        }
        rows.push(row(&variant, &f));
        if variant.enabled {
            notes.extend(notes::breaker(&variant, &f));
        }
    }
    Ok((rows, notes, charts))
}

/// One run of `variant`, its figures added to `f`, its chart drawn when named.
async fn measure(
    variant: &Variant,
    run: u32,
    out: &Path,
    chart: Option<&str>,
    f: &mut Figures,
) -> anyhow::Result<()> {
    let stack = Stack::start(&variant.env).await?;
    let prefix = format!("{}-{run}", variant.chart);
    let seconds = variant.warm_up.as_secs() + SECONDS;
    let plan = Plan {
        prefix: &prefix,
        payments_per_s: 10.0,
        reads_per_s: 5.0,
        duration: Duration::from_secs(seconds),
        faults: variant.faults(),
    };
    let start = Instant::now();
    let (result, limits) = tokio::join!(
        mixed(&stack, &plan),
        limit::sample(&stack, start, plan.duration)
    );
    let result = result?;
    let transitions = breaker_transitions(&stack, result.start).await?;
    let recovered = (variant.warm_up + OUTAGE).as_secs_f64();
    let first_probe_after = transitions
        .iter()
        .find(|(at, change)| *at >= recovered && change.ends_with("HALF_OPEN"))
        .map(|(at, _)| *at);
    let closed_after = |from: f64| {
        transitions
            .iter()
            .find(|(at, change)| *at >= from && change.ends_with("CLOSED"))
            .map(|(at, _)| *at)
    };
    f.back_to_closed
        .push(closed_after(recovered).map(|at| at - recovered));
    let (healthy, at_stall) = variant.healthy_limit(&limits);
    f.limit_at_stall.extend(at_stall);
    if let Some(healthy) = healthy {
        let from = if variant.enabled {
            closed_after(recovered)
        } else {
            Some(recovered)
        };
        f.healthy_limit.push(healthy);
        f.limit_back
            .push(from.and_then(|from| limit::back_at(&limits, from, healthy)));
    }
    f.closed_after_first_probe
        .push(first_probe_after.and_then(|probe| closed_after(probe).map(|at| at - probe)));
    f.half_open_cycles.push(
        transitions
            .iter()
            .filter(|(at, change)| *at < recovered && change.ends_with("HALF_OPEN"))
            .count() as f64,
    );
    let ledger = stack.ledger().await?;
    let received = received(&ledger);
    let at_pg: HashSet<&str> = received.iter().map(|(order, _)| order.as_str()).collect();
    let refused_at_pg = result
        .payments
        .iter()
        .filter(|s| GUARD_REFUSALS.contains(&s.outcome.as_str()))
        .filter(|s| at_pg.contains(format!("{prefix}-{}", s.seq).as_str()))
        .count();
    f.approved.push(count(&result.payments, "APPROVED") as f64);
    f.circuit_open
        .push(count(&result.payments, "FAILED:CIRCUIT_OPEN") as f64);
    f.limited
        .push(count(&result.payments, "FAILED:CONCURRENCY_LIMITED") as f64);
    f.unknown.push(count(&result.payments, "UNKNOWN") as f64);
    let first_open = transitions
        .iter()
        .find(|(_, change)| change.ends_with("→OPEN"))
        .map_or(f64::INFINITY, |(at, _)| *at);
    let (before, after): (Vec<&Sample>, Vec<&Sample>) = result
        .payments
        .iter()
        .filter(|s| s.outcome == "UNKNOWN")
        .partition(|s| s.sent_at.as_secs_f64() < first_open);
    f.unknown_before_open.push(before.len() as f64);
    f.unknown_after_open.push(after.len() as f64);
    f.refused_at_pg.push(refused_at_pg as f64);
    f.timelines.push(
        transitions
            .iter()
            .map(|(at, change)| format!("+{at:.1}s {change}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    if let Some(chart) = chart {
        let stall = match variant.warm_up.as_secs() {
            0 => String::new(),
            warm => format!(" after {warm} s healthy"),
        };
        mixed_chart(
            out,
            chart,
            &format!(
                "PG 6 s for 40 s{stall}, breaker {}: run {run}",
                variant.label
            ),
            &result,
            seconds as f64 + 10.0,
        )?;
    }
    Ok(())
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let (rows, notes, charts) = run_variants(variants().into(), runs, out).await?;
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "3. What becomes of payments while the breaker is open?",
        setup: format!(
            "The PG answers confirms after 6 s (`DELAY`) for 40 s, then normally; 10 \
             payments/s and 5 unrelated reads/s for {SECONDS} s. Origin defaults: timeout 3 s, \
             bulkhead 50, breaker window 20, min calls 10, failure rate 50 %, slow at 1 s \
             (counted while a call is still out) at a slow-call rate of 10 %, open 10 s, a \
             look-up probe once the wait is over (a confirm of a payment that cannot exist \
             instead, once a half-open payment went unanswered), then 3 half-open payments \
             one at a time; the \
             concurrency limit adaptive between 2 and 50, a call waiting at most 2 s for a slot. \
             \"limit off\" sets `GATEWAY_CONCURRENCY=off`; \"whole PG stalls\" delays the PG's \
             look-ups by 6 s as well (`statusDelayMs`), so the breaker's look-up probes go \
             unanswered too; the last row sets `BREAKER_ENABLED=false` as well. \"Refused at \
             the PG\": payments the guard refused whose order id the simulator's ledger shows. \
             Recovery to CLOSED is measured from +40 s on the breaker's own transition clock. \
             The limit is read from `/admin/guard` every 100 ms; its healthy level is its \
             median over the last 30 s, and \"back\" is the time from CLOSED (from +40 s \
             without a breaker) until it first reads that level or more."
        ),
        seed: Table {
            header: vec![
                "breaker",
                "201 APPROVED",
                "201 FAILED (CIRCUIT_OPEN)",
                "202 UNKNOWN",
                "refused payments at the PG",
                "back to CLOSED after recovery",
            ],
            rows: vec![
                vec![
                    "on (default), 3 runs".into(),
                    "489–496".into(),
                    "329–360".into(),
                    "46–83".into(),
                    "0".into(),
                    "3.8–12.6 s".into(),
                ],
                vec![
                    "off, 3 runs".into(),
                    "530–531".into(),
                    "0".into(),
                    "369–370".into(),
                    "—".into(),
                    "—".into(),
                ],
            ],
        },
        ours: Table {
            header: header(false),
            rows,
        }
        .into(),
        notes,
        charts,
    })
}
