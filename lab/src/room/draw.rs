//! `lab draw`: a drop's prequeue drawn at its opening in workerd, at 10^4 and 10^6
//! people, straight through the room's object by the driver (`driver.js`): how long the
//! draw took and in how many batches, how long the room kept a report waiting meanwhile,
//! workerd's CPU per batch, and whether every place re-derives from the seed and the list
//! the room keeps (`rules::queue::draw::order`). Writes `docs/draw-at-a-million.md`.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rules::drop::{RoomSettings, RoomState, RoomUpdate};
use rules::queue::draw::{self, SEED_BYTES};
use serde_json::{json, Value};

use super::server::Room;
use super::CHUNK;

const SIZES: [u64; 2] = [10_000, 1_000_000];
/// People per page of the kept list.
const PAGE: u64 = 10_000;
/// The opening, once everyone is in: this far ahead of the last configure.
const OPENS_IN: Duration = Duration::from_secs(2);
/// How often the room's report is asked while the draw runs.
const REPORT_EVERY: Duration = Duration::from_secs(1);

/// One draw, measured.
struct Drawn {
    size: u64,
    fill_s: f64,
    /// From the opening until the room reported the draw done.
    took_s: f64,
    batches: u64,
    /// The longest a report waited for the room while the draw ran.
    longest_wait_ms: f64,
    /// workerd's CPU over the draw, all threads and the main thread's.
    cpu_s: Option<f64>,
    main_cpu_s: Option<f64>,
    /// The kept list is the prequeue, in the order the seed derives.
    rederived: bool,
    /// Sampled places, as the room answers them, agree with the derived order.
    places_agree: bool,
}

fn now_ms() -> i64 {
    harness::signed::now_ms()
}

fn configure(version: u64, opens_at: i64) -> anyhow::Result<Value> {
    let update = RoomUpdate {
        settings: RoomSettings {
            gated: true,
            opens_at: Some(opens_at),
            prequeue_from: Some(now_ms() - 1_000),
            ..RoomSettings::default()
        },
        state: RoomState::Open,
        version,
    };
    Ok(json!({ "op": "configure", "update": serde_json::to_value(update)? }))
}

async fn draw_once(room: &Room, size: u64) -> anyhow::Result<Drawn> {
    let event = format!("draw-{size}");
    let far = now_ms() + 3_600_000;
    room.call(&event, &configure(1, far)?).await?;
    let started = Instant::now();
    let mut filled = 0;
    while filled < size {
        let count = CHUNK.min(size - filled);
        room.fill_room(&event, filled, count).await?;
        filled += count;
    }
    let fill_s = started.elapsed().as_secs_f64();
    let report = room.call(&event, &json!({ "op": "report" })).await?;
    anyhow::ensure!(report["prequeued"] == size, "not all prequeued: {report}");

    let opens_at = now_ms() + OPENS_IN.as_millis() as i64;
    room.call(&event, &configure(2, opens_at)?).await?;
    tokio::time::sleep(Duration::from_millis((opens_at - now_ms()).max(0) as u64)).await;
    let (cpu, main) = (room.cpu_time(), room.main_thread_cpu_time());
    let opened = Instant::now();
    let mut longest_wait = Duration::ZERO;
    let report = loop {
        let asked = Instant::now();
        let report = room.call(&event, &json!({ "op": "report" })).await?;
        longest_wait = longest_wait.max(asked.elapsed());
        if report["drawSeed"].is_string() && report["drawing"] == false {
            break report;
        }
        anyhow::ensure!(
            opened.elapsed() < Duration::from_secs(1800),
            "the draw is not done: {report}"
        );
        tokio::time::sleep(REPORT_EVERY).await;
    };
    let took_s = opened.elapsed().as_secs_f64();
    let spent = |before: Option<Duration>, after: Option<Duration>| {
        Some(after?.checked_sub(before?)?.as_secs_f64())
    };
    let cpu_s = spent(cpu, room.cpu_time());
    let main_cpu_s = spent(main, room.main_thread_cpu_time());
    anyhow::ensure!(report["drawn"] == size, "not everyone placed: {report}");
    let batches = report["drawBatches"].as_u64().context("the batches")?;

    let seed_hex = report["drawSeed"].as_str().context("a seed")?.to_owned();
    let mut seed = [0u8; SEED_BYTES];
    hex::decode_to_slice(&seed_hex, &mut seed)?;
    let mut kept = Vec::with_capacity(size as usize);
    while (kept.len() as u64) < size {
        let page = room
            .call(
                &event,
                &json!({ "op": "drawList", "from": kept.len(), "limit": PAGE }),
            )
            .await?;
        let people = page["people"].as_array().context("people")?;
        anyhow::ensure!(!people.is_empty(), "the kept list ends at {}", kept.len());
        kept.extend(
            people
                .iter()
                .filter_map(|user| user.as_str().map(str::to_owned)),
        );
    }
    let users: Vec<String> = (0..size).map(|n| format!("u{n}")).collect();
    let order = draw::order(seed, &users);
    let rederived = draw::order(seed, &kept) == order && kept == order;
    let mut places_agree = true;
    for at in (0..size).step_by((size / 100).max(1) as usize) {
        let user = &order[at as usize];
        let status = room
            .call(&event, &json!({ "op": "status", "user": user }))
            .await?;
        places_agree &= status["position"].as_u64() == Some(at + 1);
    }
    Ok(Drawn {
        size,
        fill_s,
        took_s,
        batches,
        longest_wait_ms: longest_wait.as_secs_f64() * 1000.0,
        cpu_s,
        main_cpu_s,
        rederived,
        places_agree,
    })
}

