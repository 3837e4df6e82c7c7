//! Experiment 7 — a gated drop while the PG is down: does the queue hold? Buyers queue
//! for a gated event through the edge, each checking out once admitted; the PG answers
//! after 6 s (past the 3 s timeout) for 40 s in the middle of the run. Counted: passes
//! that ran out before their holder could pay, gated confirms the edge forwarded while
//! its rooms said payments were paused, and what reached the dead PG — with the origin's
//! concurrency limit on (the default) and off.

mod client;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::task::JoinSet;

use super::{breaker_transitions, verdict, Report, Table};
use crate::edge::{self, Edge};
use crate::stack::{received, Stack};
use crate::stats::range;
use client::{Buyer, Journal};
use harness::signed::now_ms;

const EVENT: &str = "outage-drop";
const BUYERS: usize = 200;
/// Buyers start evenly over this long.
const RAMP: Duration = Duration::from_secs(5);
const SECONDS: u64 = 90;
const OUTAGE_START: f64 = 15.0;
const OUTAGE_END: f64 = 55.0;
const ADMIT: u32 = 20;
/// Shorter than the outage: a pass live when it began would run out in it, unextended.
const PASS_TTL_SECONDS: u32 = 20;
/// How long an admitted buyer takes to check out before confirming.
const THINK: Duration = Duration::from_secs(3);
/// The most confirms that may reach the dead PG in one run with the limit on (issue 36).
const AT_PG_BOUND: f64 = 5.0;

#[derive(Default)]
struct Figures {
    admitted: Vec<f64>,
    lost: Vec<f64>,
    lost_in_outage: Vec<f64>,
    /// Buyers who paid after their pass would have run out, had no pause extended it.
    saved: Vec<f64>,
    refused_paused: Vec<f64>,
    approved: Vec<f64>,
    circuit_open: Vec<f64>,
    limited: Vec<f64>,
    unknown: Vec<f64>,
    forwarded_while_paused: Vec<f64>,
    at_pg_in_outage: Vec<f64>,
    at_pg_before_open: Vec<f64>,
    half_open_cycles: Vec<f64>,
}

/// `edge_build`: the edge build it runs (`build/` when `None`).
pub async fn report(runs: u32, _out: &Path, edge_build: Option<&Path>) -> anyhow::Result<Report> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for (label, env) in [
        ("on", Vec::new()),
        ("off", vec![("GATEWAY_CONCURRENCY", "off".to_owned())]),
    ] {
        let mut f = Figures::default();
        for _ in 1..=runs {
            run_once(&mut f, &env, edge_build).await?;
        }
        rows.push(row(label, &f));
        notes.extend(acceptance(label, &f));
    }
    notes.push(
        "How the edge learns: a gated confirm reaches the origin, whose guard refuses it \
         (201 FAILED `CIRCUIT_OPEN` or `CONCURRENCY_LIMITED`, never sent to the PG) and says \
         for how long payments stay paused; every gated room then holds that long — no new \
         pass, live passes extended — and the next confirms stop at the edge (503 \
         `PAYMENTS_PAUSED`). So each open period costs the origin a few refused confirms, \
         counted in the table, and the PG nothing. \"Forwarded while paused\" counts a \
         forwarded confirm whose whole request fell inside a time a waiting buyer's poll \
         showed paused (`paused: true`, until `pausedUntil`)."
            .into(),
    );
    Ok(Report {
        runtime: "the edge under `workerd serve`, the origin and the gateway simulator as \
            release builds, all on loopback; SQLite, one origin",
        title: "7. A gated drop while the PG is down: does the queue hold?",
        setup: format!(
            "{BUYERS} buyers start over {ramp} s and queue for `{EVENT}` (`GATED_EVENTS`, \
             `QUEUE_ADMIT_LIMIT={ADMIT}`, `QUEUE_PASS_TTL_SECONDS={PASS_TTL_SECONDS}`, stock \
             never running out). Each polls at `pollAfterSeconds` until admitted, takes {think} \
             s to check out, then confirms: again with a new order after a failure (1 s later), \
             with the same after `PAYMENTS_PAUSED` (after `Retry-After`); approved or unknown, \
             it is done; a lost pass sends it back to the queue. The PG answers after 6 s \
             (`DELAY`) from +{OUTAGE_START:.0} s to +{OUTAGE_END:.0} s, normally otherwise; \
             {SECONDS} s per run. Origin and edge at their defaults otherwise: the origin's \
             concurrency limit adaptive (\"on\"), or `GATEWAY_CONCURRENCY=off`. A pass lives \
             {PASS_TTL_SECONDS} s, half the outage: unextended, every pass live when it began \
             would run out in it. The seed ran no such experiment; its queue had no \
             knowledge of the PG.",
            ramp = RAMP.as_secs(),
            think = THINK.as_secs(),
        ),
        seed: Table {
            header: vec!["—"],
            rows: vec![vec!["not in the seed".into()]],
        },
        ours: Table {
            header: vec![
                "concurrency limit",
                "passes issued",
                "passes lost (in the outage)",
                "paid past the pass's first expiry",
                "confirms refused PAYMENTS_PAUSED",
                "forwarded: APPROVED / CIRCUIT_OPEN / CONCURRENCY_LIMITED / UNKNOWN",
                "forwarded while paused",
                "at the PG in the outage (before it opened)",
            ],
            rows,
        }
        .into(),
        notes,
        charts: Vec::new(),
    })
}

