//! The real processes an experiment runs against — the gateway simulator and the origin
//! (release builds), on free loopback ports, with a throwaway SQLite database — and
//! their clients: the origin signed as the edge signs, its metrics and operator routes,
//! the simulator's faults and ledger. Everything started is stopped when dropped.

use std::process::Command;
use std::time::Duration;

use anyhow::bail;
use harness::ports::free_ports;
use harness::services::Services;
use harness::signed::{fresh_nonce, now_ms, signed_request};
pub use harness::{run_in_workspace, workspace};
use rules::signing::SignedRequest;
use serde_json::Value;

const EDGE_SECRET: &str = "lab-edge-origin-secret-0123456789abcdef";
const OPERATOR_TOKEN: &str = "lab-operator-token-0123456789abcdef";
const KEKS: &str = "v1:ERERERERERERERERERERERERERERERERERERERERERE=";
/// The simulator's default key, which the origin sends it: Toss's public test key.
const TOSS_TEST_KEY: &str = "test_sk_zXLkKEypNArWmo50nX3lmeaxYG5R";

/// How long a service may take to answer its health check after it starts.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

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

/// The simulator and one origin.
pub struct Stack {
    pub origin: String,
    pub metrics: String,
    /// The origin's operator listener.
    pub admin: String,
    pub sim: String,
    pub http: reqwest::Client,
    /// The origin's variables, for its commands.
    origin_env: Vec<(String, String)>,
    services: Services,
    _dir: tempfile::TempDir,
}

impl Stack {
    /// Starts both with the origin's variables `origin_env` over the lab's own, and
    /// waits until each answers its health check.
    pub async fn start(origin_env: &[(&str, String)]) -> anyhow::Result<Stack> {
        let dir = tempfile::tempdir()?;
        let [sim_port, origin_port, metrics_port, admin_port] = free_ports()?;
        let sim = format!("http://127.0.0.1:{sim_port}");
        let own = [
            ("ORIGIN_LISTEN", format!("127.0.0.1:{origin_port}")),
            ("ORIGIN_METRICS_LISTEN", format!("127.0.0.1:{metrics_port}")),
            ("ORIGIN_ADMIN_LISTEN", format!("127.0.0.1:{admin_port}")),
            (
                "DATABASE_URL",
                format!("sqlite://{}", dir.path().join("origin.sqlite3").display()),
            ),
            ("EDGE_SIGNING_SECRET", EDGE_SECRET.to_owned()),
            ("GATEWAY_URL", sim.clone()),
            // The simulator's default key: Toss's public test key.
            ("GATEWAY_SECRET_KEY", TOSS_TEST_KEY.to_owned()),
            ("OPERATOR_TOKEN", OPERATOR_TOKEN.to_owned()),
            ("ENCRYPTION_KEKS", KEKS.to_owned()),
            ("ENCRYPTION_CURRENT_KEK", "v1".to_owned()),
            ("RUST_LOG", "warn".to_owned()),
        ];
        let mut stack = Stack {
            origin: format!("http://127.0.0.1:{origin_port}"),
            metrics: format!("http://127.0.0.1:{metrics_port}"),
            admin: format!("http://127.0.0.1:{admin_port}"),
            sim,
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(1_000)
                .build()?,
            origin_env: own
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .chain(origin_env.iter().map(|(n, v)| ((*n).to_owned(), v.clone())))
                .collect(),
            services: Services::new(dir.path()),
            _dir: dir,
        };
        let mut sim = Command::new(harness::binary("release", "gateway-sim"));
        sim.env("GATEWAY_SIM_LISTEN", format!("127.0.0.1:{sim_port}"))
            .env("RUST_LOG", "warn");
        stack.services.spawn("gateway-sim", sim)?;
        let origin = stack.origin_command(&["serve"]);
        stack.services.spawn("origin", origin)?;
        for url in [&stack.sim, &stack.origin, &stack.metrics, &stack.admin] {
            let url = format!("{url}/healthz");
            stack
                .services
                .wait_until_healthy(&stack.http, &url, READY_TIMEOUT)
                .await?;
        }
        Ok(stack)
    }

    /// The release `origin` binary with `args`, run as this stack's origin runs.
    fn origin_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(harness::binary("release", "origin"));
        command
            .args(args)
            .envs(self.origin_env.iter().map(|(n, v)| (n, v)));
        command
    }

    /// A request to the origin signed as the edge signs it, for `user`. The lab's own
    /// methods, paths and ids are always signable.
    pub fn signed(
        &self,
        method: &str,
        path: &str,
        user: &str,
        key: &str,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        let nonce = fresh_nonce();
        let request = SignedRequest {
            method,
            path_and_query: path,
            timestamp_ms: now_ms(),
            nonce: &nonce,
            user_id: user,
            idempotency_key: key,
            request_id: "",
            pass: "",
            body,
        };
        signed_request(&self.http, &self.origin, EDGE_SECRET.as_bytes(), &request)
            .expect("the lab signs only what it wrote")
    }

    /// Creates (or sets) event `event_id` at the origin, as an operator does.
    pub async fn set_event(&self, event_id: &str, stock: u32, amount: i64) -> anyhow::Result<()> {
        self.set_drop(event_id, stock, amount, serde_json::Map::new())
            .await
    }

    /// [`Stack::set_event`] with its room's settings (`gated`, `admitLimit`,
    /// `admitPerMinute`, …), which the origin hands to the edge: the origin needs
    /// `EDGE_URL`, and the edge must be running.
    pub async fn set_drop(
        &self,
        event_id: &str,
        stock: u32,
        amount: i64,
        room: serde_json::Map<String, Value>,
    ) -> anyhow::Result<()> {
        let mut event = serde_json::json!({"eventId": event_id, "stock": stock, "amount": amount});
        if let Some(fields) = event.as_object_mut() {
            fields.extend(room);
        }
        let response = self
            .http
            .post(format!("{}/admin/events", self.admin))
            .bearer_auth(OPERATOR_TOKEN)
            .json(&event)
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("event {event} refused: {}", response.text().await?);
        }
        Ok(())
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

    /// The simulator's capacity now (`GET /admin/capacity`): confirms processing and
    /// waiting, and those it refused at a full line.
    pub async fn capacity(&self) -> anyhow::Result<Value> {
        Ok(self
            .http
            .get(format!("{}/admin/capacity", self.sim))
            .send()
            .await?
            .json()
            .await?)
    }

    /// An operator route of the origin.
    pub async fn operator_get(&self, path: &str) -> anyhow::Result<Value> {
        Ok(self
            .http
            .get(format!("{}{path}", self.admin))
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

    /// Adds a user as an operator does — `origin user add NAME`, with the running
    /// origin's database and keys; returns its id.
    pub fn add_user(&self, name: &str, password: &str) -> anyhow::Result<String> {
        harness::origin::add_user(self.origin_command(&[]), name, password)
    }
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

/// The value of the sample `name{labels}` in Prometheus text, if present.
pub fn metric(text: &str, name_and_labels: &str) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            (series == name_and_labels).then(|| value.parse().ok())?
        })
}
