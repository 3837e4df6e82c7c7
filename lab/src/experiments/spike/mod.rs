//! Seed 004's spike — 0 → 150 concurrent clients in 10 s through the edge, each buying
//! in a loop (log in once; then enter the event's queue, poll until admitted, confirm a
//! payment, again), with flow control off and on, before two PGs: one that saturates (a
//! capacity, a bounded line, 200–800 ms a confirm) and one that answers at once (the
//! edge's own overhead). What the successful requests' latency, the approved confirms',
//! the PG's 429s and the 5xx did; 429s at the edge are counted apart, as intended
//! shedding, not failures.
//!
//! The edge runs under `workerd serve` ([`Edge`]), the origin and the simulator as
//! release builds ([`Stack`]). Clients pause only when the edge says so (`Retry-After`,
//! `pollAfterSeconds`), so with no control they press as hard as the stack lets them.
//! The cases and the setup's wording are in `setup.rs`, the checks in `notes.rs`.

mod chart;
mod client;
mod figures;
mod notes;
mod setup;

use std::path::Path;
use std::time::{Duration, Instant};

use harness::ports::held_socket;
use tokio::task::JoinSet;

use super::{verdict, Ours, Report, Table};
use crate::edge::Edge;
use crate::load::Sample;
use crate::stack::Stack;
use client::{Client, Hit, Kind};
use figures::{Figures, HEADER};
use setup::{controls, Control, Pg};

const CLIENTS: usize = 150;
const RAMP: Duration = Duration::from_secs(10);
const HOLD: Duration = Duration::from_secs(20);
/// The event every client buys; gated when flow control is on.
const EVENT: &str = "spike-drop";
/// The event's stock at the origin: more than the run can sell, so no confirm is refused
/// for it.
const STOCK: u32 = 1_000_000;
const PRICE: i64 = 5_000;
const PASSWORD: &str = "spike-password";
/// A request unanswered this long is `CLIENT_TIMEOUT` (the edge gives the origin 10 s,
/// the origin ends every request within 30 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The pause after an answer that says nothing about when to come back.
const PAUSE: Duration = Duration::from_secs(1);
/// Connections idle longer are not reused: workerd closes idle connections on its own
/// schedule, and a request sent as it does gets no answer (a browser would resend it).
const POOL_IDLE: Duration = Duration::from_millis(500);
/// How often `/healthz` of the edge and of the origin is probed during a run.
const PROBE_EVERY: Duration = Duration::from_millis(250);

/// What one run recorded: every client request, the `/healthz` probes, which show how
/// long a request waits in each process before anything is done for it, and what the
/// PG refused.
#[derive(Default)]
struct Run {
    hits: Vec<Hit>,
    edge_probe: Vec<Sample>,
    origin_probe: Vec<Sample>,
    /// The share of one core workerd used over the run, in percent.
    workerd_busy: Option<f64>,
    /// How many requests the edge refused from its isolate's memory (its `/healthz`).
    from_memory: Option<u64>,
    /// How many confirms the simulator refused at a full line (its `/admin/capacity`).
    pg_refused: Option<u64>,
    /// The simulator's 95th percentile of the time a confirm held one of its slots: the
    /// PG's own service time, its line left out (its `/admin/capacity`).
    pg_service_p95: Option<u64>,
}

/// The spike, `runs` times for each PG and each side of flow control; `edge_build`: the
/// edge build it runs (`build/` when `None`).
pub async fn report(runs: u32, out: &Path, edge_build: Option<&Path>) -> anyhow::Result<Report> {
    let mut cases = Vec::new();
    let mut notes = Vec::new();
    let mut last_runs = Vec::new();
    let mut probes = Vec::new();
    for pg in Pg::ALL {
        let mut rows = Vec::new();
        let mut both = Vec::new();
        for control in controls() {
            let mut figures = Figures::default();
            let mut last = Run::default();
            for run in 1..=runs {
                let result = run_once(pg, &control, run, edge_build).await?;
                figures.add(&result);
                last = result;
            }
            rows.push(figures.row(control.label));
            let label = format!("{}, flow control {}", pg.name(), control.label);
            probes.push(figures.probes(&label));
            last_runs.push((label, last));
            both.push(figures);
        }
        if let [off, on] = both.as_slice() {
            notes.push(notes::acceptance(pg, off, on));
            notes.push(match pg {
                Pg::Saturating => notes::pg_refusals(),
                Pg::Instant => notes::comparison(off, on),
            });
        }
        let table = Table {
            header: HEADER.to_vec(),
            rows,
        };
        cases.push((pg.caption(), table));
    }
    notes.push(format!(
        "Where the time goes — `GET /healthz` sent every {} ms during each run, answered \
         before any work (no token, no object, no database), so its latency is the wait \
         inside the process: {}.",
        PROBE_EVERY.as_millis(),
        probes.join("; ")
    ));
    notes.push(notes::seed_reading());
    notes.push(notes::runtime_note());
    chart::write(out, &last_runs)?;
    Ok(Report {
        runtime: "the edge under `workerd serve` (not `wrangler dev`), the origin and the \
            gateway simulator as release builds, all on loopback",
        title: "6. Spike: 0 → 150 clients in 10 s through the edge, flow control off and on, \
            before a PG that saturates and an instant one",
        setup: setup::setup(),
        seed: Table {
            header: vec!["flow control", "success p95", "5xx", "429 (shed)"],
            rows: vec![
                vec![
                    "off (k6, 0 → 150 VUs in 10 s)".into(),
                    "737.81 ms (37 ms at rest)".into(),
                    "0".into(),
                    "—".into(),
                ],
                vec![
                    "on: limiter 5/1 s per user + 100/1 s, queue pass, fail fast".into(),
                    "52.01 ms".into(),
                    "113 (0.55 %)".into(),
                    "counted apart".into(),
                ],
                vec![
                    "on, after its deadlock retry (seed's next section)".into(),
                    "66 ms".into(),
                    "0.00 %".into(),
                    "counted apart".into(),
                ],
            ],
        },
        ours: Ours::Cases(cases),
        notes,
        charts: vec!["spike.svg".into()],
    })
}

