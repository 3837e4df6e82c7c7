//! `make run` as a user runs it, again and again on one checkout: the first start makes
//! the state (`.dev.vars`, the database, the edge's objects), Ctrl-C stops it, and the
//! second start works on what the first left — the README's login and confirm work
//! after it, and the sessions of the first run live on, since the password is the same.
//! A third start with a new `DEMO_PASSWORD` ends them. The state is kept apart from the
//! checkout's own (`DATA_DIR`, `DEV_VARS_FILE`), so a developer's `make run` is left
//! alone; the ports are free ones, reserved for the test (`harness::ports::ReservedPort`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use harness::ports::ReservedPort;
use reqwest::StatusCode;
use serde_json::{json, Value};

/// The line `make run` prints once everything is up and the demo user is there.
const READY: &str = "Ctrl-C stops all three.";

/// A first start on a fresh machine may build the edge and wrangler's bundle.
const START_TIMEOUT: Duration = Duration::from_secs(600);

struct Run {
    child: Child,
    log: PathBuf,
}

impl Run {
    fn start(state: &Path, ports: &[u16; 5], n: usize) -> Run {
        let log = state.join(format!("make-run-{n}.log"));
        let out = fs::File::create(&log).expect("a log file");
        let err = out.try_clone().expect("the log file again");
        let [sim, origin, admin, metrics, edge] = ports.map(|port| format!("127.0.0.1:{port}"));
        let mut command = Command::new("make");
        command
            .arg("run")
            .current_dir(harness::workspace())
            .env("DATA_DIR", state.join("data"))
            .env("DEV_VARS_FILE", state.join("dev.vars"))
            .env("GATEWAY_SIM_LISTEN", sim)
            .env("ORIGIN_LISTEN", origin)
            .env("ORIGIN_ADMIN_LISTEN", admin)
            .env("ORIGIN_METRICS_LISTEN", metrics)
            .env("EDGE_LISTEN", edge)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // As from a user's shell: without what cargo hands a test of its package
        // (CARGO_MANIFEST_DIR, CARGO_PKG_NAME, OUT_DIR …). Build scripts rerun when those
        // differ from their last run (ring's reads six of them), so `make run`'s cargo
        // would rebuild ring and all above it, the origin included, for this test and
        // again for the next `make test`.
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(injected_by_cargo) {
                command.env_remove(name);
            }
        }
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().expect("make run starts");
        let mut run = Run { child, log };
        run.wait_ready();
        run
    }

    fn output(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if self.output().contains(READY) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("make run exited ({status}):\n{}", self.output());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "make run did not start in {START_TIMEOUT:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Ctrl-C: SIGINT to the whole foreground group, as a terminal sends it.
    fn interrupt(mut self) {
        let group = format!("-{}", self.child.id());
        let sent = Command::new("kill").args(["-INT", "--", &group]).status();
        assert!(sent.is_ok_and(|status| status.success()), "SIGINT sent");
        self.child.wait().expect("make run ends");
        assert!(
            !self.output().contains("a service stopped"),
            "every service ran until Ctrl-C:\n{}",
            self.output()
        );
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = self.child.wait();
        }
    }
}

fn demo_password(state: &Path) -> String {
    let vars = fs::read_to_string(state.join("dev.vars")).expect("make run made dev.vars");
    vars.lines()
        .find_map(|line| line.strip_prefix("DEMO_PASSWORD='"))
        .map(|value| value.trim_end_matches('\'').to_owned())
        .expect("a DEMO_PASSWORD")
}

/// The README's two commands: a login, then a confirm with its token. The access token.
async fn login_and_confirm(
    http: &reqwest::Client,
    edge: &str,
    password: &str,
    order: &str,
) -> String {
    let login = http
        .post(format!("{edge}/auth/login"))
        .json(&json!({ "username": "demo", "password": password }))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(login.status(), StatusCode::OK);
    let tokens: Value = login.json().await.expect("a JSON body");
    let access = tokens["accessToken"].as_str().expect("a token").to_owned();
    let confirm = http
        .post(format!("{edge}/payments/confirm"))
        .bearer_auth(&access)
        .header("idempotency-key", order)
        .json(&json!({ "orderId": order, "paymentKey": format!("pk-{order}"), "amount": 15000 }))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(confirm.status(), StatusCode::CREATED);
    let payment: Value = confirm.json().await.expect("a JSON body");
    assert_eq!(payment["status"], "APPROVED", "{payment}");
    access
}

async fn who_am_i(http: &reqwest::Client, edge: &str, access: &str) -> StatusCode {
    http.get(format!("{edge}/auth/me"))
        .bearer_auth(access)
        .send()
        .await
        .expect("the edge answers")
        .status()
}

#[tokio::test]
async fn make_run_starts_again_on_the_state_it_left_and_logs_in_after() {
    let state = tempfile::tempdir().expect("a folder");
    // Held for the whole test, between the starts too: a port only found free could be
    // handed meanwhile to another test's socket (it was, once, the origin's metrics').
    let reserved: [ReservedPort; 5] =
        std::array::from_fn(|_| ReservedPort::new().expect("a reserved port"));
    let ports = reserved.each_ref().map(ReservedPort::port);
    let edge = format!("http://127.0.0.1:{}", ports[4]);
    let http = harness::workerd::client().build().expect("a client");

    let first = Run::start(state.path(), &ports, 1);
    let password = demo_password(state.path());
    let access = login_and_confirm(&http, &edge, &password, "order-first-run").await;
    first.interrupt();

    let second = Run::start(state.path(), &ports, 2);
    assert!(
        second.output().contains(&password),
        "the same demo password is printed"
    );
    assert_eq!(
        who_am_i(&http, &edge, &access).await,
        StatusCode::OK,
        "the password did not change, so the first run's session lives on"
    );
    login_and_confirm(&http, &edge, &password, "order-second-run").await;
    second.interrupt();

    let vars = fs::read_to_string(state.path().join("dev.vars")).expect("dev.vars");
    let changed = vars.replace(&password, "a-new-demo-password");
    fs::write(state.path().join("dev.vars"), changed).expect("dev.vars rewritten");
    let third = Run::start(state.path(), &ports, 3);
    assert_eq!(
        who_am_i(&http, &edge, &access).await,
        StatusCode::UNAUTHORIZED,
        "a new password ends the sessions begun with the old one"
    );
    login_and_confirm(&http, &edge, "a-new-demo-password", "order-third-run").await;
    third.interrupt();
}

/// The variables cargo (and nextest) set for a test of a package, which no shell has.
fn injected_by_cargo(name: &str) -> bool {
    name == "CARGO"
        || name == "OUT_DIR"
        || name == "CARGO_PRIMARY_PACKAGE"
        || name == "CARGO_TARGET_TMPDIR"
        || [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}
