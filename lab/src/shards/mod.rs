//! `lab shards`: one event's arrivals over many shards. The native simulation
//! (`sim/`) drives 10^6 arrivals in 60 s through the rules' own state machines with 1,
//! 8 and 64 shards, and with 64 loses one shard, then the head, mid-drop: the requests
//! each object receives a second, every position checked against a reference, the time
//! until a position is final, and whether anyone is lost or numbered twice. Then the
//! same drop is driven in workerd at what this machine takes (`drive.rs`), and from what
//! it measured the requests a second each object would take at 10^6 arrivals a minute.
//! Writes `docs/shards-at-a-million.md`.

mod drive;
mod sim;

use std::path::Path;

use rules::queue::arrivals::flush_interval_ms;
use sim::{Outcome, Restart, Scenario};

use crate::room::server::Room;

const ARRIVALS: u32 = 1_000_000;
const OVER_MS: i64 = 60_000;

fn percentile(sorted: &[i64], p: f64) -> i64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or(0)
}

/// The busiest second of the busiest shard, and of the head (with one shard, the room
/// is both).
fn busiest(outcome: &Outcome, shards: u32) -> (u64, u64) {
    let shard = outcome
        .shard_rps
        .iter()
        .flat_map(|seconds| seconds.iter().copied())
        .max()
        .unwrap_or(0);
    let head = match shards {
        1 => (0..outcome.head_rps.len())
            .map(|at| outcome.head_rps[at] + outcome.shard_rps[0][at])
            .max()
            .unwrap_or(0),
        _ => outcome.head_rps.iter().copied().max().unwrap_or(0),
    };
    (shard, head)
}

/// The widest a shard's share of the enters strays from 1/N, as a fraction of 1/N.
fn spread(outcome: &Outcome) -> f64 {
    let total: u64 = outcome.shard_enters.iter().sum();
    let fair = total as f64 / outcome.shard_enters.len() as f64;
    outcome
        .shard_enters
        .iter()
        .map(|enters| (*enters as f64 - fair).abs() / fair)
        .fold(0.0, f64::max)
}

fn row(shards: u32, outcome: &Outcome) -> String {
    let (shard, head) = busiest(outcome, shards);
    let objects = if shards == 1 { 1 } else { shards + 1 };
    let busiest_shard = if shards == 1 {
        "—".to_owned()
    } else {
        shard.to_string()
    };
    format!(
        "| {shards} | {objects} | {} | {:.0} | {busiest_shard} | {head} | {:.1} % | {} / {} | {} / {} / {} ms | {} ms |\n",
        if shards == 1 { "—".to_owned() } else { format!("{} ms", flush_interval_ms(shards)) },
        f64::from(ARRIVALS) * 1000.0 / OVER_MS as f64,
        spread(outcome) * 100.0,
        outcome.checked,
        outcome.wrong,
        percentile(&outcome.waits_ms, 0.5),
        percentile(&outcome.waits_ms, 0.99),
        outcome.waits_ms.last().copied().unwrap_or(0),
        outcome.max_inversion_ms,
    )
}

fn restart_row(what: &str, outcome: &Outcome) -> String {
    format!(
        "| {what} | {} | {} | {} | {} |\n",
        outcome.affected,
        outcome
            .back_within_ms
            .map_or("—".to_owned(), |ms| format!("{ms} ms")),
        outcome.lost,
        outcome.twice,
    )
}

/// A ticket poll's CPU against `/healthz`'s, with the sampled users' polls exact.
struct Polled {
    ratio: f64,
    quartiles: [f64; 3],
    exact: bool,
}

fn driven_row(driven: &drive::Driven, polled: &Polled) -> String {
    let objects = if driven.shards == 1 {
        1
    } else {
        driven.shards + 1
    };
    let at = |p: f64| percentile_u(&driven.final_ms, p);
    let [low, mid, high] = polled.quartiles;
    format!(
        "| {} | {objects} | {:.0} / {:.0} | {} | {:.0} | {:.1} % | {} | {} / {} / {} ms | {} \
         | {:.2} ({low:.2} · {mid:.2} · {high:.2}), {} |\n",
        driven.shards,
        driven.sent_per_s,
        driven.answered_per_s,
        driven.busiest_rps,
        driven.head_rps,
        driven.spread * 100.0,
        if driven.exact { "yes" } else { "**no**" },
        at(0.5),
        at(0.99),
        driven.final_ms.last().copied().unwrap_or(0),
        driven
            .cpu_us
            .map_or("—".to_owned(), |us| format!("{us:.0} µs")),
        polled.ratio,
        if polled.exact {
            "exact"
        } else {
            "**not exact**"
        },
    )
}

