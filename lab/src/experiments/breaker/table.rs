//! Experiment 3's table: its columns and a variant's row.

use super::{Figures, Variant};
use crate::stats::range;

/// A variant's row: with a warm-up, the limit learned before the stall as well.
pub(super) fn row(variant: &Variant, f: &Figures) -> Vec<String> {
    let back: Vec<f64> = f.back_to_closed.iter().flatten().copied().collect();
    let limit_back: Vec<f64> = f.limit_back.iter().flatten().copied().collect();
    let on = |text: String| if variant.enabled { text } else { "—".into() };
    let limited = |text: String| if variant.limit { text } else { "—".into() };
    let mut row = vec![
        variant.label.to_owned(),
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
        limited(format!(
            "{} s (limit {})",
            range(&limit_back, 1),
            range(&f.healthy_limit, 0)
        )),
    ];
    if !variant.warm_up.is_zero() {
        row.insert(
            6,
            limited(format!(
                "{} (last read {})",
                range(&f.healthy_limit, 0),
                range(&f.limit_at_stall, 0)
            )),
        );
    }
    row
}

/// Our table's columns; with a warm-up, the limit learned before the stall as well.
pub(super) fn header(warm_up: bool) -> Vec<&'static str> {
    let mut header = vec![
        "breaker, concurrency limit",
        "APPROVED",
        "FAILED (CIRCUIT_OPEN)",
        "FAILED (CONCURRENCY_LIMITED)",
        "UNKNOWN",
        "UNKNOWN sent before it first opened / after",
        "refused payments at the PG",
        "back to CLOSED after recovery",
        "limit back at its healthy level after CLOSED",
    ];
    if warm_up {
        header.insert(6, "limit learned before the stall: median of its last 5 s");
    }
    header
}
