//! Experiment 8 — is the adaptive concurrency limit (issue 36) a second breaker? Three
//! loads a healthy PG carries, none of which the limit may refuse: a jittery PG at
//! 100 payments/s, a burst of 50 at once over 10/s, and a slow but steady PG at 10/s.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::{breaker_transitions, confirm, count, verdict, Report, Table};
use crate::load::{open_model, Sample};
use crate::observe::EVERY;
use crate::stack::Stack;
use crate::stats::{percentile_ms, range};

/// Every payment of a run, and the burst's alone.
type Both = (Vec<Sample>, Vec<Sample>);

const LIMITED: &str = "FAILED:CONCURRENCY_LIMITED";
const BURST: u64 = 50;
/// When the burst is sent, from the run's start; the background load goes on after it.
const BURST_AT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, PartialEq)]
enum Case {
    Jittery,
    Burst,
    Slow,
}

impl Case {
    fn label(self) -> &'static str {
        match self {
            Case::Jittery => "1. healthy, jittery: PG 0–300 ms, 100/s for 100 s",
            Case::Burst => "2. burst of 50: PG 0–300 ms, 10/s for 15 s, 50 at once at +10 s",
            Case::Slow => "3. slow but steady: PG 1–2 s, 10/s for 60 s, slow at 2.5 s",
        }
    }

    /// The origin's variables, the simulator's faults, payments a second and for how
    /// long (s).
    fn settings(self) -> (Vec<(&'static str, String)>, Value, f64, u64) {
        let jittery = json!({"mode": "DELAY", "delayMs": 0, "jitterMs": 300});
        match self {
            Case::Jittery => (Vec::new(), jittery, 100.0, 100),
            Case::Burst => (Vec::new(), jittery, 10.0, 15),
            Case::Slow => (
                vec![("BREAKER_SLOW_CALL_MS", "2500".into())],
                json!({"mode": "DELAY", "delayMs": 1_000, "jitterMs": 1_000}),
                10.0,
                60,
            ),
        }
    }
}

/// What one run showed: every payment (the burst's among them), the burst's alone, and
/// `/admin/guard`'s `concurrency.limit` and `waiting` every [`EVERY`].
struct Run {
    payments: Vec<Sample>,
    burst: Vec<Sample>,
    limits: Vec<f64>,
    waiting: Vec<f64>,
    transitions: Vec<(f64, String)>,
}

impl Run {
    /// Payments neither APPROVED nor CONCURRENCY_LIMITED.
    fn others(&self) -> impl Iterator<Item = &Sample> {
        let other = |s: &&Sample| s.outcome != "APPROVED" && s.outcome != LIMITED;
        self.payments.iter().filter(other)
    }

    fn burst_p95(&self) -> f64 {
        percentile_ms(&self.burst.iter().collect::<Vec<_>>(), 95.0)
    }

    /// When the refused payments were sent, and the breaker's transitions.
    fn timeline(&self) -> String {
        let refused = self.payments.iter().filter(|s| s.outcome == LIMITED);
        let sent: Vec<f64> = refused.map(|s| s.sent_at.as_secs_f64()).collect();
        let refused = match sent.as_slice() {
            [] => String::new(),
            [first, .., last] | [first @ last] => format!("refused sent +{first:.1}–{last:.1} s; "),
        };
        let changes = self.transitions.iter();
        let changes: Vec<String> = changes.map(|(at, c)| format!("+{at:.1}s {c}")).collect();
        match changes.is_empty() {
            true => format!("{refused}breaker: no transition"),
            false => format!("{refused}breaker: {}", changes.join(", ")),
        }
    }
}

/// `low–high` over `runs` of `figure`.
fn over(runs: &[Run], figure: impl Fn(&Run) -> f64) -> String {
    range(&runs.iter().map(figure).collect::<Vec<_>>(), 0)
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

/// The middle of `values` (nearest rank); 0 for none.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len().saturating_sub(1) / 2;
    sorted.get(middle).copied().unwrap_or_default()
}

