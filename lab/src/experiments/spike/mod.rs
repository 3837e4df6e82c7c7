//! Seed 004's spike — 0 → 150 concurrent clients in 10 s through the edge, each buying
//! in a loop (log in once; then enter the event's queue, poll until admitted, confirm a
//! payment, again), with flow control off and on. What the successful requests' latency
//! and the 5xx did; 429s are counted apart, as intended shedding, not failures.
//!
//! The edge runs under `workerd serve` ([`Edge`]), the origin and the simulator as
//! release builds ([`Stack`]). Clients pause only when the edge says so (`Retry-After`,
//! `pollAfterSeconds`), so with no control they press as hard as the stack lets them.

mod chart;
mod client;
mod figures;

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use super::{verdict, Report, Table};
use crate::edge::Edge;
use crate::load::Sample;
use crate::stack::Stack;
use crate::stats::range;
use client::{Client, Hit};
use figures::{Figures, HEADER};

const CLIENTS: usize = 150;
const RAMP: Duration = Duration::from_secs(10);
const HOLD: Duration = Duration::from_secs(20);
/// The event every client buys; gated when flow control is on.
const EVENT: &str = "spike-drop";
/// The event's stock at the origin: more than the run can sell, so no confirm is refused
/// for it.
const STOCK: u32 = 1_000_000;
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

/// What one run recorded: every client request, and the `/healthz` probes, which
/// show how long a request waits in each process before anything is done for it.
#[derive(Default)]
struct Run {
    hits: Vec<Hit>,
    edge_probe: Vec<Sample>,
    origin_probe: Vec<Sample>,
    /// The share of one core workerd used over the run, in percent.
    workerd_busy: Option<f64>,
    /// How many requests the edge refused from its isolate's memory (its `/healthz`).
    from_memory: Option<u64>,
}

