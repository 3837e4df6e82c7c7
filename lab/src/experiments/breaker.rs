//! Experiment 3 — what becomes of payments while the breaker is open: the PG answers
//! after 6 s (past the 3 s timeout) for 40 s, then is healthy; 10 payments/s and 5
//! reads/s for 90 s; breaker on (the defaults), on with a 500 ms slow-call threshold, and
//! off.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::{breaker_transitions, count, mixed, mixed_chart, verdict, Plan, Report, Table};
use crate::load::Sample;
use crate::stack::{received, Stack};
use crate::stats::range;

const SECONDS: u64 = 90;
const OUTAGE: Duration = Duration::from_secs(40);
/// The acceptance bound on UNKNOWN payments in one run.
const UNKNOWN_BOUND: f64 = 15.0;
/// Probes a failing half-open cycle sends: one at a time, the first stalled re-opens.
const PROBES: f64 = 1.0;

#[derive(Default)]
struct Figures {
    approved: Vec<f64>,
    circuit_open: Vec<f64>,
    unknown: Vec<f64>,
    /// UNKNOWN payments sent before the breaker first opened, and after.
    unknown_before_open: Vec<f64>,
    unknown_after_open: Vec<f64>,
    refused_at_pg: Vec<f64>,
    half_open_cycles: Vec<f64>,
    back_to_closed: Vec<Option<f64>>,
    closed_after_first_probe: Vec<Option<f64>>,
    timelines: Vec<String>,
}

