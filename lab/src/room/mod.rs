//! `lab room`: one waiting room filled to 10^3, 10^5 and 10^6 in workerd, straight
//! through its object by a driver Worker served beside the edge (`driver.js`), so no
//! session object is made per person. At each size: workerd's resident memory, how many
//! enters a second the room took, a status call's latency, positions checked against the
//! arrival order, and the snapshot's size and fetch time; then a restart (`kill -9`, the
//! same storage) and the time to the first answer. Writes `docs/room-at-a-million.md`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use harness::ports::{free_ports, held_socket};
use harness::services::Services;
use harness::workerd::{self, Driver, Worker, EDGE_OBJECTS};
use serde_json::Value;

use crate::stats::percentile;

const EVENT: &str = "million";
const SIZES: [u64; 3] = [1_000, 100_000, 1_000_000];
/// Enters per driver request, and how many of them it has out at once.
const CHUNK: u64 = 25_000;
const PARALLEL: u32 = 32;
/// Status calls timed at each size.
const CALLS: usize = 200;
const DRIVER: &str = include_str!("driver.js");
const WORKERD: &str = "workerd";

/// The edge in workerd with the driver beside it, on storage that outlives a restart.
struct Room {
    services: Services,
    dir: tempfile::TempDir,
    port: u16,
    driver: u16,
    http: reqwest::Client,
}

impl Room {
    async fn start() -> anyhow::Result<Room> {
        workerd::build(None)?;
        let dir = tempfile::tempdir_in("/dev/shm").context("a folder on tmpfs")?;
        let socket = held_socket()?;
        let [driver] = free_ports()?;
        let mut room = Room {
            services: Services::new(dir.path()),
            port: socket.local_addr()?.port(),
            dir,
            driver,
            // No connection kept idle: workerd closes them on its own schedule, and a
            // request sent on one as it does gets no answer.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .timeout(Duration::from_secs(600))
                .build()?,
        };
        room.launch(socket).await?;
        Ok(room)
    }

    async fn launch(&mut self, socket: std::net::TcpListener) -> anyhow::Result<()> {
        let vars = crate::edge::own_vars(
            "http://127.0.0.1:9",
            "lab-room-edge-secret-0123456789abcdef",
        );
        let build = harness::workspace().join("build");
        let command = workerd::command(
            &Worker {
                build: &build,
                dir: self.dir.path(),
                vars: &vars,
                durable_objects: &EDGE_OBJECTS,
                objects_down: false,
                inspector: None,
                driver: Some(Driver {
                    port: self.driver,
                    module: DRIVER,
                }),
                twin: None,
            },
            &socket,
        )?;
        self.services.spawn(WORKERD, command)?;
        drop(socket);
        let health = format!("http://127.0.0.1:{}/healthz", self.port);
        self.services
            .wait_until_healthy(&self.http, &health, Duration::from_secs(60))
            .await
    }

    /// `kill -9` and a start on the same storage: how long until the room answered again.
    async fn restart(&mut self) -> anyhow::Result<Duration> {
        self.services.kill(WORKERD)?;
        let socket = std::net::TcpListener::bind(("127.0.0.1", self.port))?;
        let started = Instant::now();
        self.launch(socket).await?;
        self.status(0).await?;
        Ok(started.elapsed())
    }

    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        let url = format!("http://127.0.0.1:{}{path}", self.driver);
        let answer = self.http.get(&url).send().await.with_context(|| {
            let log = self.services.log(WORKERD);
            let lines: Vec<&str> = log.lines().collect();
            format!(
                "workerd's log ends:\n{}",
                lines[lines.len().saturating_sub(15)..].join("\n")
            )
        })?;
        anyhow::ensure!(answer.status().is_success(), "{url}: {}", answer.status());
        Ok(answer.json().await?)
    }

    async fn fill(&self, from: u64, count: u64) -> anyhow::Result<()> {
        let filled = self
            .get(&format!(
                "/fill?event={EVENT}&from={from}&count={count}&parallel={PARALLEL}"
            ))
            .await?;
        anyhow::ensure!(filled["failed"] == 0, "entering failed: {filled}");
        Ok(())
    }

    /// The position of `u{user}`, as the room answers it.
    async fn status(&self, user: u64) -> anyhow::Result<u64> {
        let status = self
            .get(&format!("/call?event={EVENT}&op=status&user=u{user}"))
            .await?;
        status["answer"]["position"]
            .as_u64()
            .with_context(|| format!("no position for u{user}: {status}"))
    }

    /// The edge isolate's WebAssembly memory, as its `/healthz` says, in MB.
    async fn wasm_mb(&self) -> anyhow::Result<f64> {
        let url = format!("http://127.0.0.1:{}/healthz", self.port);
        let health: Value = self.http.get(&url).send().await?.json().await?;
        let bytes = health["wasmMemoryBytes"]
            .as_f64()
            .with_context(|| format!("no wasmMemoryBytes in {health}"))?;
        Ok(bytes / 1e6)
    }

    /// workerd's resident memory, from `/proc`.
    fn resident_mb(&self) -> Option<f64> {
        let pid = self.services.pid(WORKERD)?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kb: f64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb / 1024.0)
    }
}

