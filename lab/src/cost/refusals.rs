//! `lab cost --refusals`: the edge's cheapest refusals, over several runs, each beside
//! `/healthz` measured in the same workerd just before it — a gated confirm judged from
//! the room's snapshot (its place waiting: refused before the caller's session, with no
//! call to the room or the origin), one user past the user window, and everyone past the
//! global window (both from the isolate's memory). One run's ratio is noise on this
//! shared machine; the spread over runs is the figure (`docs/edge-refusals.md`).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use super::measure::{closed_loop, Measured};
use super::{
    bearer, client, confirm, edge_vars, get, row, ticket, warmed, GLOBAL_WINDOW, ISOLATE_WARM_UP,
    LINE_EVENT, OPEN_LIMITS, PASSES, REQUESTS, USER_WINDOW, WARM_UP,
};
use crate::edge::Edge;
use crate::stack::Stack;

/// People in the line: the first [`PASSES`] hold passes, the rest wait.
const LINE: u64 = 300;

/// The refusals, in the page's order.
const ROWS: [&str; 3] = [
    "gated confirm with its Queue-Ticket, its place waiting (the snapshot, before the session)",
    "one user past the user window (5/1s)",
    "refused by the global window (1/10m)",
];

/// One refusal's run: `/healthz` just before it, the refusal, and the room calls it made.
struct Pair {
    healthz: Measured,
    refused: Measured,
    room_calls: u64,
}

pub async fn report(runs: u32, out: &Path) -> anyhow::Result<()> {
    let stack = Stack::start(&[]).await?;
    let http = client()?;
    let mut pairs: Vec<Vec<Pair>> = (0..ROWS.len()).map(|_| Vec::new()).collect();
    for run in 1..=runs {
        for (index, limits) in [OPEN_LIMITS, USER_WINDOW, GLOBAL_WINDOW]
            .into_iter()
            .enumerate()
        {
            let edge = Edge::start_in_memory(
                &stack.origin,
                stack.edge_secret(),
                edge_vars(limits),
                None,
                None,
            )
            .await?;
            let edge = warmed(edge, &http, "/healthz").await?;
            let refusal = match index {
                0 => waiting_confirm(&http, &edge.url, 0..LINE).await?,
                1 => Arc::new(confirm(&http, &edge.url, |_| "hasty".to_owned(), None)),
                _ => Arc::new(confirm(
                    &http,
                    &edge.url,
                    |i| format!("buyer-{}", i % 16),
                    None,
                )),
            };
            // The refusal's own code warmed as much as /healthz's was: neither row pays for
            // V8 compiling its hot wasm (a workerd's first 3,000 requests of a kind cost
            // up to twice the next).
            closed_loop(
                || edge.cpu_time(),
                0,
                ISOLATE_WARM_UP,
                shared(refusal.clone()),
            )
            .await?;
            let healthz = row(&edge, REQUESTS, get(&http, format!("{}/healthz", edge.url))).await?;
            let calls_before = edge.health_count("roomCalls").await.unwrap_or_default();
            let refused = row(&edge, REQUESTS, shared(refusal)).await?;
            let room_calls =
                edge.health_count("roomCalls").await.unwrap_or_default() - calls_before;
            println!(
                "run {run}, {}: {:.0} µs against /healthz {:.0} µs ({room_calls} room calls)",
                ROWS[index],
                refused.cpu_us(),
                healthz.cpu_us()
            );
            pairs[index].push(Pair {
                healthz,
                refused,
                room_calls,
            });
        }
    }
    let version = Edge::version().unwrap_or_else(|err| format!("unknown ({err})"));
    std::fs::write(out, page(&pairs, runs, &version))?;
    println!("{}", std::fs::read_to_string(out)?);
    Ok(())
}

/// A request of a row, shared by its loops.
type Request = Arc<dyn Fn(u64) -> reqwest::RequestBuilder + Send + Sync>;

