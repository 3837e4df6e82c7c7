//! Experiment 3 — what becomes of payments while the breaker is open: the PG answers
//! after 6 s (past the 3 s timeout) for 40 s, then is healthy; 10 payments/s and 5
//! reads/s for 90 s; breaker on with the concurrency limit on (the defaults) and off,
//! on with the limit while the whole PG stalls (look-ups too), and both off.

mod limit;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{
    breaker_transitions, count, mixed, mixed_chart, verdict, Plan, Report, Table, GUARD_REFUSALS,
};
use crate::load::Sample;
use crate::stack::{received, Stack};
use crate::stats::range;

const SECONDS: u64 = 90;
const OUTAGE: Duration = Duration::from_secs(40);
/// The acceptance bound on UNKNOWN payments in one run, with the limit on (issue 36).
const UNKNOWN_BOUND: f64 = 5.0;
/// Probes a failing half-open cycle sends: one at a time, the first stalled re-opens.
const PROBES: f64 = 1.0;
/// How soon after the breaker closes the limit must be back at its healthy level.
const BACK_TO_NORMAL_S: f64 = 2.0;
/// The healthy level: the limit's median over the run's last 30 s.
const HEALTHY_FROM_S: f64 = 60.0;

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
    timelines: Vec<String>,
}

/// One configuration: its row's label, its chart's name, the origin's variables, whether
/// the breaker and the concurrency limit are on, and whether look-ups stall too.
struct Variant {
    label: &'static str,
    chart: &'static str,
    env: Vec<(&'static str, String)>,
    enabled: bool,
    limit: bool,
    whole_pg: bool,
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
        },
        Variant {
            label: "on, limit off",
            chart: "breaker-on-limit-off",
            env: vec![limit_off.clone()],
            enabled: true,
            limit: false,
            whole_pg: false,
        },
        Variant {
            label: "on, limit on, whole PG stalls",
            chart: "breaker-on-whole-pg",
            env: Vec::new(),
            enabled: true,
            limit: true,
            whole_pg: true,
        },
        Variant {
            label: "off, limit off",
            chart: "breaker-off",
            env: vec![("BREAKER_ENABLED", "false".into()), limit_off],
            enabled: false,
            limit: false,
            whole_pg: false,
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
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut charts = Vec::new();
    for variant in variants() {
        let (label, enabled, limited) = (variant.label, variant.enabled, variant.limit);
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
                    (Duration::ZERO, variant.stall()),
                    (OUTAGE, json!({"mode": "NORMAL"})),
                ],
            };
            let start = Instant::now();
            let (result, limits) = tokio::join!(
                mixed(&stack, &plan),
                limit::sample(&stack, start, plan.duration)
            );
            let result = result?;
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
            if let Some(healthy) = limit::median(&limits, HEALTHY_FROM_S, SECONDS as f64) {
                let from = if enabled {
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
        let limit_back: Vec<f64> = f.limit_back.iter().flatten().copied().collect();
        let on = |text: String| if enabled { text } else { "—".into() };
        rows.push(vec![
            label.to_owned(),
            range(&f.approved, 0),
            range(&f.circuit_open, 0),
            range(&f.limited, 0),
            range(&f.unknown, 0),
            on(format!(
                "{} / {}",
                range(&f.unknown_before_open, 0),
                range(&f.unknown_after_open, 0)
            )),
            on(range(&f.refused_at_pg, 0)),
            on(format!("{} s", range(&back, 1))),
            if limited {
                format!(
                    "{} s (limit {})",
                    range(&limit_back, 1),
                    range(&f.healthy_limit, 0)
                )
            } else {
                "—".into()
            },
        ]);
        if enabled {
            notes.extend(breaker_notes(label, limited, &f));
        }
    }
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "3. What becomes of payments while the breaker is open?",
        setup: format!(
            "The PG answers confirms after 6 s (`DELAY`) for 40 s, then normally; 10 \
             payments/s and 5 unrelated reads/s for {SECONDS} s. Origin defaults: timeout 3 s, \
             bulkhead 50, breaker window 20, min calls 10, failure rate 50 %, slow at 1 s \
             (counted while a call is still out) at a slow-call rate of 10 %, open 10 s, a \
             look-up probe once the wait is over, then 3 half-open payments one at a time; the \
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
            header: vec![
                "breaker, concurrency limit",
                "APPROVED",
                "FAILED (CIRCUIT_OPEN)",
                "FAILED (CONCURRENCY_LIMITED)",
                "UNKNOWN",
                "UNKNOWN sent before it first opened / after",
                "refused payments at the PG",
                "back to CLOSED after recovery",
                "limit back at its healthy level after CLOSED",
            ],
            rows,
        }
        .into(),
        notes,
        charts,
    })
}

