//! `lab cost --profile`: where the CPU of `/healthz`, a status poll (with its ticket and
//! without), a waiting ticket holder's confirm judged from the snapshot and an admitted
//! confirm goes
//! in workerd, sampled by V8's own profiler through workerd's inspector
//! (`scripts/profile-edge.mjs`) while the lab sends only that route. Written to
//! `docs/edge-profile.md`.
//!
//! The profiler slows what it samples, so these runs give shares, not costs; the costs
//! are `lab cost`'s, measured without it.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::measure::closed_loop;
use super::{client, confirm, edge_vars, get, queue_call, ticket_poll, OPEN_LIMITS};
use crate::edge::Edge;
use crate::stack::{workspace, Stack};

/// People in line while the status poll is profiled (its cost is O(log n) in them).
const LINE: u64 = 1_000;
/// How long each route is sampled.
const SECONDS: u64 = 6;

/// One route's requests, the `i`-th of them.
type Sender = Arc<dyn Fn(u64) -> reqwest::RequestBuilder + Send + Sync>;

pub async fn report(out: &Path) -> anyhow::Result<()> {
    let stack = Stack::start(&[]).await?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let vars = edge_vars(OPEN_LIMITS);
    let edge =
        Edge::start_in_memory(&stack.origin, stack.edge_secret(), vars, None, Some(port)).await?;
    let http = client()?;
    let enter = queue_call(&http, &edge.url, "enter", |i| format!("line-{i}"));
    closed_loop(|| edge.cpu_time(), 0, LINE, enter).await?;

    let healthz = get(&http, format!("{}/healthz", edge.url));
    let poll = queue_call(&http, &edge.url, "status", |i| format!("line-{}", i % LINE));
    let with_ticket = ticket_poll(&http, &edge.url, |i| i % LINE).await?;
    let admitted = confirm(&http, &edge.url, |i| format!("buyer-{}", i % 16), None);
    let waiting = super::refusals::waiting_confirm(&http, &edge.url, 0..LINE).await?;
    let routes: [(&str, Sender, u64); 5] = [
        ("`GET /healthz`", Arc::new(healthz), 12_000),
        (
            "`GET /queue/{id}/status` with its `Queue-Ticket`, 1,000 in line",
            Arc::new(with_ticket),
            12_000,
        ),
        (
            "`GET /queue/{id}/status` without a ticket, 1,000 in line",
            Arc::new(poll),
            3_000,
        ),
        (
            "`POST /payments/confirm`, gated, with its `Queue-Ticket`, its place waiting: \
             refused from the snapshot before its body is read",
            waiting,
            12_000,
        ),
        (
            "`POST /payments/confirm`, admitted, ungated",
            Arc::new(admitted),
            1_000,
        ),
    ];
    let mut text = format!(
        "# Where an edge request's CPU goes\n\n\
         Reproduce: `cargo run --release -p lab -- cost --profile` (rewrites this page). V8's \
         sampling profiler (100 µs) through workerd's inspector for {SECONDS} s, while the lab \
         sends one route 16 at a time — a fixed number of requests, after as many again to \
         warm the isolate, so that every sample of the isolate's busy time is theirs and it \
         divides by their number. The Worker and its objects share the one isolate, so both \
         are in it, and so is the profiler's own cost: compare the routes with one another \
         here, and take their costs from docs/edge-cost.md. The edge under `workerd serve`, \
         objects on tmpfs, the origin and simulator as release builds.\n\n",
    );
    for (name, send, load) in routes {
        let send = move |i: u64| send(i);
        closed_loop(|| edge.cpu_time(), 0, load, send.clone()).await?;
        let mut profiler = tokio::process::Command::new("node")
            .arg("--experimental-websocket")
            .arg(workspace().join("scripts/profile-edge.mjs"))
            .arg(format!("127.0.0.1:{port}"))
            .arg(SECONDS.to_string())
            .arg(format!("{}/healthz", edge.url))
            .arg(load.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("running node scripts/profile-edge.mjs")?;
        let mut said = String::new();
        if let Some(stderr) = profiler.stderr.as_mut() {
            BufReader::new(stderr).read_line(&mut said).await?;
        }
        if said.trim() != "sampling" {
            let output = profiler.wait_with_output().await?;
            bail!(
                "profile-edge.mjs: {said}{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let started = Instant::now();
        let sent = closed_loop(|| edge.cpu_time(), load, load, send).await;
        let took = started.elapsed();
        let profile = profiler.wait_with_output().await?;
        if !profile.status.success() {
            bail!(
                "profile-edge.mjs: {}",
                String::from_utf8_lossy(&profile.stderr)
            );
        }
        if took >= Duration::from_secs(SECONDS) {
            bail!("{name}: {load} requests took {took:?}, longer than the profile; send fewer");
        }
        let sent = sent?;
        text.push_str(&format!(
            "## {name}\n\n{} requests in {:.1} s, all while sampling ({}).\n\n{}\n",
            sent.requests(),
            took.as_secs_f64(),
            sent.answers(),
            String::from_utf8_lossy(&profile.stdout)
        ));
    }
    std::fs::write(out, &text)?;
    println!("{text}");
    Ok(())
}
