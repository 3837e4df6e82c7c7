//! `lab cost`: what each route of the edge costs in workerd, beside baselines measured
//! in the same run — a minimal workers-rs Worker (`benches/baseline-worker`) with no
//! object, with one call to an object that does nothing, and with one call to an object
//! that writes one SQLite row — written to `docs/edge-cost.md` as ratios to them.
//!
//! Every row is a closed loop at [`CONCURRENCY`] requests at once against one workerd
//! process, after a warm-up of the same kind; its figure is workerd's CPU time per
//! request ([`measure`]). The edge runs three times, once per rate-limit setting a row
//! needs; the origin and the simulator behind it are release builds.

pub mod measure;
pub mod profile;
pub mod refusals;
mod table;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::edge::{token, Edge};
use crate::stack::Stack;
use measure::{closed_loop, Measured, CONCURRENCY};
use table::{Row, Table};

/// Requests per row (after its warm-up).
const REQUESTS: u64 = 3_000;
const WARM_UP: u64 = 200;
/// Requests that warm a workerd just started, before its first row: the first 3,000
/// `/healthz` cost about twice what the next do (211 µs against 99–128 in ten rounds),
/// V8 still compiling the hot wasm, and they were the `/healthz` row every ratio is to.
const ISOLATE_WARM_UP: u64 = 3_000;
/// People in the line the status poll is measured against.
const LINE: u64 = 10_000;
/// The line is built this many at a time, then [`SETTLE`] without a request. Locally
/// workerd runs every object of a class in one isolate, whose memory holds each live
/// object's SQLite, and every person in line is a session object of their own: entered
/// at once, a few thousand of them ran it out of memory (SQLite's `SQLITE_NOMEM`). An
/// object idle for about ten seconds is put away, so the line is built in steps.
const STEP: u64 = 2_000;
const SETTLE: Duration = Duration::from_secs(12);
/// The people of the line the rows after it send as, spread along it (their session
/// objects warmed up first, so no row measures an object's creation).
const SAMPLED: u64 = 200;
/// Confirms admitted go to the origin and the PG; fewer suffice.
const CONFIRMS: u64 = 1_500;
/// The gated event whose line is built; its first [`PASSES`] hold passes.
const LINE_EVENT: &str = "line";
/// The room's admission limit: the edge's default `QUEUE_ADMIT_LIMIT`.
const PASSES: u64 = 100;
/// An event the origin has no unit of.
const SOLD_OUT_EVENT: &str = "gone";
/// Users who buy, in turn.
const BUYERS: u64 = 16;

/// Limits no row reaches, so a row shows what the route costs when it is admitted. Kept
/// as low as that allows: the first round's windows reserved memory for their whole
/// limit, which a million a second per user would exhaust.
pub const OPEN_LIMITS: &str = "POST /payments/confirm user=1000/1s global=100000/1s, \
                           POST /queue/*/enter user=100/1s global=100000/1s";
const USER_WINDOW: &str = "POST /payments/confirm user=5/1s global=100000/1s";
const GLOBAL_WINDOW: &str = "POST /payments/confirm user=1000/1s global=1/10m";