/// The acceptance checks and the account of the UNKNOWNs for one configuration with the
/// breaker on.
fn breaker_notes(label: &str, limited: bool, f: &Figures) -> Vec<String> {
    let mut notes: Vec<String> = f
        .timelines
        .iter()
        .enumerate()
        .map(|(run, timeline)| {
            format!(
                "Breaker {label}, run {} transitions (PG healthy again at +40.0 s): {timeline}.",
                run + 1
            )
        })
        .collect();
    let closed_after_probe: Vec<f64> = f
        .closed_after_first_probe
        .iter()
        .flatten()
        .copied()
        .collect();
    let mut acceptance = format!(
        "Acceptance (breaker {label}): refused payments that reached the PG: {} (must be 0): \
         {}. Back to CLOSED within 1 s of the first half-open cycle after the PG recovered: \
         {} s: {}.",
        range(&f.refused_at_pg, 0),
        verdict(f.refused_at_pg.iter().all(|n| *n == 0.0)),
        range(&closed_after_probe, 2),
        verdict(
            f.closed_after_first_probe
                .iter()
                .all(|d| d.is_some_and(|d| d <= 1.0))
        ),
    );
    if limited {
        let back: Vec<f64> = f.limit_back.iter().flatten().copied().collect();
        acceptance.push_str(&format!(
            " UNKNOWN ≤ 5 per run (issue 36) — UNKNOWN {} with {} half-open cycles: {}. The \
             limit back at its healthy level ({}) within {BACK_TO_NORMAL_S:.0} s of CLOSED: {} \
             s: {}.",
            range(&f.unknown, 0),
            range(&f.half_open_cycles, 0),
            verdict(f.unknown.iter().all(|unknown| *unknown <= UNKNOWN_BOUND)),
            range(&f.healthy_limit, 0),
            range(&back, 1),
            verdict(
                f.limit_back.len() == f.unknown.len()
                    && f.limit_back
                        .iter()
                        .all(|d| d.is_some_and(|d| d <= BACK_TO_NORMAL_S))
            ),
        ));
    }
    notes.push(acceptance);
    let probes_only = f
        .unknown_after_open
        .iter()
        .zip(&f.half_open_cycles)
        .all(|(after, cycles)| *after <= PROBES * cycles);
    let first_second = if limited {
        "the limit, still at its floor of 2 (nothing learned yet), lets 2 out and makes \
         the rest wait; the calls waiting count as traffic towards the breaker's 10 min \
         calls, so it opens at the first slow call, 1 s in, and refuses the line unsent \
         (`CIRCUIT_OPEN`)"
    } else {
        "every call of that second is sent before the first is judged slow and the \
         breaker opens, once 10 have been sent (min calls)"
    };
    notes.push(format!(
        "Where the UNKNOWNs come from (breaker {label}): no answer comes back before the 3 s \
         timeout, but a call still out at the 1 s slow-call threshold counts as slow from then \
         on; {first_second} — {} UNKNOWN were sent before it first opened. Once open, the \
         breaker's probe is a look-up of an order that cannot exist: it passes while only the \
         confirms stall, and the half-open cycle then lets one payment through, the first \
         still out at the threshold re-opening it; when the look-ups stall too, no cycle \
         begins and no payment is sent. {} UNKNOWN were sent after it opened, at most one per \
         half-open cycle in every run: {}.",
        range(&f.unknown_before_open, 0),
        range(&f.unknown_after_open, 0),
        if probes_only { "yes" } else { "**no**" },
    ));
    notes
}
