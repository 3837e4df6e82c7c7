//! The real processes an experiment runs against — the gateway simulator and the origin
//! (release builds), on free loopback ports, with a throwaway SQLite database — and
//! their clients: the origin signed as the edge signs, its metrics and operator routes,
//! the simulator's faults and ledger. Everything started is stopped when dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context as _};
use rules::signing::SignedRequest;
use serde_json::Value;

const EDGE_SECRET: &str = "lab-edge-origin-secret-0123456789abcdef";
pub const OPERATOR_TOKEN: &str = "lab-operator-token-0123456789abcdef";
const KEKS: &str = "v1:ERERERERERERERERERERERERERERERERERERERERERE=";

/// Builds the origin and the simulator in release mode (a no-op when up to date).
pub fn build() -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "origin",
        "-p",
        "gateway-sim",
    ]);
    run_in_workspace(command, "cargo build --release -p origin -p gateway-sim")
}

/// Runs a build step in the workspace and waits for it; its failure is an error.
pub fn run_in_workspace(mut command: Command, what: &str) -> anyhow::Result<()> {
    let status = command
        .current_dir(workspace())
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("running {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The simulator and one origin.
pub struct Stack {
    pub origin: String,
    pub metrics: String,
    pub sim: String,
    pub http: reqwest::Client,
    children: Vec<Child>,
    _dir: tempfile::TempDir,
}

impl Stack {
    /// Starts both with the origin's variables `origin_env` over the lab's own, and
    /// waits until each answers its health check.
    pub async fn start(origin_env: &[(&str, String)]) -> anyhow::Result<Stack> {
        let dir = tempfile::tempdir()?;
        let bin = workspace().join("target/release");
        let [sim_port, origin_port, metrics_port] = [free_port()?, free_port()?, free_port()?];
        let sim = format!("http://127.0.0.1:{sim_port}");
        let log = |name: &str| std::fs::File::create(dir.path().join(format!("{name}.log")));
        let sim_child = Command::new(bin.join("gateway-sim"))
            .env("GATEWAY_SIM_LISTEN", format!("127.0.0.1:{sim_port}"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log("gateway-sim")?)
            .spawn()
            .context("starting gateway-sim: run `cargo build --release -p gateway-sim`")?;
        let mut origin = Command::new(bin.join("origin"));
        origin
            .arg("serve")
            .env("ORIGIN_LISTEN", format!("127.0.0.1:{origin_port}"))
            .env("ORIGIN_METRICS_LISTEN", format!("127.0.0.1:{metrics_port}"))
            .env(
                "DATABASE_URL",
                format!("sqlite://{}", dir.path().join("origin.sqlite3").display()),
            )
            .env("EDGE_SIGNING_SECRET", EDGE_SECRET)
            .env("GATEWAY_URL", &sim)
            .env("OPERATOR_TOKEN", OPERATOR_TOKEN)
            .env("ENCRYPTION_KEKS", KEKS)
            .env("ENCRYPTION_CURRENT_KEK", "v1")
            .env("RUST_LOG", "warn");
        for (name, value) in origin_env {
            origin.env(name, value);
        }
        let origin_child = origin
            .stdout(Stdio::null())
            .stderr(log("origin")?)
            .spawn()
            .context("starting origin: run `cargo build --release -p origin`")?;
        let stack = Stack {
            origin: format!("http://127.0.0.1:{origin_port}"),
            metrics: format!("http://127.0.0.1:{metrics_port}"),
            sim,
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(1_000)
                .build()?,
            children: vec![sim_child, origin_child],
            _dir: dir,
        };
        for url in [&stack.sim, &stack.origin, &stack.metrics] {
            stack.wait_until_healthy(url).await?;
        }
        Ok(stack)
    }

    async fn wait_until_healthy(&self, base: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let answer = self.http.get(format!("{base}/healthz")).send().await;
            if answer.is_ok_and(|response| response.status().is_success()) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("{base} did not become healthy within 30 s")
    }

    /// A request to the origin signed as the edge signs it, for `user`.
    pub fn signed(
        &self,
        method: &str,
        path: &str,
        user: &str,
        key: &str,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let nonce = format!(
            "{:016x}{:016x}",
            now_ms(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let timestamp_ms = now_ms() as i64;
        let request = SignedRequest {
            method,
            path_and_query: path,
            timestamp_ms,
            nonce: &nonce,
            user_id: user,
            idempotency_key: key,
            body,
        };
        let signature = request.sign(EDGE_SECRET.as_bytes()).unwrap_or_default();
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut builder = self
            .http
            .request(method, format!("{}{path}", self.origin))
            .header("x-edge-user", user)
            .header("x-edge-timestamp", timestamp_ms.to_string())
            .header("x-edge-nonce", nonce)
            .header("x-edge-signature", signature)
            .header("content-type", "application/json")
            .body(body.to_vec());
        if !key.is_empty() {
            builder = builder.header("idempotency-key", key);
        }
        builder
    }

    /// Sets the simulator's faults.
    pub async fn set_faults(&self, faults: Value) -> anyhow::Result<()> {
        let response = self
            .http
            .put(format!("{}/admin/faults", self.sim))
            .json(&faults)
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("faults {faults} refused: {}", response.text().await?);
        }
        Ok(())
    }

    /// The simulator's ledger.
    pub async fn ledger(&self) -> anyhow::Result<Value> {
        Ok(self
            .http
            .get(format!("{}/admin/ledger", self.sim))
            .send()
            .await?
            .json()
            .await?)
    }

    /// An operator route of the origin.
    pub async fn operator_get(&self, path: &str) -> anyhow::Result<Value> {
        Ok(self
            .http
            .get(format!("{}{path}", self.origin))
            .bearer_auth(OPERATOR_TOKEN)
            .send()
            .await?
            .json()
            .await?)
    }

    /// The origin's metrics, as Prometheus text.
    pub async fn metrics_text(&self) -> anyhow::Result<String> {
        Ok(self
            .http
            .get(format!("{}/metrics", self.metrics))
            .timeout(Duration::from_secs(2))
            .send()
            .await?
            .text()
            .await?)
    }

    /// The key the origin shares with the edge (its `EDGE_SIGNING_SECRET`): the edge's
    /// `ORIGIN_SIGNING_SECRET` for an edge started in front of this stack.
    pub fn edge_secret(&self) -> &'static str {
        EDGE_SECRET
    }

    /// Adds a user as an operator does — `origin user add NAME`, the password on its
    /// standard input, with the running origin's database and keys; returns its id.
    pub fn add_user(&self, name: &str, password: &str) -> anyhow::Result<String> {
        let mut child = Command::new(workspace().join("target/release/origin"))
            .args(["user", "add", name])
            .env(
                "DATABASE_URL",
                format!(
                    "sqlite://{}",
                    self._dir.path().join("origin.sqlite3").display()
                ),
            )
            .env("ENCRYPTION_KEKS", KEKS)
            .env("ENCRYPTION_CURRENT_KEK", "v1")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting origin user add")?;
        if let Some(mut stdin) = child.stdin.take() {
            std::io::Write::write_all(&mut stdin, format!("{password}\n").as_bytes())?;
        }
        let output = child.wait_with_output()?;
        if !output.status.success() {
            bail!(
                "origin user add {name} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        // "added user NAME with id ID"
        let stdout = String::from_utf8_lossy(&output.stdout);
        stdout
            .split_whitespace()
            .last()
            .map(str::to_owned)
            .context("origin user add printed no id")
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // Neither the origin nor the simulator starts processes of its own.
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The confirms a ledger says reached the simulator: (order id, `receivedAt` in epoch
/// ms), in the order received.
pub fn received(ledger: &Value) -> Vec<(String, u64)> {
    ledger["requests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r["orderId"].as_str()?.to_owned(), r["receivedAt"].as_u64()?)))
        .collect()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}

/// The value of the sample `name{labels}` in Prometheus text, if present.
pub fn metric(text: &str, name_and_labels: &str) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            (series == name_and_labels).then(|| value.parse().ok())?
        })
}