/// A success: a 2xx answer, and for a confirm an approved payment — a 201 FAILED or a
/// 202 UNKNOWN sold nothing.
fn is_success(hit: &Hit) -> bool {
    (200..300).contains(&hit.sample.status)
        && (hit.kind != Kind::Confirm || hit.sample.outcome == "APPROVED")
}
/// One run of one configuration.
async fn run_once(
    pg: Pg,
    control: &Control,
    run: u32,
    edge_build: Option<&Path>,
) -> anyhow::Result<Run> {
    // The edge's address first: the origin hands it the drop's room.
    let socket = held_socket()?;
    let mut origin_env = control.origin.clone();
    origin_env.push(("EDGE_URL", format!("http://{}", socket.local_addr()?)));
    let stack = Stack::start(&origin_env).await?;
    stack.set_faults(pg.faults()).await?;
    stack.set_event(EVENT, STOCK, PRICE).await?;
    for client in 0..CLIENTS {
        stack.add_user(&user(client), PASSWORD)?;
    }
    let edge = Edge::start_on(
        socket,
        &stack.origin,
        stack.edge_secret(),
        &control.edge,
        edge_build,
    )
    .await?;
    if let Some(room) = pg.room().filter(|_| control.paces_room) {
        stack.set_drop(EVENT, STOCK, PRICE, room).await?;
    }
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(CLIENTS * 2)
        .pool_idle_timeout(POOL_IDLE)
        .timeout(REQUEST_TIMEOUT)
        .build()?;
    let cpu_before = edge.cpu_time();
    let start = Instant::now();
    let end = start + RAMP + HOLD;
    let mut clients = JoinSet::new();
    for index in 0..CLIENTS {
        let client = Client {
            http: http.clone(),
            edge: edge.url.clone(),
            user: user(index),
            orders: format!("spike-{}-{run}-{index}", control.label),
            start,
            end,
            hits: Vec::new(),
        };
        let joins_at = start + RAMP.mul_f64(index as f64 / CLIENTS as f64);
        clients.spawn(async move {
            tokio::time::sleep_until(joins_at.into()).await;
            client.run().await
        });
    }
    let (edge_probe, origin_probe) = tokio::join!(
        probe(&http, &edge.url, start, end),
        probe(&http, &stack.origin, start, end)
    );
    let mut hits = Vec::new();
    while let Some(done) = clients.join_next().await {
        hits.extend(done?);
    }
    hits.sort_by_key(|hit| hit.sample.sent_at);
    let workerd_busy = edge.cpu_time().zip(cpu_before).map(|(after, before)| {
        100.0 * (after - before).as_secs_f64() / start.elapsed().as_secs_f64()
    });
    let from_memory = edge.refused_from_memory().await;
    let capacity = stack.capacity().await?;
    Ok(Run {
        hits,
        edge_probe,
        origin_probe,
        workerd_busy,
        from_memory,
        pg_refused: capacity["refused"].as_u64(),
        pg_service_p95: capacity["serviceP95Ms"].as_u64(),
    })
}

/// `GET {base}/healthz` every [`PROBE_EVERY`] until `end`, one at a time.
async fn probe(http: &reqwest::Client, base: &str, start: Instant, end: Instant) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval_at(start.into(), PROBE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while tick.tick().await < end.into() {
        let sent = Instant::now();
        let status = match http.get(format!("{base}/healthz")).send().await {
            Ok(response) => response.status().as_u16(),
            Err(_) => 0,
        };
        samples.push(Sample {
            seq: samples.len() as u64,
            sent_at: sent.duration_since(start),
            latency: sent.elapsed(),
            status,
            outcome: String::new(),
        });
    }
    samples
}

fn user(index: usize) -> String {
    format!("spike{index}")
}
