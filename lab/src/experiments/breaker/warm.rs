//! Experiment 3 after a warm-up: the PG healthy (0–300 ms) for 30 s first, so the
//! concurrency limit has learned a level above its floor when the stall begins, and
//! "back to normal" is measured against that level.

use std::path::Path;
use std::time::Duration;

use super::{header, run_variants, Variant, SECONDS};
use crate::experiments::{Report, Table};

const WARM_UP: Duration = Duration::from_secs(30);

fn variants() -> Vec<Variant> {
    vec![
        Variant {
            label: "on, limit on, 30 s healthy first",
            chart: "breaker-warm-on",
            env: Vec::new(),
            enabled: true,
            limit: true,
            whole_pg: false,
            warm_up: WARM_UP,
        },
        Variant {
            label: "on, limit off, 30 s healthy first",
            chart: "breaker-warm-limit-off",
            env: vec![("GATEWAY_CONCURRENCY", "off".to_owned())],
            enabled: true,
            limit: false,
            whole_pg: false,
            warm_up: WARM_UP,
        },
    ]
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let (rows, notes, charts) = run_variants(variants(), runs, out).await?;
    let warm = WARM_UP.as_secs();
    let (stall, healthy) = (warm, warm + 40);
    Ok(Report {
        runtime: crate::experiments::ORIGIN_DIRECT,
        title: "3b. The breaker's outage after a healthy warm-up: what has the limit learned?",
        setup: format!(
            "Experiment 3 with a healthy start: the PG answers confirms after 0–300 ms \
             (`DELAY`, `delayMs` 0, `jitterMs` 300, uniform) for {warm} s, then after 6 s for \
             40 s (from +{stall} s), then after 0–300 ms again; 10 payments/s and 5 unrelated \
             reads/s for {} s. Origin defaults as in experiment 3 (the limit adaptive between \
             2 and 50, at most 2 s waiting for a slot; slow at 1 s); \"limit off\" sets \
             `GATEWAY_CONCURRENCY=off`. In experiment 3 the stall begins at +0 s, before the \
             limit has learned anything, so it stays at its floor of 2 throughout; here it \
             has learned the healthy PG's level first. The limit is read from `/admin/guard` \
             every 100 ms; its learned level is its median over the 5 s before the stall \
             (its last read before the stall beside it), and \"back\" is the time from CLOSED \
             after the recovery at +{healthy} s until it first reads that level or more.",
            warm + SECONDS
        ),
        seed: Table {
            header: vec!["—"],
            rows: vec![vec![
                "not in the seed (its experiment 3 stalls from the start: UNKNOWN 46–83)".into(),
            ]],
        },
        ours: Table {
            header: header(true),
            rows,
        }
        .into(),
        notes,
        charts,
    })
}
