//! The approval guard's concurrency limit through a run, read from `/admin/guard` every
//! [`EVERY`]: how soon after the PG recovers the limit is back at its healthy level.

use std::time::{Duration, Instant};

use crate::stack::Stack;

const EVERY: Duration = Duration::from_millis(100);

/// `(seconds since the run's start, the limit)`, one a read.
pub type Limits = Vec<(f64, f64)>;

/// Reads the limit from `start` until `until` has passed; a failed read leaves a gap.
pub async fn sample(stack: &Stack, start: Instant, until: Duration) -> Limits {
    let mut limits = Vec::new();
    let mut tick = tokio::time::interval(EVERY);
    while start.elapsed() < until {
        tick.tick().await;
        let Ok(guard) = stack.operator_get("/admin/guard").await else {
            continue;
        };
        if let Some(limit) = guard["concurrency"]["limit"].as_f64() {
            limits.push((start.elapsed().as_secs_f64(), limit));
        }
    }
    limits
}

/// The limit's median over `[from, to)` s: its healthy level, taken once the PG is well.
pub fn median(limits: &Limits, from: f64, to: f64) -> Option<f64> {
    let mut within: Vec<f64> = limits
        .iter()
        .filter(|(at, _)| (from..to).contains(at))
        .map(|(_, limit)| *limit)
        .collect();
    within.sort_by(f64::total_cmp);
    within.get(within.len() / 2).copied()
}

/// Seconds from `from` until the limit first read `level` or more.
pub fn back_at(limits: &Limits, from: f64, level: f64) -> Option<f64> {
    limits
        .iter()
        .find(|(at, limit)| *at >= from && *limit >= level)
        .map(|(at, _)| at - from)
}