/// One configuration of the breaker: its row's label, its chart's name, the origin's
/// variables, and the slow-call threshold it runs with.
struct Variant {
    label: &'static str,
    chart: &'static str,
    env: Vec<(&'static str, String)>,
    enabled: bool,
    slow_call: &'static str,
}

fn variants() -> [Variant; 3] {
    [
        Variant {
            label: "on",
            chart: "breaker-on",
            env: Vec::new(),
            enabled: true,
            slow_call: "1 s",
        },
        Variant {
            label: "on, slow at 500 ms",
            chart: "breaker-on-500ms",
            env: vec![("BREAKER_SLOW_CALL_MS", "500".into())],
            enabled: true,
            slow_call: "500 ms",
        },
        Variant {
            label: "off",
            chart: "breaker-off",
            env: vec![("BREAKER_ENABLED", "false".into())],
            enabled: false,
            slow_call: "—",
        },
    ]
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut charts = Vec::new();
    for variant in variants() {
        let (label, enabled) = (variant.label, variant.enabled);
        let mut f = Figures::default();
        for run in 1..=runs {
            let stack = Stack::start(&variant.env).await?;
            let prefix = format!("{}-{run}", variant.chart);
            let plan = Plan {
                prefix: &prefix,
                payments_per_s: 10.0,
                reads_per_s: 5.0,
                duration: Duration::from_secs(SECONDS),
                faults: vec![
                    (Duration::ZERO, json!({"mode": "DELAY", "delayMs": 6_000})),
                    (OUTAGE, json!({"mode": "NORMAL"})),
                ],
            };
            let result = mixed(&stack, &plan).await?;
            let transitions = breaker_transitions(&stack, result.start).await?;
            let recovered = OUTAGE.as_secs_f64();
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
                .filter(|s| s.outcome == "FAILED:CIRCUIT_OPEN")
                .filter(|s| at_pg.contains(format!("{prefix}-{}", s.seq).as_str()))
                .count();
            f.approved.push(count(&result.payments, "APPROVED") as f64);
            f.circuit_open
                .push(count(&result.payments, "FAILED:CIRCUIT_OPEN") as f64);
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
            if run == runs {
                let chart = format!("{}.svg", variant.chart);
                mixed_chart(
                    out,
                    &chart,
                    &format!("PG 6 s for 40 s, breaker {label}: run {run}"),
                    &result,
                    SECONDS as f64 + 10.0,
                )?;
                charts.push(chart);
            }
        }
        let back: Vec<f64> = f.back_to_closed.iter().flatten().copied().collect();
        rows.push(vec![
            label.to_owned(),
            range(&f.approved, 0),
            range(&f.circuit_open, 0),
            range(&f.unknown, 0),
            if enabled {
                format!(
                    "{} / {}",
                    range(&f.unknown_before_open, 0),
                    range(&f.unknown_after_open, 0)
                )
            } else {
                "—".into()
            },
            if enabled {
                range(&f.refused_at_pg, 0)
            } else {
                "—".into()
            },
            if enabled {
                format!("{} s", range(&back, 1))
            } else {
                "—".into()
            },
        ]);
        if enabled {
            for (run, timeline) in f.timelines.iter().enumerate() {
                notes.push(format!(
                    "Breaker {label}, run {} transitions (PG healthy again at +40.0 s): \
                     {timeline}.",
                    run + 1
                ));
            }
            let bound_met = f.unknown.iter().all(|unknown| *unknown <= UNKNOWN_BOUND);
            notes.push(format!(
                "Acceptance (breaker {label}): UNKNOWN ≤ 15 per run — UNKNOWN {} with {} \
                 half-open cycles: {}. \
                 Refused payments that reached the PG: \
                 {} (must be 0): {}. Back to CLOSED within 1 s of the first half-open cycle \
                 after the PG recovered: {} s: {}.",
                range(&f.unknown, 0),
                range(&f.half_open_cycles, 0),
                verdict(bound_met),
                range(&f.refused_at_pg, 0),
                verdict(f.refused_at_pg.iter().all(|n| *n == 0.0)),
                range(
                    &f.closed_after_first_probe
                        .iter()
                        .flatten()
                        .copied()
                        .collect::<Vec<_>>(),
                    2
                ),
                verdict(
                    f.closed_after_first_probe
                        .iter()
                        .all(|d| d.is_some_and(|d| d <= 1.0))
                ),
            ));
            let probes_only = f
                .unknown_after_open
                .iter()
                .zip(&f.half_open_cycles)
                .all(|(after, cycles)| *after <= PROBES * cycles);
            notes.push(format!(
                "Where the UNKNOWNs come from (breaker {label}): no outcome comes back before \
                 the 3 s timeout, but a call still out at the {} slow-call threshold counts as \
                 slow from then on, so the breaker opens that long into the outage, once 10 \
                 calls have been sent (min calls) — {} UNKNOWN were sent before it first \
                 opened (a breaker that \
                 waits for outcomes opens only once 10 have timed out, 40 sent: the seed's \
                 45–46). Once open, only the half-open probes reach the PG, one at a time, the \
                 first still out at the threshold re-opening it: {} UNKNOWN were sent after, \
                 at most one per cycle in every run: {}.",
                variant.slow_call,
                range(&f.unknown_before_open, 0),
                range(&f.unknown_after_open, 0),
                if probes_only { "yes" } else { "**no**" },
            ));
        }
    }
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "3. What becomes of payments while the breaker is open?",
        setup: format!(
            "The PG answers after 6 s (`DELAY`) for 40 s, then normally; 10 payments/s and 5 \
             unrelated reads/s for {SECONDS} s. Origin defaults: timeout 3 s, bulkhead 50, \
             breaker window 20, min calls 10, failure rate 50 %, slow at 1 s (counted while a \
             call is still out) at a slow-call rate of 10 %, open 10 s, 3 half-open probes one \
             at a time. \"Refused at the PG\": payments answered `CIRCUIT_OPEN` whose order id \
             the simulator's ledger shows. Recovery to CLOSED is measured from +40 s on the \
             breaker's own transition clock. The second configuration sets only \
             `BREAKER_SLOW_CALL_MS=500`."
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
            header: vec![
                "breaker",
                "APPROVED",
                "FAILED (CIRCUIT_OPEN)",
                "UNKNOWN",
                "UNKNOWN sent before it first opened / after",
                "refused payments at the PG",
                "back to CLOSED after recovery",
            ],
            rows,
        }
        .into(),
        notes,
        charts,
    })
}
