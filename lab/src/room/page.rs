//! `docs/room-at-a-million.md`, from one run of `lab room`.

use std::fmt::Write as _;
use std::time::Duration;

use harness::workerd;

use super::edge_path::{Enters, PER_ROUND, ROUNDS};
use super::{Figures, CALLS, PARALLEL};
use crate::cost::measure::{Measured, CONCURRENCY};
use crate::cost::OPEN_LIMITS;

pub struct Run<'a> {
    pub rows: &'a [Figures],
    pub idle_mb: Option<f64>,
    pub restart: Duration,
    pub exact_after: bool,
    pub enters: &'a Enters,
}

fn yes(exact: bool) -> &'static str {
    if exact {
        "yes"
    } else {
        "**no**"
    }
}

fn mb(value: Option<f64>) -> String {
    value.map_or("—".to_owned(), |mb| format!("{mb:.0} MB"))
}

pub fn markdown(run: &Run<'_>) -> String {
    let version = workerd::version().unwrap_or_else(|err| format!("unknown ({err})"));
    let mut text = format!(
        "# One waiting room at a million\n\n\
         Reproduce: `cargo run --release -p lab -- room` (it starts and stops its own workerd; \
         rewrites this page). One run.\n\n\
         **Runtime**: the edge as `scripts/build-edge` builds it under `workerd serve` ({version}), \
         its objects' SQLite on tmpfs, with the harness's in-memory Cache API, on this 2-core \
         machine, the lab's client on the same machine. A driver Worker beside the edge \
         (`lab/src/room/driver.js`) calls one room's object as the edge does — without the \
         edge's routes or a session object per person — {PARALLEL} calls at a time. Users \
         `u0`, `u1`, … enter in order, so `uN` stands at N + 1: *exact* checks {CALLS} of \
         them spread over the line.\n\n\
         ## The room\n\n\
         *V8 heap* is the edge isolate's — the Worker's and every room's of that isolate — \
         from its inspector (`scripts/isolate-heap.mjs`: `Runtime.getHeapUsage`): what it \
         holds, used after full collections until one frees less than 1 % (wasm-bindgen \
         frees JavaScript objects from finalizers, so one collection leaves what they \
         held), then used / committed as it was found, garbage included; *array buffers* are its ArrayBuffers' \
         backing stores as V8 counts them; *wasm* is the isolate's WebAssembly memory (its \
         `/healthz`): everything the Rust side holds — the line, the passes, the snapshot \
         — at its high-water mark. The isolate's memory is the heap and the wasm \
         memory together. *Resident* is workerd's whole process (`VmRSS`: every \
         isolate, the driver's too, SQLite's page cache, the runtime) — {} idle. *Snapshot \
         fetch* is the driver's call for the snapshot, first after the fill (the room \
         builds it) / again (kept).\n\n\
         | in line | V8 heap: held · as found (used / committed) | array buffers | wasm | resident | enters/s (filling up to it) | status call p50 / p99 | exact | snapshot | snapshot fetch |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        mb(run.idle_mb)
    );
    for row in run.rows {
        let _ = writeln!(
            text,
            "| {} | {:.1} MB · {:.1} / {:.1} MB | {:.1} MB | {:.1} MB | {} | {:.0} | {:.2} / {:.2} ms | {} | {} bytes | {:.1} / {:.1} ms |",
            row.size,
            row.heap.used_mb,
            row.heap.found_mb,
            row.heap.found_total_mb,
            row.heap.backing_mb,
            row.wasm_mb,
            mb(row.resident_mb),
            row.enters_per_s,
            row.status_p50_ms,
            row.status_p99_ms,
            yes(row.exact),
            row.snapshot_bytes,
            row.snapshot_built_ms,
            row.snapshot_kept_ms,
        );
    }
    let _ = writeln!(
        text,
        "\nRestart (`kill -9`, the same storage) to the room's first answer: {:.2} s, \
         workerd's own start included; positions exact after it: {}.",
        run.restart.as_secs_f64(),
        yes(run.exact_after)
    );
    polls(&mut text, run.rows);
    enters(&mut text, run);
    text
}