/// Runs `load` from `start`, sampling `/admin/guard` meanwhile.
async fn observed(stack: &Stack, start: Instant, load: impl Future<Output = Both>) -> Result<Run> {
    let (stop, mut stopped) = watch::channel(false);
    let sampling = async {
        let (mut limits, mut waiting) = (Vec::new(), Vec::new());
        let mut tick = tokio::time::interval(EVERY);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopped.changed() => return (limits, waiting),
            }
            let guard = tokio::time::timeout(EVERY * 8, stack.operator_get("/admin/guard"));
            if let Ok(Ok(guard)) = guard.await {
                limits.extend(guard["concurrency"]["limit"].as_f64());
                waiting.extend(guard["concurrency"]["waiting"].as_f64());
            }
        }
    };
    let load = async {
        let done = load.await;
        let _ = stop.send(true);
        done
    };
    let ((payments, burst), (limits, waiting)) = tokio::join!(load, sampling);
    Ok(Run {
        payments,
        burst,
        limits,
        waiting,
        transitions: breaker_transitions(stack, start).await?,
    })
}

/// `BURST` confirms sent together at [`BURST_AT`], their requests made first.
async fn burst(stack: &Stack, start: Instant, prefix: &str) -> Vec<Sample> {
    tokio::time::sleep_until((start + BURST_AT).into()).await;
    let calls: Vec<_> = (0..BURST)
        .map(|n| confirm(stack, &format!("{prefix}-burst-{n}")))
        .collect();
    let mut running = JoinSet::new();
    for (seq, call) in (0..).zip(calls) {
        running.spawn(async move {
            let sent = Instant::now();
            let (status, outcome) = call.await;
            Sample {
                seq,
                sent_at: sent.duration_since(start),
                latency: sent.elapsed(),
                status,
                outcome,
            }
        });
    }
    let mut samples = Vec::new();
    while let Some(done) = running.join_next().await {
        samples.extend(done.ok());
    }
    samples
}

/// One run of `case`, with the limit at its default (`adaptive`) or off.
async fn run(case: Case, limit_on: bool, prefix: &str) -> Result<Run> {
    let (mut env, faults, per_s, seconds) = case.settings();
    if !limit_on {
        env.push(("GATEWAY_CONCURRENCY", "off".into()));
    }
    let stack = Stack::start(&env).await?;
    stack.set_faults(faults).await?;
    let start = Instant::now();
    let load = async {
        let order = |n| confirm(&stack, &format!("{prefix}-{n}"));
        let steady = open_model(start, per_s, Duration::from_secs(seconds), order);
        let bursting = async {
            match case {
                Case::Burst => burst(&stack, start, prefix).await,
                _ => Vec::new(),
            }
        };
        let (mut all, burst) = tokio::join!(steady, bursting);
        all.extend(burst.iter().cloned());
        (all, burst)
    };
    observed(&stack, start, load).await
}

