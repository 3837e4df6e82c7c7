//! `lab cost --profile`: where the CPU of `/healthz`, a status poll (with its ticket and
//! without) and an admitted confirm goes
//! in workerd, sampled by V8's own profiler through workerd's inspector
//! (`scripts/profile-edge.mjs`) while the lab sends only that route. Written to
//! `docs/edge-profile.md`.
//!
//! The profiler slows what it samples, so these runs give shares, not costs; the costs
//! are `lab cost`'s, measured without it.

use std::path::Path;

use anyhow::{bail, Context as _};

use super::measure::closed_loop;
use super::{client, confirm, edge_vars, queue_call, ticket_poll, OPEN_LIMITS};
use crate::edge::Edge;
use crate::stack::{workspace, Stack};

/// People in line while the status poll is profiled (its cost is O(log n) in them).
const LINE: u64 = 1_000;
/// How long each route is sampled.
const SECONDS: u64 = 4;

/// The routes profiled, in turn.
#[derive(Clone, Copy)]
enum Route {
    Healthz,
    TicketPoll,
    Poll,
    Confirm,
}

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

    let healthz = {
        let (http, url) = (http.clone(), format!("{}/healthz", edge.url));
        move |_| http.get(&url)
    };
    let poll = queue_call(&http, &edge.url, "status", |i| format!("line-{}", i % LINE));
    let with_ticket = ticket_poll(&http, &edge.url, |i| i % LINE).await?;
    let admitted = confirm(&http, &edge.url, |i| format!("buyer-{}", i % 16), None);
    let mut text = String::from(
        "# Where an edge request's CPU goes\n\n\
         Reproduce: `cargo run --release -p lab -- cost --profile` (rewrites this page). V8's \
         sampling profiler (100 µs) through workerd's inspector, while the lab sends one route \
         16 at a time; the Worker and its objects share the one isolate, so both are in it. \
         Shares of the isolate's busy time; the profiler's own cost is in them, so the \
         costs themselves are docs/edge-cost.md's. The edge under `workerd serve`, objects \
         on tmpfs, the origin and simulator as release builds.\n\n",
    );
    for (name, route, load) in [
        ("`GET /healthz`", Route::Healthz, 30_000),
        (
            "`GET /queue/{id}/status` with its `Queue-Ticket`, 1,000 in line",
            Route::TicketPoll,
            30_000,
        ),
        (
            "`GET /queue/{id}/status` without a ticket, 1,000 in line",
            Route::Poll,
            15_000,
        ),
        (
            "`POST /payments/confirm`, admitted, ungated",
            Route::Confirm,
            5_000,
        ),
    ] {
        let profiler = tokio::process::Command::new("node")
            .arg("--experimental-websocket")
            .arg(workspace().join("scripts/profile-edge.mjs"))
            .arg(format!("127.0.0.1:{port}"))
            .arg(SECONDS.to_string())
            .kill_on_drop(true)
            .output();
        let cpu = || edge.cpu_time();
        let sent = async {
            match route {
                Route::Healthz => closed_loop(cpu, 0, load, healthz.clone()).await,
                Route::TicketPoll => closed_loop(cpu, 0, load, with_ticket.clone()).await,
                Route::Poll => closed_loop(cpu, 0, load, poll.clone()).await,
                Route::Confirm => closed_loop(cpu, 0, load, admitted.clone()).await,
            }
        };
        let (profile, sent) = tokio::join!(profiler, sent);
        let profile = profile.context("running node scripts/profile-edge.mjs")?;
        if !profile.status.success() {
            bail!(
                "profile-edge.mjs: {}",
                String::from_utf8_lossy(&profile.stderr)
            );
        }
        let sent = sent?;
        text.push_str(&format!(
            "## {name}\n\n{} requests sent while sampling ({}).\n\n{}\n",
            sent.requests,
            sent.answers(),
            String::from_utf8_lossy(&profile.stdout)
        ));
    }
    std::fs::write(out, &text)?;
    println!("{text}");
    Ok(())
}