/// Runs every row and writes the table to `out`; `edge_build` measures another build of
/// the edge (a folder with `index.js` and `index_bg.wasm`) instead of `build/`.
pub async fn report(out: &Path, edge_build: Option<PathBuf>) -> anyhow::Result<()> {
    let stack = Stack::start(&[]).await?;
    stack.set_event(SOLD_OUT_EVENT, 0, 1000).await?;
    let http = client()?;
    let mut table = Table::default();

    let baseline = warmed(Edge::start_baseline().await?, &http, "/").await?;
    for (name, path) in [
        ("baseline: no object", "/"),
        (
            "baseline: one call to an object that does nothing",
            "/object",
        ),
        (
            "baseline: one call to an object that writes one row",
            "/object/write",
        ),
    ] {
        let measured = row(
            &baseline,
            REQUESTS,
            get(&http, format!("{}{path}", baseline.url)),
        )
        .await?;
        table.push(Row::baseline(name, measured));
    }
    drop(baseline);

    let start = |limits: &'static str| {
        let vars = edge_vars(limits);
        let (http, edge_build) = (http.clone(), edge_build.clone());
        let stack = &stack;
        async move {
            let edge =
                Edge::start_in_memory(&stack.origin, stack.edge_secret(), vars, edge_build, None)
                    .await?;
            warmed(edge, &http, "/healthz").await
        }
    };

    let edge = start(OPEN_LIMITS).await?;
    let healthz = get(&http, format!("{}/healthz", edge.url));
    table.push(Row::edge(
        "GET /healthz",
        row(&edge, REQUESTS, healthz).await?,
    ));
    let me = {
        let (http, url, token) = (http.clone(), format!("{}/auth/me", edge.url), bearer("me"));
        move |_| http.get(&url).bearer_auth(&token)
    };
    table.push(Row::edge("GET /auth/me", row(&edge, REQUESTS, me).await?));

    let enter = queue_call(&http, &edge.url, "enter", |i| format!("line-{i}"));
    closed_loop(|| edge.cpu_time(), 0, WARM_UP, enter.clone()).await?;
    let entered = closed_loop(|| edge.cpu_time(), WARM_UP, STEP - WARM_UP, enter.clone()).await?;
    table.push(Row::edge(
        "POST /queue/{id}/enter — a new user's first request (its session object created)",
        entered,
    ));
    for first in (STEP..LINE).step_by(STEP as usize) {
        tokio::time::sleep(SETTLE).await;
        let built = closed_loop(|| edge.cpu_time(), first, STEP, enter.clone()).await?;
        if built.statuses.keys().any(|status| *status != 200) {
            anyhow::bail!(
                "building the line: {}\n{}",
                built.answers(),
                tail(&edge.log())
            );
        }
    }
    tokio::time::sleep(SETTLE).await;
    let sampled = |i: u64| i % SAMPLED * (LINE / SAMPLED) + 7;
    let again = move |i: u64| enter(sampled(i));
    table.push(Row::edge(
        "POST /queue/{id}/enter — already in line",
        row(&edge, REQUESTS, again).await?,
    ));
    let poll = queue_call(&http, &edge.url, "status", move |i| {
        format!("line-{}", sampled(i))
    });
    table.push(Row::edge(
        "GET /queue/{id}/status — 10,000 in line",
        row(&edge, REQUESTS, poll).await?,
    ));
    let with_ticket = ticket_poll(&http, &edge.url, sampled).await?;
    let counts = || async {
        let read = edge.health_count("snapshotsRead").await.unwrap_or_default();
        let fetched = edge
            .health_count("snapshotsFetched")
            .await
            .unwrap_or_default();
        (read, fetched)
    };
    let (read, fetched) = counts().await;
    let polled = row(&edge, REQUESTS, with_ticket).await?;
    let (read, fetched) = {
        let (read_after, fetched_after) = counts().await;
        (read_after - read, fetched_after - fetched)
    };
    table.push(Row::edge(
        format!(
            "GET /queue/{{id}}/status with its Queue-Ticket — 10,000 in line ({read} read \
             from snapshots, {fetched} fetched from the room, warm-up included)"
        ),
        polled,
    ));
    let admitted = confirm(&http, &edge.url, |i| format!("buyer-{}", i % BUYERS), None);
    table.push(Row::edge(
        "POST /payments/confirm — admitted, ungated (origin and PG behind)",
        row(&edge, CONFIRMS, admitted).await?,
    ));
    let no_pass = confirm(
        &http,
        &edge.url,
        |i| format!("line-{}", LINE - 1 - i % SAMPLED * 40),
        Some(LINE_EVENT),
    );
    table.push(Row::edge(
        "POST /payments/confirm — gated, without a pass (a replay only: the origin looks)",
        row(&edge, REQUESTS, no_pass).await?,
    ));
    let waiting = refusals::waiting_confirm(&http, &edge.url, (0..SAMPLED).map(sampled)).await?;
    let (fetched, room_calls) = (
        edge.health_count("snapshotsFetched")
            .await
            .unwrap_or_default(),
        edge.health_count("roomCalls").await.unwrap_or_default(),
    );
    let refused = row(&edge, REQUESTS, refusals::shared(waiting)).await?;
    let fetched = edge
        .health_count("snapshotsFetched")
        .await
        .unwrap_or_default()
        - fetched;
    let room_calls = edge.health_count("roomCalls").await.unwrap_or_default() - room_calls;
    table.push(Row::edge(
        format!(
            "POST /payments/confirm — gated, with its Queue-Ticket, its place waiting: \
             refused from the snapshot before its body is read ({room_calls} room calls, {fetched} of \
             them for snapshots, warm-up included)"
        ),
        refused,
    ));
    let sold_out = confirm(
        &http,
        &edge.url,
        |i| format!("buyer-{}", i % BUYERS),
        Some(SOLD_OUT_EVENT),
    );
    table.push(Row::edge(
        "POST /payments/confirm — an event sold out at the origin",
        row(&edge, REQUESTS, sold_out).await?,
    ));
    drop(edge);

    let edge = start(USER_WINDOW).await?;
    let one_user = confirm(&http, &edge.url, |_| "hasty".to_owned(), None);
    table.push(Row::edge(
        "POST /payments/confirm — one user past the user window (5/1s)",
        row(&edge, REQUESTS, one_user).await?,
    ));
    drop(edge);

    let edge = start(GLOBAL_WINDOW).await?;
    let many = confirm(&http, &edge.url, |i| format!("buyer-{}", i % BUYERS), None);
    table.push(Row::edge(
        "POST /payments/confirm — refused by the global window (1/10m)",
        row(&edge, REQUESTS, many).await?,
    ));
    drop(edge);

    let version = Edge::version().unwrap_or_else(|err| format!("unknown ({err})"));
    std::fs::write(out, table.markdown(&version, edge_build.as_deref()))?;
    println!("{}", std::fs::read_to_string(out)?);
    Ok(())
}