/// One case's row and notes, with the limit on or off, over its runs.
fn figures(case: Case, limit_on: bool, done: &[Run]) -> (Vec<String>, Vec<String>) {
    let limited = over(done, |r| count(&r.payments, LIMITED) as f64);
    let shown = |text: String| if limit_on { text } else { "—".into() };
    let row = vec![
        case.label().to_owned(),
        if limit_on { "on" } else { "off" }.to_owned(),
        over(done, |r| r.payments.len() as f64),
        over(done, |r| count(&r.payments, "APPROVED") as f64),
        limited.clone(),
        over(done, |r| r.others().count() as f64),
        shown(format!(
            "{} / {}",
            over(done, |r| median(&r.limits)),
            over(done, |r| max(&r.limits))
        )),
        shown(over(done, |r| max(&r.waiting))),
    ];
    let name = case.label().split(':').next().unwrap_or_default();
    let mut note = match limit_on {
        true => format!(
            "Acceptance ({name}): no call refused by the limit — CONCURRENCY_LIMITED \
             {limited} per run: {}.",
            verdict(done.iter().all(|r| count(&r.payments, LIMITED) == 0))
        ),
        false => format!("Limit off ({name}), the baseline: CONCURRENCY_LIMITED {limited}."),
    };
    match case {
        Case::Burst => note.push_str(&format!(
            " Among the burst's 50: CONCURRENCY_LIMITED {} (must be 0): {}; the \
             burst's p95 {} ms.",
            over(done, |r| count(&r.burst, LIMITED) as f64),
            verdict(done.iter().all(|r| count(&r.burst, LIMITED) == 0)),
            over(done, |r| r.burst_p95()),
        )),
        Case::Slow => note.push_str(&format!(
            " The breaker stays CLOSED (no transition in any run): {}.",
            verdict(done.iter().all(|r| r.transitions.is_empty()))
        )),
        Case::Jittery => {}
    }
    let mut others = BTreeMap::<String, usize>::new();
    for sample in done.iter().flat_map(Run::others) {
        *others
            .entry(format!("{} {}", sample.status, sample.outcome))
            .or_default() += 1;
    }
    let others: Vec<String> = others.iter().map(|(o, n)| format!("{o}: {n}")).collect();
    let timelines: Vec<String> = done.iter().map(Run::timeline).collect();
    let limit = if limit_on { "limit on" } else { "limit off" };
    let outcomes = format!(
        "Other outcomes ({name}, {limit}) over the {} runs (HTTP status, outcome: count): {}. \
         Per run: {}.",
        done.len(),
        Some(others.join("; "))
            .filter(|o| !o.is_empty())
            .unwrap_or("none".into()),
        timelines.join(" | ")
    );
    (row, vec![note, outcomes])
}

pub async fn report(runs: u32, _out: &Path) -> Result<Report> {
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for case in [Case::Jittery, Case::Burst, Case::Slow] {
        for limit_on in [true, false] {
            let mut done = Vec::new();
            for n in 1..=runs {
                let prefix = format!("concurrency-{}-{}-{n}", case as u8, u8::from(limit_on));
                done.push(run(case, limit_on, &prefix).await?);
            }
            let (row, case_notes) = figures(case, limit_on, &done);
            rows.push(row);
            notes.extend(case_notes);
        }
    }
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "8. Is the concurrency limit a second breaker? (issue 36)",
        setup: format!(
            "Three loads a healthy PG carries, each run {runs} times (limit on, then off) on a fresh origin and \
             simulator; payments only (5,000 won, each its own order and key), open model. \
             Origin defaults (limit `adaptive`, floor 2, ceiling 50, wait for a slot at most \
             2 s; timeout 3 s; breaker on, slow at 1 s; bulkhead 50) except where said. \
             (1) The PG answers after 0–300 ms (`DELAY`, `delayMs` 0, `jitterMs` 300, \
             uniform); 10,000 payments at 100/s (100 s). (2) The same PG; 10 payments/s for \
             15 s, and at +10 s 50 more sent at once (their requests made first, then all \
             started together), the 10/s going on through and after it. (3) The PG answers \
             after 1–2 s (`DELAY`, `delayMs` 1000, `jitterMs` 1000), under the 3 s timeout; \
             `BREAKER_SLOW_CALL_MS=2500`, so a 2 s answer is healthy to the breaker and to \
             the limit; 10 payments/s for 60 s. `/admin/guard`'s `concurrency.limit` and \
             `waiting` are sampled every 250 ms throughout; the limit's median and max are \
             over those samples, and \"most waiting\" is the largest sampled, so a peak \
             shorter than 250 ms can be missed. The line holds at most the ceiling, 50 calls: \
             one that finds it full is refused at once, without waiting. \"Other failures\": \
             payments neither APPROVED nor CONCURRENCY_LIMITED. Breaker transitions as \
             `/admin/guard` lists them after the run. Each case runs with the limit on (the \
             default) and off (`GATEWAY_CONCURRENCY=off`), the baseline. The seed had no \
             such limit."
        ),
        seed: Table {
            header: vec!["—"],
            rows: vec![vec!["not in the seed".into()]],
        },
        ours: Table {
            header: vec![
                "case",
                "concurrency limit",
                "payments",
                "APPROVED",
                "CONCURRENCY_LIMITED",
                "other failures",
                "limit median / max",
                "most waiting",
            ],
            rows,
        }
        .into(),
        notes,
        charts: Vec::new(),
    })
}
