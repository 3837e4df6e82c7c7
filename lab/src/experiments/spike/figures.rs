//! One configuration's figures over its runs, and the report's table of them.

use super::client::{Hit, Kind};
use super::{is_success, Run};
use crate::load::Sample;
use crate::stats::{percentile_ms, range};

pub(super) const HEADER: [&str; 12] = [
    "flow control",
    "requests",
    "success p95",
    "login p95",
    "enter p95",
    "status p95",
    "confirm p95",
    "429 (shed)",
    "refused from memory (share)",
    "5xx (share)",
    "no answer",
    "payments approved",
];

/// One configuration's figures over its runs.
#[derive(Default)]
pub(super) struct Figures {
    pub(super) requests: Vec<f64>,
    pub(super) p95: Vec<f64>,
    pub(super) p95_by_kind: [Vec<f64>; 4],
    pub(super) shed: Vec<f64>,
    pub(super) from_memory: Vec<f64>,
    pub(super) from_memory_share: Vec<f64>,
    pub(super) server_errors: Vec<f64>,
    pub(super) server_error_share: Vec<f64>,
    pub(super) no_answer: Vec<f64>,
    pub(super) approved: Vec<f64>,
    pub(super) edge_probe_p95: Vec<f64>,
    pub(super) origin_probe_p95: Vec<f64>,
    pub(super) workerd_busy: Vec<f64>,
}

impl Figures {
    pub(super) fn add(&mut self, run: &Run) {
        let hits = &run.hits;
        let successes: Vec<&Hit> = hits.iter().filter(|hit| is_success(&hit.sample)).collect();
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
        let total = hits.len() as f64;
        self.requests.push(total);
        self.p95.push(percentile_ms(&samples(None), 95.0));
        for (index, kind) in Kind::ALL.into_iter().enumerate() {
            let of_kind = samples(Some(kind));
            if !of_kind.is_empty() {
                self.p95_by_kind[index].push(percentile_ms(&of_kind, 95.0));
            }
        }
        self.shed.push(status(|s| s == 429));
        if let Some(count) = run.from_memory {
            let count = count as f64;
            self.from_memory.push(count);
            self.from_memory_share.push(if total > 0.0 {
                100.0 * count / total
            } else {
                0.0
            });
        }
        let errors = status(|s| s >= 500);
        self.server_errors.push(errors);
        self.server_error_share.push(if total > 0.0 {
            100.0 * errors / total
        } else {
            0.0
        });
        self.no_answer.push(status(|s| s == 0));
        self.approved.push(
            hits.iter()
                .filter(|hit| hit.kind == Kind::Confirm && hit.sample.outcome == "APPROVED")
                .count() as f64,
        );
        let p95 = |probe: &[Sample]| percentile_ms(&probe.iter().collect::<Vec<_>>(), 95.0);
        self.edge_probe_p95.push(p95(&run.edge_probe));
        self.origin_probe_p95.push(p95(&run.origin_probe));
        self.workerd_busy.extend(run.workerd_busy);
    }

    /// The probes' p95, for the notes.
    pub(super) fn probes(&self, label: &str) -> String {
        format!(
            "flow control {label}: edge (workerd) p95 {} ms, origin p95 {} ms, workerd busy \
             {} % of one core from the first client to the last answer",
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
        let mut row = vec![label.to_owned(), range(&self.requests, 0), ms(&self.p95)];
        row.extend(self.p95_by_kind.iter().map(|values| ms(values)));
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
        ]);
        row
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn figures_count_shed_and_server_errors_apart() {
        let hit = |kind, status, ms| Hit {
            kind,
            sample: Sample {
                seq: 0,
                sent_at: Duration::ZERO,
                latency: Duration::from_millis(ms),
                status,
                outcome: if status == 201 { "APPROVED" } else { "X" }.into(),
            },
        };
        let mut figures = Figures::default();
        figures.add(&Run {
            hits: vec![
                hit(Kind::Confirm, 201, 10),
                hit(Kind::Confirm, 429, 1),
                hit(Kind::Enter, 200, 5),
                hit(Kind::Enter, 503, 900),
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
        assert!(figures.p95_by_kind[Kind::Status as usize].is_empty());
    }
}
