//! An identity provider's key set endpoint per test: `harness/jwks/jwks_server.py` on the
//! machine's `python3` (the standard library only), serving over https on loopback with
//! the committed test certificate (`testdata/jwks/tls/`), which the edge's workerd is told
//! to trust ([`JwksServer::ca_certificate`], `harness::workerd::Worker::trusted_certificates`).
//! The test says what it answers ([`JwksServer::serve`], [`JwksServer::set_mode`]) and
//! counts what the edge fetched ([`JwksServer::fetches`]) on a second, plain-http port of
//! its own.
//!
//! The certificate is committed rather than made at test time: no `openssl` is needed to
//! run the tests, and it is valid until 2126, for `127.0.0.1` and `localhost`.
//!
//! When the server does not start, [`JwksServer::start`] panics saying why: the tests that
//! need it are never skipped.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::ports::ReservedPort;
use crate::services::Services;

const NAME: &str = "jwks-server";
/// Starts that lose a port to another process before binding it, tried again.
const PORT_ATTEMPTS: usize = 5;
/// Python takes a moment to start on a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// For the server's own control routes, which answer at once whatever the mode.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The path the edge is given.
const PATH: &str = "/.well-known/jwks.json";

pub struct JwksServer {
    port: ReservedPort,
    control: ReservedPort,
    http: reqwest::Client,
    services: Services,
    _dir: tempfile::TempDir,
}

impl JwksServer {
    /// A server answering `{"keys":[]}` until told otherwise.
    pub async fn start() -> JwksServer {
        let dir = tempfile::Builder::new()
            .prefix("jwks-server-")
            .tempdir()
            .unwrap_or_else(|err| panic!("jwks server: no temporary folder: {err}"));
        let mut server = JwksServer {
            port: reserve(),
            control: reserve(),
            http: reqwest::Client::new(),
            services: Services::new(dir.path()),
            _dir: dir,
        };
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            match server.run().await {
                Ok(()) => return server,
                Err(err) => last_failure = format!("{err:#}"),
            }
            (server.port, server.control) = (reserve(), reserve());
        }
        panic!(
            "the jwks server did not start in {PORT_ATTEMPTS} attempts; the last:\n{last_failure}"
        );
    }

    /// The key set's https URL on `127.0.0.1`: `JWT_JWKS_URL`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}{PATH}", self.port.port())
    }

    /// The same on `localhost`.
    pub fn url_by_name(&self) -> String {
        format!("https://localhost:{}{PATH}", self.port.port())
    }

    /// The CA certificate (PEM) that signed the server's.
    pub fn ca_certificate() -> String {
        let path = crate::workspace().join("testdata/jwks/tls/ca.pem");
        std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("jwks server: {}: {err}", path.display()))
    }

    /// Answers every fetch from now on with `body`, and `cache_control` when given.
    pub async fn serve(&self, body: &str, cache_control: Option<&str>) {
        self.control(json!({ "mode": "serve", "body": body, "cacheControl": cache_control }))
            .await;
    }

    /// Answers every fetch from now on as `mode` says: `hang` (never), `garbage` (not
    /// JSON), `error` (500) or `huge` (1 MiB).
    pub async fn set_mode(&self, mode: &str) {
        self.control(json!({ "mode": mode })).await;
    }

    /// How many fetches of the key set it has had.
    pub async fn fetches(&self) -> u64 {
        let response = self
            .http
            .get(format!("{}/fetches", self.control_base()))
            .timeout(CALL_TIMEOUT)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .unwrap_or_else(|err| panic!("jwks server: counting fetches: {err}"));
        let counted: Value = response
            .json()
            .await
            .unwrap_or_else(|err| panic!("jwks server: its count: {err}"));
        counted["fetches"]
            .as_u64()
            .unwrap_or_else(|| panic!("jwks server: fetches is {counted}"))
    }

    /// What it has logged so far (a line a request).
    pub fn log(&self) -> String {
        self.services.log(NAME)
    }

    async fn control(&self, asked: Value) {
        let response = self
            .http
            .post(format!("{}/control", self.control_base()))
            .json(&asked)
            .timeout(CALL_TIMEOUT)
            .send()
            .await
            .unwrap_or_else(|err| panic!("jwks server: {asked}: {err}"));
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "jwks server: {asked}: {status} {body}");
    }

    fn control_base(&self) -> String {
        format!("http://127.0.0.1:{}", self.control.port())
    }

    async fn run(&mut self) -> anyhow::Result<()> {
        let root = crate::workspace();
        let mut command = Command::new("python3");
        command
            .arg(root.join("harness/jwks/jwks_server.py"))
            .args(["--port", &self.port.port().to_string()])
            .args(["--control-port", &self.control.port().to_string()])
            .arg("--cert")
            .arg(root.join("testdata/jwks/tls/server.pem"))
            .arg("--key")
            .arg(root.join("testdata/jwks/tls/server.key"));
        self.services.spawn(NAME, command)?;
        let health = format!("{}/healthz", self.control_base());
        self.services
            .wait_until_healthy(&self.http, &health, START_TIMEOUT)
            .await
    }
}

fn reserve() -> ReservedPort {
    ReservedPort::new().unwrap_or_else(|err| panic!("jwks server: no port: {err:#}"))
}
