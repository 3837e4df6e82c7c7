//! A merchant's webhook endpoint per test: `harness/receiver/merchant_receiver.py`, on the
//! python of the venv `scripts/bootstrap --webhooks` installs (`target/webhooks-venv`),
//! which verifies every delivery with the `standardwebhooks` library from PyPI — not with
//! the project's code — and refuses (400) what it cannot verify. A test makes it
//! misbehave ([`MerchantReceiver::set_mode`]), takes it down and brings it back on the same
//! port with what it had received ([`MerchantReceiver::stop`],
//! [`MerchantReceiver::restart`]).
//!
//! Its port is held by a bound socket that never listens ([`ReservedPort`]) for the
//! receiver's whole life, so while it is down a delivery's connection is refused and no
//! other service is handed the port.
//!
//! When the venv is missing or the receiver does not start, [`MerchantReceiver::start`]
//! panics saying why: the tests that need it are never skipped.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::ports::ReservedPort;
use crate::services::Services;

const NAME: &str = "merchant-receiver";
/// Starts that lose their port to another process before binding it, tried again.
const PORT_ATTEMPTS: usize = 5;
/// Python takes a moment to start on a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// For the receiver's own routes, which answer at once whatever the mode.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

pub struct MerchantReceiver {
    secret: String,
    port: ReservedPort,
    http: reqwest::Client,
    services: Services,
    dir: tempfile::TempDir,
}

impl MerchantReceiver {
    /// A receiver with nothing received yet, verifying with `secret` (`whsec_<base64>`),
    /// answering `ok`.
    pub async fn start(secret: &str) -> MerchantReceiver {
        assert!(
            python().exists(),
            "{} is not there: run scripts/bootstrap --webhooks",
            python().display()
        );
        let dir = tempfile::Builder::new()
            .prefix("merchant-receiver-")
            .tempdir()
            .unwrap_or_else(|err| panic!("merchant receiver: no temporary folder: {err}"));
        let mut receiver = MerchantReceiver {
            secret: secret.to_owned(),
            port: reserve(),
            http: reqwest::Client::new(),
            services: Services::new(dir.path()),
            dir,
        };
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            match receiver.run().await {
                Ok(()) => return receiver,
                Err(err) => last_failure = format!("{err:#}"),
            }
            receiver.port = reserve();
        }
        panic!("the merchant receiver did not start in {PORT_ATTEMPTS} attempts; the last:\n{last_failure}");
    }

    /// The endpoint to deliver to, `http://127.0.0.1:PORT/webhooks`.
    pub fn url(&self) -> String {
        format!("{}/webhooks", self.base())
    }

    /// How it answers verified deliveries from now on: `ok`, `error`, `gone`, `hang` or
    /// `huge`.
    pub async fn set_mode(&self, mode: &str) {
        let response = self
            .http
            .post(format!("{}/control", self.base()))
            .json(&json!({ "mode": mode }))
            .timeout(CALL_TIMEOUT)
            .send()
            .await
            .unwrap_or_else(|err| panic!("merchant receiver: setting mode {mode}: {err}"));
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "merchant receiver: mode {mode}: {status} {body}"
        );
    }

    /// Every verified delivery in arrival order, each `{webhookId, timestamp, signatures,
    /// body, receivedAtMs, mode}` (the headers as sent, the body parsed, the mode it was
    /// answered in).
    pub async fn deliveries(&self) -> Value {
        self.listing().await["deliveries"].take()
    }

    /// How many deliveries it refused as unverifiable.
    pub async fn refused(&self) -> u64 {
        let refused = &self.listing().await["refused"];
        refused
            .as_u64()
            .unwrap_or_else(|| panic!("merchant receiver: refused is {refused}"))
    }

    /// Kills it: connections to [`Self::url`] are refused until [`Self::restart`].
    pub fn stop(&mut self) {
        if let Err(err) = self.services.kill(NAME) {
            panic!("merchant receiver: {err:#}");
        }
    }

    /// Starts it again on the same port with what it had received, answering `ok`.
    pub async fn restart(&mut self) {
        if let Err(err) = self.run().await {
            panic!("the merchant receiver did not start again: {err:#}");
        }
    }

    /// What it has logged so far (one line a request).
    pub fn log(&self) -> String {
        self.services.log(NAME)
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port.port())
    }

    async fn run(&mut self) -> anyhow::Result<()> {
        let script = crate::workspace().join("harness/receiver/merchant_receiver.py");
        let mut command = Command::new(python());
        command
            .arg(script)
            .args(["--port", &self.port.port().to_string()])
            .args(["--secret", &self.secret])
            .arg("--state")
            .arg(self.dir.path().join("received.jsonl"));
        self.services.spawn(NAME, command)?;
        let health = format!("{}/healthz", self.base());
        self.services
            .wait_until_healthy(&self.http, &health, START_TIMEOUT)
            .await
    }

    async fn listing(&self) -> Value {
        let response = self
            .http
            .get(format!("{}/deliveries", self.base()))
            .timeout(CALL_TIMEOUT)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .unwrap_or_else(|err| panic!("merchant receiver: listing deliveries: {err}"));
        response
            .json()
            .await
            .unwrap_or_else(|err| panic!("merchant receiver: its listing: {err}"))
    }
}

fn reserve() -> ReservedPort {
    ReservedPort::new().unwrap_or_else(|err| panic!("merchant receiver: no port: {err:#}"))
}

fn python() -> PathBuf {
    crate::workspace().join("target/webhooks-venv/bin/python")
}