/// A gated confirm of the line's event by one of `users` who waits (past the first
/// [`PASSES`] of the line), carrying the ticket their entering — first, or again —
/// answers.
pub(super) async fn waiting_confirm(
    http: &reqwest::Client,
    edge: &str,
    users: impl Iterator<Item = u64>,
) -> anyhow::Result<Request> {
    let url = format!("{edge}/queue/{LINE_EVENT}/enter");
    let mut holders = Vec::new();
    for user in users {
        let name = format!("line-{user}");
        let ticket = ticket(http, &url, &bearer(&name)).await?;
        if user >= PASSES {
            holders.push((name, ticket));
        }
    }
    anyhow::ensure!(!holders.is_empty(), "nobody waits");
    let holders = Arc::new(holders);
    let by = holders.clone();
    let buying = confirm(
        http,
        edge,
        move |i| by[i as usize % by.len()].0.clone(),
        Some(LINE_EVENT),
    );
    Ok(Arc::new(move |i: u64| {
        let (_, ticket) = &holders[i as usize % holders.len()];
        buying(i).header("queue-ticket", ticket)
    }))
}

/// `request` as a row takes it.
pub(super) fn shared(
    request: Request,
) -> impl Fn(u64) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static {
    move |i| request(i)
}

fn page(pairs: &[Vec<Pair>], runs: u32, workerd: &str) -> String {
    let mut text = format!(
        "# What the edge's refusals from memory cost, over {runs} runs\n\n\
         Reproduce: `cargo run --release -p lab -- cost --refusals --runs {runs}` (it starts \
         and stops its own processes on loopback and rewrites this page).\n\n\
         **Runtime**: the edge as `scripts/build-edge` builds it (`build/`) under `workerd \
         serve` ({workerd}, from node_modules), a new process for each refusal of each run, \
         warmed by 3,000 `/healthz` and then 3,000 of the refusal; the origin and the simulator as release builds; the \
         lab's client on the same 2-core machine, in a closed loop as `lab cost` runs \
         ([`edge-cost.md`](edge-cost.md) says how). Each refusal is {REQUESTS} requests after \
         a warm-up of its kind, measured right after {REQUESTS} `GET /healthz` in the same \
         process; its figure is workerd's CPU time per request, as a ratio to that \
         `/healthz`. The gated confirm's user waits in a line of {LINE} (the first {PASSES} \
         hold passes) and carries the ticket entering answered; *room calls* counts the \
         edge's calls to the room during the refusal's measured requests and their \
         warm-up of {WARM_UP} (the snapshot the first refusal fetches is in the process's \
         warm-up, before).\n\n\
         | refusal | × /healthz, each run | spread | CPU/request µs (/healthz µs) | answers (last run) | room calls |\n\
         |---|---|---|---|---|---|\n"
    );
    for (name, pairs) in ROWS.iter().zip(pairs) {
        let ratios: Vec<f64> = pairs
            .iter()
            .map(|pair| pair.refused.cpu_us() / pair.healthz.cpu_us())
            .collect();
        let (low, high) = ratios
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), r| {
                (low.min(*r), high.max(*r))
            });
        let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        let cpu: Vec<String> = pairs
            .iter()
            .map(|pair| {
                format!(
                    "{:.0} ({:.0})",
                    pair.refused.cpu_us(),
                    pair.healthz.cpu_us()
                )
            })
            .collect();
        let calls: Vec<String> = pairs
            .iter()
            .map(|pair| pair.room_calls.to_string())
            .collect();
        let answers = pairs
            .last()
            .map(|pair| pair.refused.answers())
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "| {name} | {} | {low:.2}–{high:.2} | {} | {answers} | {} |",
            each.join(", "),
            cpu.join(", "),
            calls.join(", ")
        );
    }
    let _ = writeln!(
        text,
        "\nAcceptance: every refusal ≤ 1.5× `/healthz` in every run — {}.",
        match pairs
            .iter()
            .flatten()
            .all(|p| p.refused.cpu_us() <= 1.5 * p.healthz.cpu_us())
        {
            true => "met",
            false => "**not met**",
        }
    );
    text
}
