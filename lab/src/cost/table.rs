//! The cost table, as `docs/edge-cost.md` shows it: each route's figures and its CPU
//! time per request as ratios to `/healthz` and to the baseline Worker's object call.

use std::fmt::Write as _;
use std::path::Path;

use super::measure::{Measured, CONCURRENCY};

pub struct Row {
    name: String,
    /// On the baseline Worker, not the edge.
    baseline: bool,
    measured: Measured,
}

impl Row {
    pub fn baseline(name: impl Into<String>, measured: Measured) -> Self {
        Self {
            name: name.into(),
            baseline: true,
            measured,
        }
    }

    pub fn edge(name: impl Into<String>, measured: Measured) -> Self {
        Self {
            name: name.into(),
            baseline: false,
            measured,
        }
    }
}

#[derive(Default)]
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    pub fn push(&mut self, row: Row) {
        println!(
            "{}: {:.0} µs CPU/request, {:.0}/s ({})",
            row.name,
            row.measured.cpu_us(),
            row.measured.per_second(),
            row.measured.answers()
        );
        self.rows.push(row);
    }

    fn cpu_of(&self, name_starts: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|row| row.name.starts_with(name_starts))
            .map(|row| row.measured.cpu_us())
    }

    /// The page: how it was measured, then the table.
    pub fn markdown(&self, workerd: &str, edge_build: Option<&Path>) -> String {
        let healthz = self.cpu_of("GET /healthz").unwrap_or(f64::NAN);
        let object = self
            .cpu_of("baseline: one call to an object that does nothing")
            .unwrap_or(f64::NAN);
        let build = edge_build.map_or_else(
            || "the edge as `scripts/build-edge` builds it (`build/`)".to_owned(),
            |dir| format!("the edge build in `{}`", dir.display()),
        );
        let mut text = format!(
            "# What each request costs the edge\n\n\
             Reproduce: `cargo run --release -p lab -- cost` (about five minutes; it starts and \
             stops its own processes on loopback and rewrites this page).\n\n\
             **Runtime**: {build} under `workerd serve` ({workerd}, from node_modules), one \
             process per configuration, Durable Objects SQLite-backed with their files on tmpfs \
             (`/dev/shm`: ten thousand users make ten thousand session objects, and on disk \
             creating their files, not the Worker, set the pace); the baselines in a workerd of their own running `benches/baseline-worker` (the same \
             workers-rs and wasm-bindgen); the origin (SQLite) and the gateway simulator as \
             release builds; the lab's client on the same 2-core machine, {CONCURRENCY} \
             requests at once in a closed loop, each workerd warmed by 3,000 requests to its \
             `/healthz` (or the baseline's `/`) when it starts — V8 compiles the hot wasm \
             meanwhile, and the first thousands cost twice what the next do — and each row \
             after a warm-up of its own kind.\n\n\
             **CPU/request** is workerd's CPU time (all its threads, `/proc`) over the row's \
             requests divided by their number: the figure that holds steady on a shared \
             machine. Worker and objects run in the one workerd process, so it includes the \
             objects' work. Ratios are to `GET /healthz` of the edge and to the baseline's call \
             to an object that does nothing, measured in the same run. *From memory* is how \
             many the edge's isolate refused without any object call (its `/healthz` counts them).\n\n\
             | route | answers | requests/s | p50 ms | p99 ms | CPU/request µs | × /healthz | × no-op object | from memory |\n\
             |---|---|---|---|---|---|---|---|---|\n"
        );
        for row in &self.rows {
            let m = &row.measured;
            let from_memory = match m.from_memory {
                Some(count) if !row.baseline => format!("{count} of {}", m.requests()),
                _ => "—".into(),
            };
            let _ = writeln!(
                text,
                "| {} | {} | {:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} | {from_memory} |",
                row.name,
                m.answers(),
                m.per_second(),
                m.p50_ms(),
                m.p99_ms(),
                m.cpu_us(),
                m.cpu_us() / healthz,
                m.cpu_us() / object,
            );
        }
        text
    }
}