/// The lab's client: [`CONCURRENCY`] connections kept, none past workerd's idle close
/// ([`harness::workerd::client`]), none waiting more than 30 s.
pub fn client() -> anyhow::Result<reqwest::Client> {
    Ok(harness::workerd::client()
        .pool_max_idle_per_host(CONCURRENCY * 2)
        .timeout(Duration::from_secs(30))
        .build()?)
}

/// The edge's variables: `limits` as `RATE_LIMITED_ROUTES`, the line's event gated.
fn edge_vars(limits: &str) -> Vec<(&'static str, String)> {
    vec![
        ("RATE_LIMITED_ROUTES", limits.to_owned()),
        ("GATED_EVENTS", LINE_EVENT.to_owned()),
    ]
}

/// A warm-up, then `total` requests of `request` against `process`.
async fn row<F>(process: &Edge, total: u64, request: F) -> anyhow::Result<Measured>
where
    F: Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static,
{
    closed_loop(|| process.cpu_time(), 0, WARM_UP, request.clone()).await?;
    let refused_before = process.refused_from_memory().await;
    let mut measured = closed_loop(|| process.cpu_time(), WARM_UP, total, request).await?;
    if let (Some(before), Some(after)) = (refused_before, process.refused_from_memory().await) {
        measured.from_memory = Some(after.saturating_sub(before));
    }
    Ok(measured)
}

/// The same `GET url` every time.
pub fn get(
    http: &reqwest::Client,
    url: String,
) -> impl Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static {
    let http = http.clone();
    move |_| http.get(&url)
}

/// `process`, after [`ISOLATE_WARM_UP`] requests of `path`.
async fn warmed(process: Edge, http: &reqwest::Client, path: &str) -> anyhow::Result<Edge> {
    let url = format!("{}{path}", process.url);
    closed_loop(|| process.cpu_time(), 0, ISOLATE_WARM_UP, get(http, url)).await?;
    Ok(process)
}

/// The last lines of a workerd log, for an error.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// `POST /queue/{line}/enter` or `GET /queue/{line}/status` (`step`) by `user(i)`.
fn queue_call(
    http: &reqwest::Client,
    edge: &str,
    step: &'static str,
    user: impl Fn(u64) -> String + Clone + Send + Sync + 'static,
) -> impl Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static {
    let (http, url) = (http.clone(), format!("{edge}/queue/{LINE_EVENT}/{step}"));
    move |i: u64| {
        let request = match step {
            "enter" => http.post(&url),
            _ => http.get(&url),
        };
        request.bearer_auth(bearer(&user(i)))
    }
}

/// A status poll with its `Queue-Ticket` by one of the sampled users
/// (`sampled(0..SAMPLED)`), each with the ticket entering again answers, its token minted
/// once.
async fn ticket_poll(
    http: &reqwest::Client,
    edge: &str,
    sampled: impl Fn(u64) -> u64,
) -> anyhow::Result<impl Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static> {
    let mut tickets = Vec::new();
    for i in 0..SAMPLED {
        let token = bearer(&format!("line-{}", sampled(i)));
        let url = format!("{edge}/queue/{LINE_EVENT}/enter");
        let ticket = ticket(http, &url, &token).await?;
        tickets.push((token, ticket));
    }
    let tickets = Arc::new(tickets);
    let (http, url) = (http.clone(), format!("{edge}/queue/{LINE_EVENT}/status"));
    Ok(move |i: u64| {
        let (token, ticket) = &tickets[(i % SAMPLED) as usize];
        http.get(&url)
            .bearer_auth(token)
            .header("queue-ticket", ticket)
    })
}

/// The ticket the edge's enter at `url` answers the holder of `token`.
pub async fn ticket(http: &reqwest::Client, url: &str, token: &str) -> anyhow::Result<String> {
    let entered: Value = http
        .post(url)
        .bearer_auth(token)
        .send()
        .await?
        .json()
        .await?;
    entered["ticket"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("entered without a ticket: {entered}"))
}

/// `POST /payments/confirm` by `user(i)`, a new order each time (numbered across the
/// run: every row's confirms reach the one origin), for `event` if any.
fn confirm(
    http: &reqwest::Client,
    edge: &str,
    user: impl Fn(u64) -> String + Clone + Send + Sync + 'static,
    event: Option<&'static str>,
) -> impl Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static {
    let (http, url) = (http.clone(), format!("{edge}/payments/confirm"));
    move |i: u64| {
        static ORDERS: AtomicU64 = AtomicU64::new(0);
        let order = format!("cost-{}", ORDERS.fetch_add(1, Ordering::Relaxed));
        let mut body =
            json!({"orderId": order, "paymentKey": format!("pk-{order}"), "amount": 1000});
        if let Some(event) = event {
            body["eventId"] = Value::from(event);
        }
        http.post(&url)
            .bearer_auth(bearer(&user(i)))
            .header("idempotency-key", &order)
            .json(&body)
    }
}

/// A valid access token of `user`, minted with the lab's key (no login).
fn bearer(user: &str) -> String {
    token(user).unwrap_or_default()
}