/// What was measured at one size.
struct Figures {
    size: u64,
    resident_mb: Option<f64>,
    wasm_mb: f64,
    enters_per_s: f64,
    status_p50_ms: f64,
    status_p99_ms: f64,
    exact: bool,
    snapshot_bytes: u64,
    snapshot_ms: f64,
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
        let mut latencies = Vec::new();
        let mut exact = true;
        for i in 0..CALLS as u64 {
            let user = i * (size / CALLS as u64);
            let asked = Instant::now();
            let position = room.status(user).await?;
            latencies.push(asked.elapsed());
            exact &= position == user + 1;
        }
        let asked = Instant::now();
        let snapshot = room.get(&format!("/snapshot?event={EVENT}")).await?;
        let snapshot_ms = asked.elapsed().as_secs_f64() * 1e3;
        rows.push(Figures {
            size,
            resident_mb: room.resident_mb(),
            wasm_mb: room.wasm_mb().await?,
            enters_per_s,
            status_p50_ms: percentile(latencies.clone(), 50.0),
            status_p99_ms: percentile(latencies, 99.0),
            exact,
            snapshot_bytes: snapshot["bytes"].as_u64().unwrap_or_default(),
            snapshot_ms,
        });
        println!("{size} in line: done");
    }
    let restart = room.restart().await?;
    let mut exact_after = true;
    for i in 0..CALLS as u64 {
        let user = i * (filled / CALLS as u64);
        exact_after &= room.status(user).await? == user + 1;
    }
    let version = workerd::version().unwrap_or_else(|err| format!("unknown ({err})"));
    let text = markdown(&rows, idle_mb, restart, exact_after, &version);
    std::fs::write(out, &text)?;
    println!("{text}");
    Ok(())
}

fn markdown(
    rows: &[Figures],
    idle_mb: Option<f64>,
    restart: Duration,
    exact_after: bool,
    version: &str,
) -> String {
    let mb = |value: Option<f64>| value.map_or("—".to_owned(), |mb| format!("{mb:.0} MB"));
    let mut text = format!(
        "# One waiting room at a million\n\n\
         Reproduce: `cargo run --release -p lab -- room` (it starts and stops its own workerd; \
         rewrites this page).\n\n\
         **Runtime**: the edge as `scripts/build-edge` builds it under `workerd serve` ({version}), \
         its objects' SQLite on tmpfs, on this 2-core machine; a driver Worker beside it \
         (`lab/src/room/driver.js`) calls one room's object as the edge does — without the \
         edge's routes or a session object per person — {PARALLEL} calls at a time. Users \
         `u0`, `u1`, … enter in order, so `uN` stands at N + 1: *exact* checks {CALLS} of them \
         spread over the line. *Resident* is workerd's whole process (`VmRSS`: the Worker's, \
         the driver's and every object's isolate, SQLite's page cache) — {} idle; *wasm* is the \
         edge isolate's WebAssembly memory (its `/healthz`), everything the Rust side holds — \
         the Worker and the room alike — at its high-water mark. One run.\n\n\
         | in line | resident | wasm | enters/s (filling up to it) | status call p50 / p99 | exact | snapshot | snapshot fetch |\n\
         |---|---|---|---|---|---|---|---|\n",
        mb(idle_mb)
    );
    for row in rows {
        let _ = writeln!(
            text,
            "| {} | {} | {:.1} MB | {:.0} | {:.2} / {:.2} ms | {} | {} bytes | {:.1} ms |",
            row.size,
            mb(row.resident_mb),
            row.wasm_mb,
            row.enters_per_s,
            row.status_p50_ms,
            row.status_p99_ms,
            if row.exact { "yes" } else { "**no**" },
            row.snapshot_bytes,
            row.snapshot_ms,
        );
    }
    let _ = writeln!(
        text,
        "\nRestart (`kill -9`, the same storage) to the room's first answer: {:.2} s, \
         workerd's own start included; positions exact after it: {}.",
        restart.as_secs_f64(),
        if exact_after { "yes" } else { "**no**" }
    );
    text
}