/// One configuration's row of the table.
fn row(label: &str, f: &Figures) -> Vec<String> {
    vec![
        label.to_owned(),
        range(&f.admitted, 0),
        format!("{} ({})", range(&f.lost, 0), range(&f.lost_in_outage, 0)),
        range(&f.saved, 0),
        range(&f.refused_paused, 0),
        format!(
            "{} / {} / {} / {}",
            range(&f.approved, 0),
            range(&f.circuit_open, 0),
            range(&f.limited, 0),
            range(&f.unknown, 0)
        ),
        range(&f.forwarded_while_paused, 0),
        format!(
            "{} ({})",
            range(&f.at_pg_in_outage, 0),
            range(&f.at_pg_before_open, 0)
        ),
    ]
}

/// One configuration's acceptance checks.
fn acceptance(label: &str, f: &Figures) -> Vec<String> {
    let lost_in_outage = f.lost_in_outage.iter().all(|n| *n == 0.0);
    let paused = f.forwarded_while_paused.iter().all(|n| *n == 0.0);
    let beyond_probes = f
        .at_pg_in_outage
        .iter()
        .zip(&f.at_pg_before_open)
        .zip(&f.half_open_cycles)
        .map(|((all, before), cycles)| all - before - cycles)
        .fold(0.0, f64::max);
    let at_pg_met = f.at_pg_in_outage.iter().all(|n| *n <= AT_PG_BOUND);
    vec![
        format!(
            "Acceptance (limit {label}): passes that ran out unused during the outage — {}: \
             {}. Gated confirms the edge forwarded while its rooms said payments were paused \
             — {}: {}. What the first check covers: {} buyers in every run paid after the time \
             their pass was first issued to end — each would have lost it to the outage, \
             unextended.",
            range(&f.lost_in_outage, 0),
            verdict(lost_in_outage),
            range(&f.forwarded_while_paused, 0),
            verdict(paused),
            range(&f.saved, 0),
        ),
        format!(
            "What reached the dead PG (limit {label}): {} confirms during the outage, of which \
             {} before the breaker first opened (the cost of seeing the stall, as in experiment \
             3) and the rest its half-open probes ({} cycles); beyond those, at most \
             {beyond_probes:.0} in any run: {}.{}",
            range(&f.at_pg_in_outage, 0),
            range(&f.at_pg_before_open, 0),
            range(&f.half_open_cycles, 0),
            verdict(beyond_probes <= 0.0),
            if label == "on" {
                format!(
                    " At most {AT_PG_BOUND:.0} per run (issue 36): {}.",
                    verdict(at_pg_met)
                )
            } else {
                String::new()
            },
        ),
    ]
}

