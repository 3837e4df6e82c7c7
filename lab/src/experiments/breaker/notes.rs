//! Experiment 3's notes: the acceptance checks and where the UNKNOWNs came from, for
//! one configuration with the breaker on.

use super::{Figures, Variant, BACK_TO_NORMAL_S, PROBES, UNKNOWN_BOUND};
use crate::experiments::verdict;
use crate::stats::range;

/// The transitions of each run, the acceptance checks, and the account of the UNKNOWNs.
pub(super) fn breaker(variant: &Variant, f: &Figures) -> Vec<String> {
    let (label, limited) = (variant.label, variant.limit);
    let recovered = (variant.warm_up + super::OUTAGE).as_secs_f64();
    let mut notes: Vec<String> = f
        .timelines
        .iter()
        .enumerate()
        .map(|(run, timeline)| {
            format!(
                "Breaker {label}, run {} transitions (PG healthy again at +{recovered:.1} s): \
                 {timeline}.",
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
        let level = match variant.warm_up.is_zero() {
            true => "healthy level",
            false => "level learned before the stall",
        };
        acceptance.push_str(&format!(
            " UNKNOWN ≤ 5 per run (issue 36) — UNKNOWN {} with {} half-open cycles: {}. The \
             limit back at its {level} ({}) within {BACK_TO_NORMAL_S:.0} s of CLOSED: {} s: \
             {}.",
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
    if !variant.warm_up.is_zero() {
        notes.push(per_run(label, limited, f));
    }
    let probes_only = f
        .unknown_after_open
        .iter()
        .zip(&f.half_open_cycles)
        .all(|(after, cycles)| *after <= PROBES.min(*cycles));
    let first_second = match (limited, variant.warm_up.is_zero()) {
        (true, true) => "the limit, still at its floor of 2 (nothing learned yet), lets 2 \
             out and makes the rest wait; the calls waiting count as traffic towards the \
             breaker's 10 min calls, so it opens at the first slow call, 1 s in, and refuses \
             the line unsent (`CIRCUIT_OPEN`)"
            .to_owned(),
        (true, false) => format!(
            "the limit stood at {} (last read) when the stall began; it lets that many out, \
             and more while answers sent before the stall still come back healthy and raise \
             it to Little's figure for the calls offered (the design's known cost: a wave \
             then can send up to ~10); the rest wait, counted as traffic towards the \
             breaker's 10 min calls, so it opens at the first slow call, 1 s in, and refuses \
             the line unsent (`CIRCUIT_OPEN`)",
            range(&f.limit_at_stall, 0)
        ),
        (false, _) => "every call of that second is sent before the first is judged slow and \
             the breaker opens, once 10 have been sent (min calls)"
            .to_owned(),
    };
    notes.push(format!(
        "Where the UNKNOWNs come from (breaker {label}): no answer comes back before the 3 s \
         timeout, but a call still out at the 1 s slow-call threshold counts as slow from then \
         on; {first_second} — {} UNKNOWN were sent before it first opened. Once open, the \
         breaker's first probe is a look-up of an order that cannot exist: it passes while \
         only the confirms stall, and the half-open cycle then lets one payment through, \
         re-opened by it at the threshold. That payment went unanswered, so every later probe \
         until the breaker closes is a confirm of a payment that cannot exist (`probe-…`, \
         which the simulator refuses `NOT_FOUND_PAYMENT` once its fault mode has taken its \
         time): unanswered within the threshold while the confirms stall, it keeps the \
         breaker open and no payment is sent — {} half-open cycles before the PG recovered; \
         when the look-ups stall too, no cycle begins and no payment is sent. {} UNKNOWN were \
         sent after it first opened, at most one in every run: {}.",
        range(&f.unknown_before_open, 0),
        range(&f.half_open_cycles, 0),
        range(&f.unknown_after_open, 0),
        if probes_only { "yes" } else { "**no**" },
    ));
    notes
}

/// Each run's UNKNOWNs, and with the limit what it had learned and how soon it was back.
fn per_run(label: &str, limited: bool, f: &Figures) -> String {
    let runs: Vec<String> = (0..f.unknown.len())
        .map(|run| {
            let mut text = format!(
                "run {}: UNKNOWN {} ({} / {})",
                run + 1,
                f.unknown[run],
                f.unknown_before_open[run],
                f.unknown_after_open[run]
            );
            if limited {
                let at = |values: &[f64]| values.get(run).map_or("—".into(), |v| format!("{v}"));
                let back = f.limit_back.get(run).copied().flatten();
                text.push_str(&format!(
                    ", limit learned {} (last read {}), back {}",
                    at(&f.healthy_limit),
                    at(&f.limit_at_stall),
                    back.map_or("never in the run".into(), |s| format!(
                        "{s:.1} s after CLOSED"
                    ))
                ));
            }
            text
        })
        .collect();
    format!("Per run (breaker {label}): {}.", runs.join("; "))
}
