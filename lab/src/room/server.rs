//! The workerd `lab room` measures: the edge, the driver beside it (`driver.js`), and the
//! inspector, on storage that outlives a restart.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use harness::ports::{free_ports, held_socket};
use harness::services::Services;
use harness::workerd::{self, Driver, Worker, EDGE_OBJECTS};
use serde_json::Value;

use super::{EVENT, PARALLEL};

const DRIVER: &str = include_str!("driver.js");
const WORKERD: &str = "workerd";

pub struct Room {
    services: Services,
    dir: tempfile::TempDir,
    port: u16,
    driver: u16,
    inspector: u16,
    /// The driver's client, and the edge's (connections kept, as the cost table's).
    pub http: reqwest::Client,
    pub edge_http: reqwest::Client,
}

/// The edge isolate's V8 heap, as its inspector says (`scripts/isolate-heap.mjs`), in MB.
pub struct Heap {
    /// What the isolate holds: used after full collections.
    pub used_mb: f64,
    /// Used and committed as the heap was found, garbage included.
    pub found_mb: f64,
    pub found_total_mb: f64,
    /// ArrayBuffers' backing stores, the WebAssembly memory among them.
    pub backing_mb: f64,
}

impl Room {
    pub async fn start() -> anyhow::Result<Room> {
        workerd::build(None)?;
        let dir = tempfile::tempdir_in("/dev/shm").context("a folder on tmpfs")?;
        let socket = held_socket()?;
        let [driver, inspector] = free_ports()?;
        let mut room = Room {
            services: Services::new(dir.path()),
            port: socket.local_addr()?.port(),
            dir,
            driver,
            inspector,
            // No connection kept idle: workerd closes them on its own schedule, and a
            // request sent on one as it does gets no answer.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .timeout(Duration::from_secs(600))
                .build()?,
            edge_http: crate::cost::client()?,
        };
        room.launch(socket).await?;
        Ok(room)
    }

    async fn launch(&mut self, socket: std::net::TcpListener) -> anyhow::Result<()> {
        let mut vars = crate::edge::own_vars(
            "http://127.0.0.1:9",
            "lab-room-edge-secret-0123456789abcdef",
        );
        vars.push(("RATE_LIMITED_ROUTES", crate::cost::OPEN_LIMITS.to_owned()));
        // The rooms' events are defined, so their queues exist at the edge's own routes
        // (`lab shards` drives its own, and polls them through the edge).
        vars.push((
            "GATED_EVENTS",
            format!("{},driven-1,driven-8,driven-64", super::EVENT),
        ));
        let build = harness::workspace().join("build");
        let command = workerd::command(
            &Worker {
                build: &build,
                dir: self.dir.path(),
                vars: &vars,
                durable_objects: &EDGE_OBJECTS,
                objects_down: &[],
                inspector: Some(self.inspector),
                driver: Some(Driver {
                    port: self.driver,
                    module: DRIVER,
                }),
                twin: None,
                trusted_certificates: &[],
            },
            &socket,
        )?;
        self.services.spawn(WORKERD, command)?;
        drop(socket);
        self.services
            .wait_until_healthy(&self.http, &self.url("/healthz"), Duration::from_secs(60))
            .await
    }

    /// The edge's `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `kill -9` and a start on the same storage: how long until the room answered again.
    pub async fn restart(&mut self) -> anyhow::Result<Duration> {
        self.services.kill(WORKERD)?;
        let socket = std::net::TcpListener::bind(("127.0.0.1", self.port))?;
        let started = Instant::now();
        self.launch(socket).await?;
        self.status(0).await?;
        Ok(started.elapsed())
    }

    /// The driver's `path`, its JSON.
    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
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

    /// The driver's `path` POSTed `body`: its JSON.
    pub async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let url = format!("http://127.0.0.1:{}{path}", self.driver);
        let answer = self.http.post(&url).json(body).send().await?;
        anyhow::ensure!(answer.status().is_success(), "{url}: {}", answer.status());
        Ok(answer.json().await?)
    }

    /// Enters `u{from}`… `u{from + count - 1}` straight into the room.
    pub async fn fill(&self, from: u64, count: u64) -> anyhow::Result<()> {
        self.fill_room(EVENT, from, count).await
    }

    /// [`Room::fill`], into the room of `event`.
    pub async fn fill_room(&self, event: &str, from: u64, count: u64) -> anyhow::Result<()> {
        let filled = self
            .get(&format!(
                "/fill?event={event}&from={from}&count={count}&parallel={PARALLEL}"
            ))
            .await?;
        anyhow::ensure!(filled["failed"] == 0, "entering failed: {filled}");
        Ok(())
    }

    /// The room of `event` called with `request` (a `RoomRequest`, as JSON): its answer.
    pub async fn call(&self, event: &str, request: &Value) -> anyhow::Result<Value> {
        use base64::Engine as _;
        let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(request.to_string());
        let answer = self
            .get(&format!("/raw?event={event}&request={text}"))
            .await?;
        anyhow::ensure!(answer["ok"] == true, "{request} failed: {answer}");
        Ok(answer["answer"].clone())
    }

    /// The position of `u{user}`, as the room answers it.
    pub async fn status(&self, user: u64) -> anyhow::Result<u64> {
        let status = self
            .get(&format!("/call?event={EVENT}&op=status&user=u{user}"))
            .await?;
        status["answer"]["position"]
            .as_u64()
            .with_context(|| format!("no position for u{user}: {status}"))
    }

    /// The count `name` of the edge's `/healthz`.
    pub async fn health(&self, name: &str) -> anyhow::Result<f64> {
        let health: Value = self
            .http
            .get(self.url("/healthz"))
            .send()
            .await?
            .json()
            .await?;
        health[name]
            .as_f64()
            .with_context(|| format!("no {name} in {health}"))
    }

    /// The edge isolate's heap, through the inspector (`scripts/isolate-heap.mjs`).
    pub fn heap(&self) -> anyhow::Result<Heap> {
        let output = std::process::Command::new("node")
            .arg("--experimental-websocket")
            .arg(harness::workspace().join("scripts/isolate-heap.mjs"))
            .arg(format!("127.0.0.1:{}", self.inspector))
            .arg("worker")
            .arg(self.url("/healthz"))
            .output()
            .context("running node scripts/isolate-heap.mjs")?;
        anyhow::ensure!(
            output.status.success(),
            "isolate-heap.mjs: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let heap: Value = serde_json::from_slice(&output.stdout)?;
        let mb = |name: &str| {
            heap[name]
                .as_f64()
                .map(|bytes| bytes / 1e6)
                .with_context(|| format!("no {name} in {heap}"))
        };
        Ok(Heap {
            used_mb: mb("usedBytes")?,
            found_mb: mb("foundBytes")?,
            found_total_mb: mb("foundTotalBytes")?,
            backing_mb: mb("backingStorageBytes")?,
        })
    }

    /// workerd's CPU time so far, all its threads.
    pub fn cpu_time(&self) -> Option<Duration> {
        crate::process::cpu_time(self.services.pid(WORKERD)?)
    }

    /// workerd's main thread's CPU time so far: the isolates' own work, without V8's
    /// helper threads (its compilers, its concurrent collector) or the runtime's others.
    pub fn main_thread_cpu_time(&self) -> Option<Duration> {
        crate::process::main_thread_cpu_time(self.services.pid(WORKERD)?)
    }

    /// workerd's resident memory, in MB.
    pub fn resident_mb(&self) -> Option<f64> {
        crate::process::resident_mb(self.services.pid(WORKERD)?)
    }
}
