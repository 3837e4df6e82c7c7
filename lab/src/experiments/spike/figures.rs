//! One configuration's figures over its runs, and the report's table of them.

use super::client::{Hit, Kind};
use super::{is_success, Run};
use crate::experiments::GUARD_REFUSALS;
use crate::load::Sample;
use crate::stats::{percentile_ms, range};

pub(super) const HEADER: [&str; 15] = [
    "flow control",
    "requests",
    "success p95",
    "login p95",
    "enter p95",
    "status p95",
    "approved-confirm p95",
    "429 (shed)",
    "refused from memory (share)",
    "5xx (share)",
    "no answer",
    "payments approved",
    "PG 429s",
    "FAILED: PG 429 / guard",
    "UNKNOWN",
];

/// A confirm the origin recorded FAILED for the PG's refusal of it: its 429 here.
const FAILED_AT_PG: &str = "FAILED:GATEWAY_REJECTED";

/// One configuration's figures over its runs, one value a run (the p95s: `None` for a run
/// without such a success).
#[derive(Default)]
pub(super) struct Figures {
    pub(super) requests: Vec<f64>,
    pub(super) p95: Vec<f64>,
    pub(super) p95_by_kind: [Vec<Option<f64>>; 4],
    pub(super) shed: Vec<f64>,
    pub(super) from_memory: Vec<f64>,
    pub(super) from_memory_share: Vec<f64>,
    pub(super) server_errors: Vec<f64>,
    pub(super) server_error_share: Vec<f64>,
    pub(super) no_answer: Vec<f64>,
    pub(super) approved: Vec<f64>,
    /// Confirms the simulator refused at a full line; `None` when it could not say.
    pub(super) pg_refused: Vec<Option<f64>>,
    /// The PG's own p95 service time, in ms; `None` when it could not say.
    pub(super) pg_service_p95: Vec<Option<f64>>,
    pub(super) failed_at_pg: Vec<f64>,
    pub(super) failed_by_guard: Vec<f64>,
    pub(super) unknown: Vec<f64>,
    pub(super) edge_probe_p95: Vec<f64>,
    pub(super) origin_probe_p95: Vec<f64>,
    pub(super) workerd_busy: Vec<f64>,
}

impl Figures {
    pub(super) fn add(&mut self, run: &Run) {
        let hits = &run.hits;
        let successes: Vec<&Hit> = hits.iter().filter(|hit| is_success(hit)).collect();
        let samples = |kind: Option<Kind>| -> Vec<&Sample> {
            successes
                .iter()
                .filter(|hit| kind.is_none_or(|kind| hit.kind == kind))
                .map(|hit| &hit.sample)
                .collect()
        };
        let status = |wanted: fn(u16) -> bool| {
            hits.iter().filter(|hit| wanted(hit.sample.status)).count() as f64
        };
        let confirms = |wanted: &dyn Fn(&str) -> bool| {
            hits.iter()
                .filter(|hit| hit.kind == Kind::Confirm && wanted(&hit.sample.outcome))
                .count() as f64
        };
        let total = hits.len() as f64;
        let share = |count: f64| {
            if total > 0.0 {
                100.0 * count / total
            } else {
                0.0
            }
        };
        self.requests.push(total);
        self.p95.push(percentile_ms(&samples(None), 95.0));
        for (index, kind) in Kind::ALL.into_iter().enumerate() {
            let of_kind = samples(Some(kind));
            self.p95_by_kind[index]
                .push((!of_kind.is_empty()).then(|| percentile_ms(&of_kind, 95.0)));
        }
        self.shed.push(status(|s| s == 429));
        if let Some(count) = run.from_memory {
            self.from_memory.push(count as f64);
            self.from_memory_share.push(share(count as f64));
        }
        let errors = status(|s| s >= 500);
        self.server_errors.push(errors);
        self.server_error_share.push(share(errors));
        self.no_answer.push(status(|s| s == 0));
        self.approved
            .push(confirms(&|outcome| outcome == "APPROVED"));
        self.pg_refused
            .push(run.pg_refused.map(|count| count as f64));
        self.pg_service_p95
            .push(run.pg_service_p95.map(|ms| ms as f64));
        self.failed_at_pg
            .push(confirms(&|outcome| outcome == FAILED_AT_PG));
        self.failed_by_guard
            .push(confirms(&|outcome| GUARD_REFUSALS.contains(&outcome)));
        self.unknown.push(confirms(&|outcome| outcome == "UNKNOWN"));
        let p95 = |probe: &[Sample]| percentile_ms(&probe.iter().collect::<Vec<_>>(), 95.0);
        self.edge_probe_p95.push(p95(&run.edge_probe));
        self.origin_probe_p95.push(p95(&run.origin_probe));
        self.workerd_busy.extend(run.workerd_busy);
    }

