//! A localstripe server per test — the fake Stripe the Stripe adapter is tested against —
//! from the venv `scripts/bootstrap --stripe` installs (`target/localstripe-venv`), or the
//! binary `LOCALSTRIPE` names. Started with `--from-scratch` (it would otherwise unpickle
//! `/tmp/localstripe.pickle`, which anyone may have written) on a free port, in a process
//! group of its own, killed with its group when dropped. It binds every interface (`::`)
//! and has no option to bind fewer, so it lives only as long as its test, and is spoken to
//! on loopback only. It still writes that pickle after every change; nothing reads it.
//!
//! When localstripe is missing or does not start, [`Localstripe::start`] panics saying
//! why: the tests that need it are never skipped.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::ports::free_ports;
use crate::services::Services;

/// Starts that lose their port to another process before binding it, tried again.
const PORT_ATTEMPTS: usize = 5;
/// Python and aiohttp take a second or so to import on a busy machine.
const START_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Localstripe {
    url: String,
    services: Services,
    _dir: tempfile::TempDir,
}

impl Localstripe {
    /// A fresh, empty localstripe, answering at [`Self::url`].
    pub async fn start() -> Localstripe {
        let binary = binary();
        assert!(
            binary.exists(),
            "{} is not there: run scripts/bootstrap --stripe (or set LOCALSTRIPE)",
            binary.display()
        );
        let dir = tempfile::Builder::new()
            .prefix("localstripe-")
            .tempdir()
            .unwrap_or_else(|err| panic!("localstripe: no temporary folder: {err}"));
        let mut services = Services::new(dir.path());
        let http = reqwest::Client::new();
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let [port] = free_ports().unwrap_or_else(|err| panic!("localstripe: no port: {err}"));
            let mut command = Command::new(&binary);
            command
                .args(["--port", &port.to_string(), "--from-scratch"])
                .current_dir(dir.path());
            if let Err(err) = services.spawn("localstripe", command) {
                panic!("localstripe did not start: {err:#}");
            }
            let url = format!("http://127.0.0.1:{port}");
            // The one route that answers 2xx without a key: its Stripe.js stand-in.
            let probe = format!("{url}/js.stripe.com/v3/");
            match services
                .wait_until_healthy(&http, &probe, START_TIMEOUT)
                .await
            {
                Ok(()) => {
                    return Localstripe {
                        url,
                        services,
                        _dir: dir,
                    }
                }
                Err(err) => last_failure = format!("{err:#}"),
            }
        }
        panic!("localstripe did not start in {PORT_ATTEMPTS} attempts; the last:\n{last_failure}");
    }

    /// Its base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What it has logged so far (one line a request).
    pub fn log(&self) -> String {
        self.services.log("localstripe")
    }
}

fn binary() -> PathBuf {
    std::env::var_os("LOCALSTRIPE").map_or_else(
        || crate::workspace().join("target/localstripe-venv/bin/localstripe"),
        PathBuf::from,
    )
}
