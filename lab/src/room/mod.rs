//! `lab room`: one waiting room filled to 10^3, 10^5 and 10^6 in workerd, straight
//! through its object by a driver Worker served beside the edge (`driver.js`), so no
//! session object is made per person. At each size: the edge isolate's heap and
//! workerd's resident memory, how many enters a second the room took, a status call's
//! latency, positions checked against the arrival order, the snapshot's size and fetch
//! time; then through the edge's own routes (`edge_path.rs`): ticket polls' CPU against
//! `/healthz`'s and what they cost the room, against polls without a ticket. Then a
//! restart (`kill -9`, the same storage) and the time to the first answer, and enters
//! through the edge. Writes `docs/room-at-a-million.md` (`page.rs`).

pub mod draw;
pub(crate) mod edge_path;
mod page;
pub(crate) mod server;

use std::path::Path;
use std::time::Instant;

use crate::stats::percentile;
use server::{Heap, Room};

const EVENT: &str = "million";
const SIZES: [u64; 3] = [1_000, 100_000, 1_000_000];
/// Enters per driver request, and how many of them it has out at once.
pub(crate) const CHUNK: u64 = 25_000;
const PARALLEL: u32 = 32;
/// Status calls timed at each size.
const CALLS: usize = 200;

/// What was measured at one size.
struct Figures {
    size: u64,
    resident_mb: Option<f64>,
    heap: Heap,
    /// The edge isolate's WebAssembly memory, as its `/healthz` says.
    wasm_mb: f64,
    enters_per_s: f64,
    status_p50_ms: f64,
    status_p99_ms: f64,
    exact: bool,
    snapshot_bytes: u64,
    /// The first fetch after the fill (built), and the next (kept).
    snapshot_built_ms: f64,
    snapshot_kept_ms: f64,
    polls: edge_path::Polls,
}

/// The room's calls to `u{user}` for the users spread over the line of `size`: whether
/// each stands at N + 1, and the calls' latencies.
async fn check_positions(
    room: &Room,
    size: u64,
) -> anyhow::Result<(bool, Vec<std::time::Duration>)> {
    let mut latencies = Vec::new();
    let mut exact = true;
    for i in 0..CALLS as u64 {
        let user = i * (size / CALLS as u64);
        let asked = Instant::now();
        let position = room.status(user).await?;
        latencies.push(asked.elapsed());
        exact &= position == user + 1;
    }
    Ok((exact, latencies))
}

/// The snapshot's size, and how long a fetch took.
async fn fetch_snapshot(room: &Room) -> anyhow::Result<(u64, f64)> {
    let asked = Instant::now();
    let snapshot = room.get(&format!("/snapshot?event={EVENT}")).await?;
    let ms = asked.elapsed().as_secs_f64() * 1e3;
    Ok((snapshot["bytes"].as_u64().unwrap_or_default(), ms))
}

pub async fn report(out: &Path) -> anyhow::Result<()> {
    let mut room = Room::start().await?;
    let idle_mb = room.resident_mb();
    let mut rows = Vec::new();
    let mut filled = 0;
    for size in SIZES {
        let started = Instant::now();
        while filled < size {
            let count = CHUNK.min(size - filled);
            room.fill(filled, count).await?;
            filled += count;
        }
        let entered = size - rows.last().map_or(0, |row: &Figures| row.size);
        let enters_per_s = entered as f64 / started.elapsed().as_secs_f64();
        let (snapshot_bytes, snapshot_built_ms) = fetch_snapshot(&room).await?;
        let (_, snapshot_kept_ms) = fetch_snapshot(&room).await?;
        let (exact, latencies) = check_positions(&room, size).await?;
        let polls = edge_path::polls(&room, size).await?;
        rows.push(Figures {
            size,
            resident_mb: room.resident_mb(),
            heap: room.heap()?,
            wasm_mb: room.health("wasmMemoryBytes").await? / 1e6,
            enters_per_s,
            status_p50_ms: percentile(latencies.clone(), 50.0),
            status_p99_ms: percentile(latencies, 99.0),
            exact,
            snapshot_bytes,
            snapshot_built_ms,
            snapshot_kept_ms,
            polls,
        });
        println!("{size} in line: done");
    }
    let restart = room.restart().await?;
    let (exact_after, _) = check_positions(&room, filled).await?;
    let enters = edge_path::enters(&room).await?;
    let text = page::markdown(&page::Run {
        rows: &rows,
        idle_mb,
        restart,
        exact_after,
        enters: &enters,
    });
    std::fs::write(out, &text)?;
    println!("{text}");
    Ok(())
}