/// The polls through the edge at each size.
fn polls(text: &mut String, rows: &[Figures]) {
    let _ = write!(
        text,
        "\n## Polls through the edge\n\n\
         The edge's own routes, {CONCURRENCY} requests at once in a closed loop, each row after \
         a warm-up of its own kind. `/healthz` and the ticket polls are measured in turn, \
         {ROUNDS} rounds of {PER_ROUND} of each, and each kind's rounds summed: under load \
         workerd spends bursts of some 150 ms of CPU now and then, whatever the route, and \
         in short rows in turn they fall on both kinds alike. *× `/healthz`* is the ratio of the two sums, and beside it the \
         quartiles of the rounds' own ratios. 64 users spread over the line poll, each with its access \
         token, with or without the ticket its enter answered. *CPU* is workerd's CPU time \
         per request (all its threads, `/proc`; the room's work included); *room calls/s* is \
         what the edge's `/healthz` counts of its calls to rooms, over the row's time. \
         *Main thread* is the part of *CPU* spent on workerd's main thread, where the \
         isolates run; the rest is V8's helper threads (compilers, the concurrent \
         collector) and the runtime's others. *Exact* checks each of the 64 tickets' \
         positions.\n\n\
         | in line | `/healthz` CPU | main thread | ticket polls/s | p50 / p99 | CPU | main thread | × `/healthz` (rounds: quartiles) | room calls/s | exact | polls without a ticket/s | CPU | room calls/s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for row in rows {
        let polls = &row.polls;
        let ticket = &polls.ticket.measured;
        let _ = writeln!(
            text,
            "| {} | {:.0} µs | {:.0} µs | {:.0} | {:.2} / {:.2} ms | {:.0} µs | {:.0} µs | {:.2} ({:.2} · {:.2} · {:.2}) | {:.1} | {} | {:.0} | {:.0} µs | {:.0} |",
            row.size,
            polls.healthz.measured.cpu_us(),
            polls.healthz.main_thread_us(),
            ticket.per_second(),
            ticket.p50_ms(),
            ticket.p99_ms(),
            ticket.cpu_us(),
            polls.ticket.main_thread_us(),
            ticket.cpu_us() / polls.healthz.measured.cpu_us(),
            polls.round_ratios[0],
            polls.round_ratios[1],
            polls.round_ratios[2],
            polls.ticket.room_calls_per_s(),
            yes(polls.exact),
            polls.plain.measured.per_second(),
            polls.plain.measured.cpu_us(),
            polls.plain.room_calls_per_s(),
        );
    }
}

/// Entering through the edge, beside entering straight into the room.
fn enters(text: &mut String, run: &Run<'_>) {
    let row = |text: &mut String, what: &str, measured: &Measured| {
        let _ = writeln!(
            text,
            "| {what} | {} | {:.0} | {:.2} / {:.2} ms | {:.0} µs |",
            measured.answers(),
            measured.per_second(),
            measured.p50_ms(),
            measured.p99_ms(),
            measured.cpu_us(),
        );
    };
    let _ = write!(
        text,
        "\n## Enters through the edge\n\n\
         After the restart, {} in line: `POST /queue/{{id}}/enter` through the edge's route \
         (token verified, the user's session object asked, the route's rate limits — the cost \
         table's open ones, `{OPEN_LIMITS}` — counted, the room called), {CONCURRENCY} at \
         once. Straight into the room, the driver's fill took the rates in the first table.\n\n\
         | enter | answers | enters/s | p50 / p99 | CPU/enter |\n|---|---|---|---|---|\n",
        run.rows.last().map_or(0, |row| row.size)
    );
    row(
        text,
        "a user new to the edge (the session object made)",
        &run.enters.new_users,
    );
    row(text, "a user already in line", &run.enters.in_line);
}
