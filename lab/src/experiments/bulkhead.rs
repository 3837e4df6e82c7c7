//! Experiment 5 — experiment 1's stall with only the bulkhead added (50 calls, no
//! waiting): PG calls in flight must never pass 50, and the unrelated API must not
//! notice.

use std::path::Path;

use super::isolation::{self, HEADER};
use super::{verdict, Report, Table};

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let figures = isolation::run(runs, out, "bulkhead", &[("50", 50)]).await?;
    let mut notes = Vec::new();
    for (_, figures) in &figures {
        let peak = figures.in_flight_peak_max();
        notes.push(format!(
            "Acceptance: PG calls in flight never above 50 (sampled every 250 ms) — peak \
             {peak:.0}: {}. Unrelated-read {}.",
            verdict(peak <= 50.0),
            figures.read_check()
        ));
    }
    Ok(Report {
        runtime: super::ORIGIN_DIRECT,
        title: "5. The bulkhead alone: is the collapse gone?",
        setup: isolation::setup(),
        seed: Table {
            header: vec![
                "runs",
                "payments sent to the PG",
                "BULKHEAD_FULL refusals",
                "read p95",
                "read failures",
                "collapse",
                "Tomcat busy max",
            ],
            rows: vec![vec![
                "1–3".into(),
                "150".into(),
                "601".into(),
                "9.5–10.2 ms".into(),
                "0".into(),
                "none".into(),
                "53 / 200".into(),
            ]],
        },
        ours: Table {
            header: HEADER.to_vec(),
            rows: figures.iter().map(|(label, f)| f.row(label)).collect(),
        }
        .into(),
        notes,
        charts: vec!["bulkhead-50.svg".into()],
    })
}