/// One side of the comparison: the edge's and the origin's variables.
struct Control {
    label: &'static str,
    edge: Vec<(&'static str, String)>,
    origin: Vec<(&'static str, String)>,
}

fn controls() -> [Control; 2] {
    [
        Control {
            label: "off",
            // The event's queue exists only if defined: here by `GATED_EVENTS`, with
            // everyone admitted at once, so its gate never holds anyone back.
            edge: vec![
                ("RATE_LIMITED_ROUTES", "none".into()),
                ("GATED_EVENTS", EVENT.into()),
                ("QUEUE_ADMIT_LIMIT", "1000000".into()),
            ],
            // The seed's "before": a connection waited for 30 s, threads unbounded.
            origin: vec![
                ("DB_ACQUIRE_TIMEOUT_MS", "30000".into()),
                ("ORIGIN_MAX_CONCURRENT_REQUESTS", "100000".into()),
            ],
        },
        Control {
            label: "on",
            // Everything else at the project's defaults.
            edge: vec![("GATED_EVENTS", EVENT.into())],
            origin: Vec::new(),
        },
    ]
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<Report> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut last_runs = Vec::new();
    let mut probes = Vec::new();
    let mut all = Vec::new();
    for control in controls() {
        let mut figures = Figures::default();
        let mut last = Run::default();
        for run in 1..=runs {
            let result = run_once(&control, run).await?;
            figures.add(&result);
            last = result;
        }
        if control.label == "on" {
            let worst = |values: &[f64]| values.iter().copied().fold(0.0, f64::max);
            let (errors, unanswered) = (worst(&figures.server_errors), worst(&figures.no_answer));
            notes.push(format!(
                "Acceptance (flow control on): no 5xx — worst run {errors:.0}: {} \
                 (requests without any answer, counted apart: at most {unanswered:.0}).",
                verdict(errors == 0.0)
            ));
        }
        rows.push(figures.row(control.label));
        probes.push(figures.probes(control.label));
        last_runs.push((control.label, last));
        all.push(figures);
    }
    if let [off, on] = all.as_slice() {
        notes.push(direction(off, on));
        notes.push(comparison(off, on));
    }
    notes.push(format!(
        "Where the time goes — `GET /healthz` sent every {} ms during each run, answered \
         before any work (no token, no object, no database), so its latency is the wait \
         inside the process: {}.",
        PROBE_EVERY.as_millis(),
        probes.join("; ")
    ));
    notes.push(seed_reading());
    notes.push(runtime_note());
    chart::write(out, &last_runs)?;
    Ok(Report {
        runtime: "the edge under `workerd serve` (not `wrangler dev`), the origin and the \
            gateway simulator as release builds, all on loopback",
        title: "6. Spike: 0 → 150 clients in 10 s through the edge, flow control off and on",
        setup: setup(),
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
        ours: Table {
            header: HEADER.to_vec(),
            rows,
        },
        notes,
        charts: vec!["spike.svg".into()],
    })
}

fn setup() -> String {
    let seconds = (RAMP + HOLD).as_secs();
    format!(
        "{CLIENTS} clients start evenly over {ramp} s and run until {seconds} s ({hold} s at \
         {CLIENTS}); then no new request is sent and those in flight are awaited. Each client \
         logs in once (`POST /auth/login`, the origin checks the argon2id hash), then loops: \
         `POST /queue/{EVENT}/enter`, `GET /queue/{EVENT}/status` every `pollAfterSeconds` \
         until admitted, `POST /payments/confirm` (5,000 won, `eventId` {EVENT}, its own \
         `Idempotency-Key`). It waits only where the edge says so: `Retry-After` on a 429 or \
         503 (then repeats the step; a confirm with the same key), `pollAfterSeconds` while \
         queued, 1 s after any other failure. The PG answers at once (simulator `NORMAL`); \
         the event's stock at the origin ({STOCK}) never runs out. A fresh stack, edge and \
         {CLIENTS} users \
         per run.\n\n\
         **Flow control off**: edge `RATE_LIMITED_ROUTES=none`, `GATED_EVENTS={EVENT}` \
         (an event's queue exists only once defined) with `QUEUE_ADMIT_LIMIT=1000000` \
         (everyone admitted at once, so the gate holds nobody back); origin \
         `DB_ACQUIRE_TIMEOUT_MS=30000` and `ORIGIN_MAX_CONCURRENT_REQUESTS=100000` (the \
         seed's 30 s connection wait and unbounded threads). **On**: the project's defaults — \
         `RATE_LIMIT_USER=5/1s` and `RATE_LIMIT_GLOBAL=100/1s` on `POST /payments/confirm` \
         and `POST /queue/*/enter`, `GATED_EVENTS={EVENT}` with `QUEUE_ADMIT_LIMIT=100`, and \
         the origin's fail-fast defaults (`DB_ACQUIRE_TIMEOUT_MS=3000`, \
         `ORIGIN_MAX_CONCURRENT_REQUESTS=256`). The PG guard is at its defaults in both.\n\n\
         Success = a 2xx answer; p95 over the successful requests of the whole run. 429s \
         (`RATE_LIMITED`, `QUEUE_PASS_REQUIRED`) are shed, counted apart; *refused from \
         memory* is how many of them the edge's isolate refused without any object call, \
         as its `/healthz` counts them, and their share of every request sent; the 5xx share is \
         of every request sent; \"no answer\" is a refused connection or a client timeout \
         ({timeout} s).",
        ramp = RAMP.as_secs(),
        hold = HOLD.as_secs(),
        timeout = REQUEST_TIMEOUT.as_secs(),
    )
}

/// The acceptance check on the direction: control must not make the successful requests
/// slower, on the means over runs; the ranges are given, since they may overlap.
fn direction(off: &Figures, on: &Figures) -> String {
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    let (before, after) = (mean(&off.p95), mean(&on.p95));
    format!(
        "Acceptance (direction): success p95 with flow control on ≤ off, means over runs — \
         on {after:.1} ms, off {before:.1} ms: {} (runs: on {} ms, off {} ms).",
        verdict(after <= before),
        range(&on.p95, 1),
        range(&off.p95, 1),
    )
}

/// The seed's p95 drop beside ours, and why ours is what it is.
fn comparison(off: &Figures, on: &Figures) -> String {
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    let (before, after) = (mean(&off.p95), mean(&on.p95));
    let seconds = (RAMP + HOLD).as_secs_f64();
    let change = if after <= before {
        format!("{:.1}× lower", before / after.max(f64::EPSILON))
    } else {
        format!("{:.1}× higher", after / before.max(f64::EPSILON))
    };
    let head = format!(
        "Success p95, off → on: seed 737.81 → 52.01 ms (14.2× lower); ours {} → {} ms \
         ({change}, means over runs).",
        range(&off.p95, 1),
        range(&on.p95, 1),
    );
    let where_waited = format!(
        "The origin was not where requests waited (its `/healthz` p95 {} ms off, {} ms on); \
         the edge, workerd on one thread for the Worker and every object, was (p95 {} ms \
         off, {} ms on). Flow control keeps load off the origin — about {:.0} approved \
         confirms/s reached it without control, {:.0}/s with it.",
        range(&off.origin_probe_p95, 1),
        range(&on.origin_probe_p95, 1),
        range(&off.edge_probe_p95, 1),
        range(&on.edge_probe_p95, 1),
        mean(&off.approved) / seconds,
        mean(&on.approved) / seconds,
    );
    if after <= before / 2.0 {
        return format!("{head} The drop is reproduced. {where_waited}");
    }
    if after <= before {
        return format!(
            "{head} The direction is reproduced — control lowers the p95 — but not the \
             seed's size. {where_waited} The seed's gain came from taking load off its \
             database; here the narrowest point is the local workerd, which both \
             configurations load: refusals from memory cost it almost nothing, but an \
             admitted request with control on makes more object calls than without (a \
             gated confirm four, an enter three; without control a confirm one, an enter two)."
        );
    }
    format!(
        "{head} The drop is **not reproduced** on this machine. {where_waited} Refusals \
         from memory cost the edge almost nothing, but an admitted request with control on \
         makes more object calls and more durable writes than without: a gated confirm \
         four calls, an enter three, each of the enter's writing (the user's window, the \
         route's global window, the room), and every admitted request of a route writes in \
         its one global object; without control a confirm makes one call and writes \
         nothing, an enter two calls and one write. workerd's thread is far from full \
         (busy share below), so these requests wait on the objects' writes reaching the \
         local disk — docs/edge-performance.md has a diagnostic run with the objects' \
         SQLite on tmpfs, where the direction is clear. The seed's database was the \
         narrowest point of its test; here it is the local disk under the objects."
    )
}

fn seed_reading() -> String {
    "The seed's 5xx went the other way from its p95: none without control, 113 (0.55 %) \
     with it — deadlocks of its outbox inserts under the fixed window's bursts at each \
     second's start — and 0.00 % once deadlocks were retried (p95 then 66 ms, and no \
     deadlock happened in that run): \"5xx 0.55 % → 0 %\". Our \
     SQLite takes one writer at a time and retries transient errors in every transaction, \
     and our limiter is a sliding window, so neither cause is present."
        .into()
}

fn runtime_note() -> String {
    let workerd = Edge::version().unwrap_or_else(|_| "workerd".into());
    format!(
        "Runtime of these figures: the edge under `workerd serve` ({workerd}, from \
         node_modules) with a configuration the lab generates from `build/` and \
         `wrangler.toml` (`harness/src/workerd/config.rs`), not under `wrangler dev`, whose Node.js proxy \
         in front of workerd costs most of its throughput; the origin (SQLite) and \
         the simulator as release builds; the lab's clients, workerd, the origin and the \
         simulator share one machine (2 cores) on loopback."
    )
}

fn is_success(sample: &Sample) -> bool {
    (200..300).contains(&sample.status)
}

/// One run of one configuration.
async fn run_once(control: &Control, run: u32) -> anyhow::Result<Run> {
    let stack = Stack::start(&control.origin).await?;
    stack.set_event(EVENT, STOCK, 5_000).await?;
    for client in 0..CLIENTS {
        stack.add_user(&user(client), PASSWORD)?;
    }
    let edge = Edge::start(&stack.origin, stack.edge_secret(), &control.edge).await?;
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
    Ok(Run {
        hits,
        edge_probe,
        origin_probe,
        workerd_busy,
        from_memory,
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