fn percentile_u(sorted: &[u64], p: f64) -> u64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or(0)
}

/// At 10^6 arrivals a minute with `shards`, from the protocol and the CPU measured.
fn projected_row(driven: &drive::Driven) -> String {
    let per_second = f64::from(ARRIVALS) * 1000.0 / OVER_MS as f64;
    let shards = driven.shards;
    let (shard_rps, head_rps) = match shards {
        1 => (per_second, per_second + sim::DATA_CENTRES as f64),
        n => (
            per_second / f64::from(n),
            f64::from(n) * 1000.0 / flush_interval_ms(n) as f64 + sim::DATA_CENTRES as f64,
        ),
    };
    let busy = driven.cpu_us.map_or("—".to_owned(), |us| {
        format!("{:.0} %", shard_rps * us / 1e4)
    });
    format!(
        "| {shards} | {:.0} | {} | {:.0} | {busy} |\n",
        per_second,
        if shards == 1 {
            "—".to_owned()
        } else {
            format!("{shard_rps:.0}")
        },
        head_rps,
    )
}

pub async fn report(out: &Path, driven_arrivals: u64, rate: u64) -> anyhow::Result<()> {
    let mut text = simulated();
    let room = Room::start().await?;
    let mut driven = Vec::new();
    for shards in [1, 8, 64] {
        let row = drive::drive(&room, shards, driven_arrivals, rate).await?;
        let event = format!("driven-{shards}");
        let polls = crate::room::edge_path::polls_of(&room, &event, &row.sampled).await?;
        let polled = Polled {
            ratio: polls.ticket.measured.cpu_us() / polls.healthz.measured.cpu_us(),
            quartiles: polls.round_ratios,
            exact: polls.exact,
        };
        println!(
            "workerd, {shards} shards: exact {}, polls ×{:.2}",
            row.exact, polled.ratio
        );
        driven.push((row, polled));
    }
    text.push_str(&format!(
        "\n## In workerd\n\n\
         **Runtime**: the edge as `scripts/build-edge` builds it under `workerd serve`, its \
         objects' SQLite on tmpfs, on this 2-core machine; a driver Worker beside it \
         (`lab/src/room/driver.js`) sends each user's enter to the arrival shard the \
         server's hash gives it (with one shard, to the room), as the edge's Worker does — \
         without the edge's routes, tokens or session objects. {driven_arrivals} arrivals per drop, \
         {rate} a second in ticks of 100 ms, each tick's at once. *Sent / answered*: \
         arrivals a second as sent, and from the first sent to the last answered; *busiest* \
         is the most one object (a shard, or the room with one) received in one second; \
         *room* the batches it took a second over the run (with one shard, its enters); \
         *exact*: every answer's position is its arrival number + 1 — nobody leaves, so that \
         is the reference order — and the numbers are 0 to {} once each; *until final* is \
         each enter's call time (its answer is final); *CPU* is workerd's per arrival, all \
         threads, the driver's included. *Ticket poll × `/healthz`*: then, with everyone in \
         line, 64 users spread over it poll with their tickets through the edge's own route, \
         in 64 rounds of 500 in turn with `/healthz` (16 at once): the ratio of workerd's \
         CPU per request, summed over the rounds, with the rounds' own quartiles, and \
         whether every poll read its user's exact place.\n\n\
         | shards | objects | arrivals/s sent / answered | busiest req/s | room req/s | spread | exact | until final | CPU per arrival | ticket poll × `/healthz` |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        driven_arrivals - 1,
    ));
    for (row, polled) in &driven {
        text.push_str(&driven_row(row, polled));
    }
    text.push_str(
        "\n## At 10^6 arrivals a minute\n\n\
         Projected from the protocol and the CPU measured above: each shard takes its share \
         of the enters, the room a batch per shard per flush interval and the data centres' \
         snapshot fetches; *shard busy* is a shard's enters a second times the CPU per \
         arrival measured in workerd (the room's share and the driver's included, so an \
         upper bound). Polls with a ticket are not here: they read the room's snapshot in \
         the isolate and call no object (`tests/shards.rs`); their cost is above.\n\n\
         | shards | arrivals/s | a shard's req/s | the room's req/s | shard busy |\n\
         |---|---|---|---|---|\n",
    );
    for (row, _) in &driven {
        text.push_str(&projected_row(row));
    }
    std::fs::write(out, &text)?;
    println!("{text}");
    Ok(())
}

