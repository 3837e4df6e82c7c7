//! `spike.svg`, drawn from the last run of each configuration.

use std::path::Path;
use std::time::Duration;

use super::{is_success, Run, CLIENTS, HOLD, PROBE_EVERY, RAMP};
use crate::chart::{self, Panel, Series};
use crate::experiments::latency_series;
use crate::load::Sample;

/// `spike.svg`: clients over time, answers per second of each configuration, and the
/// successful requests' p95 per second, from the last run of each (`runs`: each with
/// its label).
pub(super) fn write(out: &Path, runs: &[(String, Run)]) -> anyhow::Result<()> {
    let seconds = (RAMP + HOLD).as_secs_f64();
    let clients = (0..=(seconds as u32 * 2))
        .map(|half| {
            let at = f64::from(half) / 2.0;
            let joined = (at / RAMP.as_secs_f64() * CLIENTS as f64).ceil();
            (at, Some(joined.min(CLIENTS as f64)))
        })
        .collect();
    let mut panels = vec![Panel {
        title: "Concurrent clients".into(),
        y_label: "clients".into(),
        series: vec![Series {
            name: "clients".into(),
            points: clients,
        }],
    }];
    let mut latency = Vec::new();
    let mut probes = Vec::new();
    for (label, run) in runs {
        let hits = &run.hits;
        let per_second = |wanted: fn(u16) -> bool, name: &str| Series {
            name: name.to_owned(),
            points: (0..seconds as usize)
                .map(|second| {
                    let count = hits
                        .iter()
                        .filter(|hit| hit.sample.sent_at.as_secs() as usize == second)
                        .filter(|hit| wanted(hit.sample.status))
                        .count();
                    (second as f64 + 0.5, Some(count as f64))
                })
                .collect(),
        };
        panels.push(Panel {
            title: format!("Answers per second sent, {label}"),
            y_label: "requests".into(),
            series: vec![
                per_second(|s| (200..300).contains(&s), "2xx"),
                per_second(|s| s == 429, "429 (shed)"),
                per_second(|s| s >= 500, "5xx"),
                per_second(|s| s == 0, "no answer"),
            ],
        });
        let successes: Vec<Sample> = hits
            .iter()
            .filter(|hit| is_success(hit))
            .map(|hit| hit.sample.clone())
            .collect();
        latency.push(latency_series(
            &format!("{label}: success"),
            &successes,
            Duration::from_secs(1),
            95.0,
        ));
        for (name, probe) in [("edge", &run.edge_probe), ("origin", &run.origin_probe)] {
            probes.push(Series {
                name: format!("{name}, {label} (ms)"),
                points: probe
                    .iter()
                    .map(|p| (p.sent_at.as_secs_f64(), Some(p.latency.as_secs_f64() * 1e3)))
                    .collect(),
            });
        }
    }
    panels.push(Panel {
        title: "Successful requests' latency by second sent (a confirm: approved)".into(),
        y_label: "ms".into(),
        series: latency,
    });
    panels.push(Panel {
        title: format!(
            "GET /healthz every {} ms: the wait inside each process",
            PROBE_EVERY.as_millis()
        ),
        y_label: "ms".into(),
        series: probes,
    });
    chart::write(
        &out.join("spike.svg"),
        "Spike: 0 → 150 clients in 10 s through the edge (workerd), last run of each",
        seconds,
        &panels,
    )
}
