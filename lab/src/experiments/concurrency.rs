//! Experiment 8 — is the adaptive concurrency limit (issue 36) a second breaker? Three
//! loads a healthy PG carries, none of which the limit may refuse: a jittery PG at
//! 100 payments/s, a burst of 50 at once over 10/s, and a slow but steady PG at 10/s.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::{breaker_transitions, confirm, count, verdict, Report, Table};
use crate::load::{open_model, Sample};
use crate::observe::EVERY;
use crate::stack::Stack;
use crate::stats::{percentile_ms, range};

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

    fn env(self) -> Vec<(&'static str, String)> {
        match self {
            Case::Slow => vec![("BREAKER_SLOW_CALL_MS", "2500".into())],
            _ => Vec::new(),
        }
    }

    fn faults(self) -> Value {
        match self {
            Case::Slow => json!({"mode": "DELAY", "delayMs": 1_000, "jitterMs": 1_000}),
            _ => json!({"mode": "DELAY", "delayMs": 0, "jitterMs": 300}),
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

/// One case's figures over its runs.
#[derive(Default)]
struct Figures {
    payments: Vec<f64>,
    approved: Vec<f64>,
    limited: Vec<f64>,
    other: Vec<f64>,
    /// Outcomes neither APPROVED nor CONCURRENCY_LIMITED, summed over the runs.
    others: BTreeMap<String, usize>,
    limit_median: Vec<f64>,
    limit_max: Vec<f64>,
    waiting_max: Vec<f64>,
    burst_limited: Vec<f64>,
    burst_p95: Vec<f64>,
    transitions: Vec<String>,
}

impl Figures {
    fn add(&mut self, run: &Run) {
        let approved = count(&run.payments, "APPROVED");
        let limited = count(&run.payments, LIMITED);
        self.payments.push(run.payments.len() as f64);
        self.approved.push(approved as f64);
        self.limited.push(limited as f64);
        self.other
            .push((run.payments.len() - approved - limited) as f64);
        for sample in &run.payments {
            if sample.outcome != "APPROVED" && sample.outcome != LIMITED {
                let key = format!("{} {}", sample.status, sample.outcome);
                *self.others.entry(key).or_default() += 1;
            }
        }
        self.limit_median.push(median(&run.limits));
        self.limit_max
            .push(run.limits.iter().copied().fold(0.0, f64::max));
        self.waiting_max
            .push(run.waiting.iter().copied().fold(0.0, f64::max));
        if !run.burst.is_empty() {
            self.burst_limited.push(count(&run.burst, LIMITED) as f64);
            let burst: Vec<&Sample> = run.burst.iter().collect();
            self.burst_p95.push(percentile_ms(&burst, 95.0));
        }
        self.transitions.push(match run.transitions.as_slice() {
            [] => "none".into(),
            all => all
                .iter()
                .map(|(at, change)| format!("+{at:.1}s {change}"))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }

    fn none_limited(&self) -> bool {
        self.limited.iter().all(|n| *n == 0.0)
    }

    fn others_text(&self) -> String {
        match self.others.is_empty() {
            true => "none".into(),
            false => self
                .others
                .iter()
                .map(|(outcome, n)| format!("{outcome}: {n}"))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

/// The middle of `values` (nearest rank); 0 for none.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

/// Runs `load` from `start`, sampling `/admin/guard` meanwhile.
async fn observed<F>(stack: &Stack, start: Instant, load: F) -> anyhow::Result<Run>
where
    F: Future<Output = (Vec<Sample>, Vec<Sample>)>,
{
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

/// `BURST` confirms sent together at `at`, their futures made first.
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

async fn run(case: Case, prefix: &str) -> anyhow::Result<Run> {
    let stack = Stack::start(&case.env()).await?;
    stack.set_faults(case.faults()).await?;
    let start = Instant::now();
    let order = |n| confirm(&stack, &format!("{prefix}-{n}"));
    let second = Duration::from_secs(1);
    match case {
        Case::Jittery => {
            let load = async { (open_model(start, 100.0, second * 100, order).await, vec![]) };
            observed(&stack, start, load).await
        }
        Case::Slow => {
            let load = async { (open_model(start, 10.0, second * 60, order).await, vec![]) };
            observed(&stack, start, load).await
        }
        Case::Burst => {
            let load = async {
                let (mut all, burst) = tokio::join!(
                    open_model(start, 10.0, second * 15, order),
                    burst(&stack, start, prefix)
                );
                all.extend(burst.iter().cloned());
                (all, burst)
            };
            observed(&stack, start, load).await
        }
    }
}

pub async fn report(runs: u32, _out: &Path) -> anyhow::Result<Report> {
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for case in [Case::Jittery, Case::Burst, Case::Slow] {
        let mut f = Figures::default();
        for n in 1..=runs {
            f.add(&run(case, &format!("concurrency-{}-{n}", case as u8)).await?);
        }
        rows.push(vec![
            case.label().to_owned(),
            range(&f.payments, 0),
            range(&f.approved, 0),
            range(&f.limited, 0),
            range(&f.other, 0),
            format!("{} / {}", range(&f.limit_median, 0), range(&f.limit_max, 0)),
            range(&f.waiting_max, 0),
        ]);
        let name = case.label().split(':').next().unwrap_or_default();
        let mut note = format!(
            "Acceptance ({name}): no call refused by the limit — CONCURRENCY_LIMITED {} \
             per run: {}.",
            range(&f.limited, 0),
            verdict(f.none_limited())
        );
        match case {
            Case::Burst => note.push_str(&format!(
                " Among the burst's 50: CONCURRENCY_LIMITED {} (must be 0): {}; the \
                 burst's p95 {} ms.",
                range(&f.burst_limited, 0),
                verdict(f.burst_limited.iter().all(|n| *n == 0.0)),
                range(&f.burst_p95, 0)
            )),
            Case::Slow => note.push_str(&format!(
                " The breaker stays CLOSED (no transition): {}.",
                verdict(f.transitions.iter().all(|t| t == "none"))
            )),
            Case::Jittery => {}
        }
        notes.push(note);
        notes.push(format!(
            "{name}: other outcomes over the {runs} runs (HTTP status, outcome: count): {}. \
             Breaker transitions per run: {}.",
            f.others_text(),
            f.transitions.join(" | ")
        ));
    }
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "8. Is the concurrency limit a second breaker? (issue 36)",
        setup: format!(
            "Three loads a healthy PG carries, each run {runs} times on a fresh origin and \
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
             over those samples. \"Other failures\": payments neither APPROVED nor \
             CONCURRENCY_LIMITED. Breaker transitions as `/admin/guard` lists them after \
             the run."
        ),
        seed: Table {
            header: vec!["—"],
            rows: vec![vec![
                "not in the seed: its guard had no concurrency limit".into()
            ]],
        },
        ours: Table {
            header: vec![
                "case",
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