fn markdown(rows: &[Drawn]) -> String {
    let seconds = |value: Option<f64>| value.map_or("—".to_owned(), |s| format!("{s:.1} s"));
    let per_batch = |value: Option<f64>, batches: u64| {
        value.map_or("—".to_owned(), |s| {
            format!("{:.0} ms", s * 1000.0 / batches.max(1) as f64)
        })
    };
    let mut text = String::from(
        "# A prequeue drawn at a million\n\n\
         Generated by `cargo run --release -p lab -- draw`. **Runtime**: the edge as \
         `scripts/build-edge` builds it under `workerd serve`, its objects' SQLite on tmpfs, \
         on this 2-core machine, with the default `QUEUE_DRAW_BATCH` (10,000 people ranked \
         or placed per call); a driver Worker beside it (`lab/src/room/driver.js`) \
         configures one room per size with an opening an hour ahead, fills its prequeue \
         with `u0`, `u1`, … (32 calls at a time), then moves the opening 2 s ahead. From \
         the opening the room's alarm runs the draw batch by batch: ranking everyone, then \
         placing them in rank order. *Took* is from the opening until the room reported \
         the draw done (asked once a second); *longest wait* is the longest any of those \
         reports waited for the room meanwhile — about one batch, plus the report's own \
         count of the prequeue; *CPU* is workerd's over the draw (`/proc`, all threads; the \
         main thread's apart), and per batch its mean. *Re-derived*: the list the room \
         keeps (`GET /admin/events/{eventId}/draw`) is the prequeue, and \
         `rules::queue::draw::order` of the seed and it is that list; *places*: 100 \
         people spread over the order are at their derived positions.\n\n\
         | prequeued | filled in | took | batches | longest wait | CPU (main thread) | CPU per batch (main) | re-derived | places |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        text.push_str(&format!(
            "| {} | {:.0} s | {:.1} s | {} | {:.0} ms | {} ({}) | {} ({}) | {} | {} |\n",
            row.size,
            row.fill_s,
            row.took_s,
            row.batches,
            row.longest_wait_ms,
            seconds(row.cpu_s),
            seconds(row.main_cpu_s),
            per_batch(row.cpu_s, row.batches),
            per_batch(row.main_cpu_s, row.batches),
            if row.rederived { "yes" } else { "**no**" },
            if row.places_agree { "yes" } else { "**no**" },
        ));
    }
    text
}

pub async fn report(out: &Path) -> anyhow::Result<()> {
    let room = Room::start().await?;
    let mut rows = Vec::new();
    for size in SIZES {
        let drawn = draw_once(&room, size).await?;
        println!(
            "{size}: drawn in {:.1} s, {} batches",
            drawn.took_s, drawn.batches
        );
        rows.push(drawn);
    }
    let text = markdown(&rows);
    std::fs::write(out, &text)?;
    println!("{text}");
    Ok(())
}