    /// Each run's p95 of approved confirms.
    pub(super) fn approved_p95(&self) -> &[Option<f64>] {
        &self.p95_by_kind[Kind::Confirm as usize]
    }

    /// Each run's p95 of enters.
    pub(super) fn enter_p95(&self) -> &[Option<f64>] {
        &self.p95_by_kind[Kind::Enter as usize]
    }

    /// The probes' p95, for the notes.
    pub(super) fn probes(&self, label: &str) -> String {
        format!(
            "{label}: edge (workerd) p95 {} ms, origin p95 {} ms, workerd busy {} % of one \
             core from the first client to the last answer",
            range(&self.edge_probe_p95, 1),
            range(&self.origin_probe_p95, 1),
            range(&self.workerd_busy, 0)
        )
    }

    pub(super) fn row(&self, label: &str) -> Vec<String> {
        let ms = |values: &[f64]| {
            if values.is_empty() {
                "—".to_owned()
            } else {
                format!("{} ms", range(values, 1))
            }
        };
        let known = |values: &[Option<f64>]| values.iter().flatten().copied().collect::<Vec<_>>();
        let mut row = vec![label.to_owned(), range(&self.requests, 0), ms(&self.p95)];
        row.extend(self.p95_by_kind.iter().map(|values| ms(&known(values))));
        let from_memory = if self.from_memory.is_empty() {
            "—".to_owned()
        } else {
            format!(
                "{} ({} %)",
                range(&self.from_memory, 0),
                range(&self.from_memory_share, 1)
            )
        };
        row.extend([
            range(&self.shed, 0),
            from_memory,
            format!(
                "{} ({} %)",
                range(&self.server_errors, 0),
                range(&self.server_error_share, 2)
            ),
            range(&self.no_answer, 0),
            range(&self.approved, 0),
            range(&known(&self.pg_refused), 0),
            format!(
                "{} / {}",
                range(&self.failed_at_pg, 0),
                range(&self.failed_by_guard, 0)
            ),
            range(&self.unknown, 0),
        ]);
        row
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn hit(kind: Kind, status: u16, ms: u64, outcome: &str) -> Hit {
        Hit {
            kind,
            sample: Sample {
                seq: 0,
                sent_at: Duration::ZERO,
                latency: Duration::from_millis(ms),
                status,
                outcome: outcome.into(),
            },
        }
    }

    #[test]
    fn figures_count_shed_and_server_errors_apart() {
        let mut figures = Figures::default();
        figures.add(&Run {
            hits: vec![
                hit(Kind::Confirm, 201, 10, "APPROVED"),
                hit(Kind::Confirm, 429, 1, "RATE_LIMITED"),
                hit(Kind::Enter, 200, 5, "OK"),
                hit(Kind::Enter, 503, 900, "BUSY"),
            ],
            ..Run::default()
        });
        assert_eq!(figures.shed, [1.0]);
        assert_eq!(figures.server_errors, [1.0]);
        assert_eq!(figures.server_error_share, [25.0]);
        assert_eq!(figures.approved, [1.0]);
        assert!(figures.from_memory.is_empty(), "the edge did not say");
        // Only successes count towards the latency.
        assert_eq!(figures.p95, [10.0]);
        assert_eq!(figures.p95_by_kind[Kind::Status as usize], [None]);
    }

    #[test]
    fn a_confirm_succeeds_only_approved_and_failures_are_told_apart() {
        let mut figures = Figures::default();
        figures.add(&Run {
            hits: vec![
                hit(Kind::Confirm, 201, 700, "APPROVED"),
                hit(Kind::Confirm, 201, 2_000, FAILED_AT_PG),
                hit(Kind::Confirm, 201, 3, "FAILED:CIRCUIT_OPEN"),
                hit(Kind::Confirm, 202, 3_000, "UNKNOWN"),
                hit(Kind::Enter, 200, 20, "OK"),
            ],
            pg_refused: Some(1),
            ..Run::default()
        });
        assert_eq!(figures.approved_p95(), [Some(700.0)]);
        assert_eq!(
            figures.p95,
            [700.0],
            "the 2xx that sold nothing are no success"
        );
        assert_eq!(figures.failed_at_pg, [1.0]);
        assert_eq!(figures.failed_by_guard, [1.0]);
        assert_eq!(figures.unknown, [1.0]);
        assert_eq!(figures.pg_refused, [Some(1.0)]);
    }
}