async fn run_once(
    f: &mut Figures,
    origin_env: &[(&str, String)],
    edge_build: Option<&Path>,
) -> anyhow::Result<()> {
    let stack = Stack::start(origin_env).await?;
    stack.set_event(EVENT, 1_000_000, 5_000).await?;
    let vars = [
        ("GATED_EVENTS", EVENT.to_owned()),
        ("QUEUE_ADMIT_LIMIT", ADMIT.to_string()),
        ("QUEUE_PASS_TTL_SECONDS", PASS_TTL_SECONDS.to_string()),
    ];
    let edge = Edge::start(&stack.origin, stack.edge_secret(), &vars, edge_build).await?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let (start, start_epoch_ms) = (Instant::now(), now_ms());
    let end = start + Duration::from_secs(SECONDS);
    let mut buyers = JoinSet::new();
    for n in 0..BUYERS {
        let user = format!("buyer-{n}");
        let buyer = Buyer {
            http: http.clone(),
            edge: edge.url.clone(),
            token: edge::token(&user)?,
            user,
            start,
            start_epoch_ms,
            end,
            journal: Journal::default(),
        };
        let at = start + RAMP.mul_f64(n as f64 / BUYERS as f64);
        buyers.spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            buyer.run().await
        });
    }
    tokio::time::sleep_until((start + Duration::from_secs_f64(OUTAGE_START)).into()).await;
    stack
        .set_faults(json!({"mode": "DELAY", "delayMs": 6_000}))
        .await?;
    tokio::time::sleep_until((start + Duration::from_secs_f64(OUTAGE_END)).into()).await;
    stack.set_faults(json!({"mode": "NORMAL"})).await?;
    let journals: Vec<Journal> = buyers.join_all().await;

    let transitions = breaker_transitions(&stack, start).await?;
    let in_outage = |at: f64| (OUTAGE_START..OUTAGE_END).contains(&at);
    let first_open = transitions
        .iter()
        .find(|(at, change)| *at >= OUTAGE_START && change.ends_with("→OPEN"))
        .map_or(f64::INFINITY, |(at, _)| *at);
    let at_pg: Vec<f64> = received(&stack.ledger().await?)
        .iter()
        .map(|(_, at)| (*at as i64 - start_epoch_ms) as f64 / 1e3)
        .filter(|at| in_outage(*at))
        .collect();
    let paused: Vec<(f64, f64)> = journals
        .iter()
        .flat_map(|j| j.paused_seen.clone())
        .collect();
    let forwarded: Vec<&(f64, f64, String)> =
        journals.iter().flat_map(|j| j.forwarded.iter()).collect();
    let outcomes = |outcome: &str| forwarded.iter().filter(|(.., o)| o == outcome).count() as f64;
    let sum = |count: &dyn Fn(&Journal) -> usize| journals.iter().map(count).sum::<usize>() as f64;

    f.admitted.push(sum(&|j| j.admitted.len()));
    f.lost.push(sum(&|j| j.passes_lost.len()));
    f.lost_in_outage.push(sum(&|j| {
        j.passes_lost.iter().filter(|at| in_outage(**at)).count()
    }));
    f.saved
        .push(sum(&|j| usize::from(paid_past_first_expiry(j))));
    f.refused_paused.push(sum(&|j| j.refused_paused as usize));
    f.approved.push(outcomes("APPROVED"));
    f.circuit_open.push(outcomes("FAILED:CIRCUIT_OPEN"));
    f.limited.push(outcomes("FAILED:CONCURRENCY_LIMITED"));
    f.unknown.push(outcomes("UNKNOWN"));
    f.forwarded_while_paused.push(
        forwarded
            .iter()
            .filter(|(sent, answered, _)| {
                paused
                    .iter()
                    .any(|(from, until)| from <= sent && answered < until)
            })
            .count() as f64,
    );
    f.at_pg_in_outage.push(at_pg.len() as f64);
    f.at_pg_before_open
        .push(at_pg.iter().filter(|at| **at < first_open).count() as f64);
    f.half_open_cycles.push(
        transitions
            .iter()
            .filter(|(at, change)| in_outage(*at) && change.ends_with("→HALF_OPEN"))
            .count() as f64,
    );
    drop(edge);
    Ok(())
}

/// Whether the buyer's payment was approved after the pass it paid with would have ended,
/// counted from when it was issued: only a pause's extension kept it.
fn paid_past_first_expiry(journal: &Journal) -> bool {
    let Some(admitted) = journal.admitted.last() else {
        return false;
    };
    journal.forwarded.iter().any(|(_, answered, outcome)| {
        outcome == "APPROVED" && *answered > admitted + f64::from(PASS_TTL_SECONDS)
    })
}