/// The native simulation's page.
fn simulated() -> String {
    let mut text = format!(
        "# One event's arrivals over many shards\n\n\
         Generated by `cargo run --release -p lab -- shards`. **Native simulation**: the \
         rules' own state machines (`rules::queue::arrivals` — each shard's `Batcher`, the \
         head's `enter_batch` — on the head's `EventQueue`) in one process on simulated \
         time; {ARRIVALS} arrivals at uniformly random times over {} s, each user in the \
         shard `shard_of` gives them; one in fifty gives up 5–50 s after arriving; \
         the first {} in line are admitted, and each admitted person confirms (a pass \
         claim at the head) and pays {}–{} s after their pass. Assumed \
         of the platform: a shard's call to the head answers in {} ms; {} data centres \
         each fetch the head's snapshot once a second for every ticket poll there (polls \
         with a ticket call no object); an object lost comes back {} ms later (workerd's \
         restart, measured); a client whose enter failed sends it again {} ms later, a \
         shard whose call to the head failed {} ms later.\n\n\
         *Requests/s* are the busiest second of the busiest shard and of the head: enters \
         and leaves at a shard; batches, snapshot fetches and claims at the head \
         (with one shard, the room takes everything). *Spread*: the widest a shard's share \
         of the enters strays from 1/N. *Checked / wrong*: every enter's answered position \
         against the reference count of who is in line, and every place in the head's \
         snapshot mid-drop and at the end against the reference order. *Until final*: from \
         arrival to the answer that numbered them (p50 / p99 / max) — a number is never \
         given below one given before, so a position is final when answered. *Order*: the \
         most a person numbered ahead of another came after them.\n\n\
         | shards | objects | flush interval | arrivals/s | busiest shard req/s | head req/s | spread | checked / wrong | until final | order |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        OVER_MS / 1000,
        100,
        sim::PAYS_AFTER_MS / 2000,
        sim::PAYS_AFTER_MS * 3 / 2000,
        sim::HEAD_CALL_MS,
        sim::DATA_CENTRES,
        sim::RESTART_MS,
        sim::CLIENT_RETRY_MS,
        sim::SHARD_RETRY_MS,
    );
    for shards in [1, 8, 64] {
        let outcome = sim::run(Scenario {
            arrivals: ARRIVALS,
            over_ms: OVER_MS,
            shards,
            restart: None,
        });
        println!(
            "{shards} shards: {} checked, {} wrong",
            outcome.checked, outcome.wrong
        );
        text.push_str(&row(shards, &outcome));
    }
    text.push_str(
        "\n## An object lost mid-drop\n\n\
         64 shards. *Waiting* is who had entered the lost object's shard (or, for the head, \
         any shard) and had no answer yet when it was lost; *back within* the longest any \
         of them waited from the loss to their number. Everyone else kept their place \
         throughout: it is in the head's snapshot, and ticket polls read nothing else.\n\n\
         | lost | waiting | back within | never numbered | numbered twice |\n\
         |---|---|---|---|---|\n",
    );
    for (what, restart) in [
        (
            "shard 5, at 20 s",
            Restart::Shard {
                shard: 5,
                at_ms: 20_000,
            },
        ),
        ("the head, at 40 s", Restart::Head { at_ms: 40_000 }),
    ] {
        let outcome = sim::run(Scenario {
            arrivals: ARRIVALS,
            over_ms: OVER_MS,
            shards: 64,
            restart: Some(restart),
        });
        println!("{what}: back within {:?}", outcome.back_within_ms);
        text.push_str(&restart_row(what, &outcome));
    }
    text
}
