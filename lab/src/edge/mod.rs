//! The edge Worker under `workerd serve`, for experiments that load it.
//!
//! `wrangler dev` puts a Node.js proxy in front of workerd, and that proxy — not the
//! Worker — costs most of the throughput (measured here with one Node.js client, 64
//! requests at once: `GET /healthz` ≈ 1,350/s under `wrangler dev` against ≈ 10,000/s
//! under `workerd serve`; `GET /auth/me`, one session object call, ≈ 480/s against
//! ≈ 1,400/s). So where the edge is under load, the lab runs the very build `wrangler
//! dev` would run (`scripts/build-edge` → `build/`) straight in workerd, with a
//! configuration generated from `wrangler.toml`'s facts: the ES module and its wasm, the
//! compatibility date, the three SQLite-backed Durable Object classes stored on disk in
//! a temporary folder, every variable a text binding, and outbound `fetch` limited to
//! loopback (where the origin is). workerd needs no `--experimental` for this.
//!
//! workerd runs the Worker and every object on one thread: one process is one core.

mod config;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use crate::stack::{run_in_workspace, workspace};
use config::{compatibility_date, config_text, Config, EDGE_OBJECTS};

/// The lab's access-token key: HS256, `kid` [`JWT_KID`]; `k` is the base64url of
/// `lab-access-token-key-0123456789abcdef`.
const JWT_KID: &str = "lab-1";
const JWT_K: &str = "bGFiLWFjY2Vzcy10b2tlbi1rZXktMDEyMzQ1Njc4OWFiY2RlZg";

/// How long workerd may take to answer `/healthz` after it starts.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The edge running in workerd on a free loopback port; stopped when dropped.
pub struct Edge {
    /// `http://127.0.0.1:{port}`.
    pub url: String,
    child: Child,
    /// The configuration, the build it runs, the objects' storage and workerd's log.
    dir: tempfile::TempDir,
}

impl Edge {
    /// Builds the Worker (a no-op when `build/` is up to date) and starts it in workerd,
    /// forwarding to the origin at `origin_url` signed with `edge_secret`. `vars` are
    /// the edge's variables over the lab's own (`JWT_KEYS`, `JWT_SIGNING_KID`,
    /// `ORIGIN_URL`, `ORIGIN_SIGNING_SECRET`). Waits until `/healthz` answers.
    pub async fn start(
        origin_url: &str,
        edge_secret: &str,
        vars: &[(&str, String)],
    ) -> anyhow::Result<Edge> {
        let root = workspace();
        build(&root)?;
        let dir = tempfile::tempdir()?;
        // The build is copied, so a rebuild during the run cannot change what runs.
        for file in ["index.js", "index_bg.wasm"] {
            std::fs::copy(root.join("build").join(file), dir.path().join(file))
                .with_context(|| format!("copying build/{file}"))?;
        }
        let storage = dir.path().join("durable-objects");
        std::fs::create_dir(&storage)?;
        let wrangler = std::fs::read_to_string(root.join("wrangler.toml"))?;
        let date = compatibility_date(&wrangler)
            .context("wrangler.toml has no compatibility_date = \"YYYY-MM-DD\"")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut all = vec![
            (
                "JWT_KEYS",
                format!(r#"[{{"kty":"oct","alg":"HS256","kid":"{JWT_KID}","k":"{JWT_K}"}}]"#),
            ),
            ("JWT_SIGNING_KID", JWT_KID.to_owned()),
            ("ORIGIN_URL", origin_url.to_owned()),
            ("ORIGIN_SIGNING_SECRET", edge_secret.to_owned()),
        ];
        for (name, value) in vars {
            all.retain(|(known, _)| known != name);
            all.push((name, value.clone()));
        }
        let config = dir.path().join("edge.capnp");
        let text = config_text(&Config {
            port,
            compatibility_date: &date,
            storage: &storage,
            vars: &all,
            durable_objects: &EDGE_OBJECTS,
            objects_down: false,
        });
        std::fs::write(&config, text)?;
        let log = std::fs::File::create(dir.path().join("workerd.log"))?;
        let child = Command::new(workerd_binary())
            .arg("serve")
            .arg(&config)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .process_group(0)
            .spawn()
            .context("starting workerd: run `npm ci` (scripts/bootstrap) for node_modules")?;
        let mut edge = Edge {
            url: format!("http://127.0.0.1:{port}"),
            child,
            dir,
        };
        edge.wait_until_healthy().await?;
        Ok(edge)
    }

    /// What `workerd --version` says of the binary the lab runs.
    pub fn version() -> anyhow::Result<String> {
        let output = Command::new(workerd_binary()).arg("--version").output()?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    async fn wait_until_healthy(&mut self) -> anyhow::Result<()> {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + READY_TIMEOUT;
        while Instant::now() < deadline {
            let answer = http.get(format!("{}/healthz", self.url)).send().await;
            if answer.is_ok_and(|response| response.status().is_success()) {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "workerd exited with {status} before it was healthy:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!(
            "workerd did not answer /healthz within {READY_TIMEOUT:?}:\n{}",
            self.log()
        )
    }

    /// Logs `username` in through the edge; its access token.
    pub async fn login(
        &self,
        http: &reqwest::Client,
        username: &str,
        password: &str,
    ) -> anyhow::Result<String> {
        let login: serde_json::Value = http
            .post(format!("{}/auth/login", self.url))
            .json(&serde_json::json!({"username": username, "password": password}))
            .send()
            .await?
            .json()
            .await?;
        let token = login["accessToken"]
            .as_str()
            .with_context(|| format!("{username} could not log in: {login}"))?;
        Ok(token.to_owned())
    }

    /// The CPU time workerd has used so far, all its threads together (Linux
    /// `/proc/{pid}/task/*/schedstat`); `None` where that cannot be read.
    pub fn cpu_time(&self) -> Option<Duration> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).ok()?;
        let nanos = tasks
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
            .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        Some(Duration::from_nanos(nanos))
    }

    /// What workerd has written so far.
    pub fn log(&self) -> String {
        let path = self.dir.path().join("workerd.log");
        std::fs::read_to_string(path).unwrap_or_default()
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        // NOT `kill -KILL -PID` through /usr/bin/kill: on this machine that killed every
        // process of the session (the tool, the lab, CI). workerd starts no children.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `scripts/build-edge`: the Worker into `build/`, skipped when it is up to date.
fn build(root: &Path) -> anyhow::Result<()> {
    run_in_workspace(
        Command::new(root.join("scripts/build-edge")),
        "scripts/build-edge",
    )
}

/// The workerd of the `workerd` npm package wrangler depends on.
fn workerd_binary() -> PathBuf {
    workspace().join("node_modules/workerd/bin/workerd")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::Stack;

    /// Requests/s the edge serves under workerd, closed loop on loopback, bounded to a
    /// few seconds per route. The lab shares the machine with workerd and the origin,
    /// so this is a floor, not workerd's ceiling.
    ///
    /// `cargo test --release -p lab -- --ignored requests_per_second --nocapture`
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "starts the origin, the simulator and workerd, and loads them"]
    async fn requests_per_second_under_workerd() -> anyhow::Result<()> {
        let stack = Stack::start(&[]).await?;
        stack.add_user("bench", "bench-password")?;
        let edge = Edge::start(&stack.origin, stack.edge_secret(), &[]).await?;
        println!(
            "{}",
            std::fs::read_to_string(edge.dir.path().join("edge.capnp"))?
        );
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .build()?;
        let token = edge.login(&http, "bench", "bench-password").await?;
        for (route, path, bearer) in [
            ("GET /healthz (no object)", "/healthz", None),
            (
                "GET /auth/me (token + the user's session object)",
                "/auth/me",
                Some(token.as_str()),
            ),
        ] {
            let url = format!("{}{path}", edge.url);
            let (ok, failed, seconds) = closed_loop(&http, &url, bearer, 64, 5).await;
            println!(
                "{route}: {:.0} requests/s ({ok} ok, {failed} failed in {seconds:.1} s, 64 at once)",
                ok as f64 / seconds
            );
        }
        Ok(())
    }

    /// `clients` loops sending GET `url` for `seconds`: (2xx answers, others, seconds).
    async fn closed_loop(
        http: &reqwest::Client,
        url: &str,
        bearer: Option<&str>,
        clients: usize,
        seconds: u64,
    ) -> (u64, u64, f64) {
        let start = Instant::now();
        let end = start + Duration::from_secs(seconds);
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..clients {
            let mut request = http.get(url);
            if let Some(token) = bearer {
                request = request.bearer_auth(token);
            }
            tasks.spawn(async move {
                let (mut ok, mut failed) = (0, 0);
                while Instant::now() < end {
                    let Some(attempt) = request.try_clone() else {
                        break;
                    };
                    // The body is read, so the connection goes back to the pool.
                    let answered = match attempt.send().await {
                        Ok(answer) => {
                            let success = answer.status().is_success();
                            answer.bytes().await.is_ok() && success
                        }
                        Err(_) => false,
                    };
                    if answered {
                        ok += 1;
                    } else {
                        failed += 1;
                    }
                }
                (ok, failed)
            });
        }
        let (mut ok, mut failed) = (0, 0);
        while let Some(Ok((o, f))) = tasks.join_next().await {
            ok += o;
            failed += f;
        }
        (ok, failed, start.elapsed().as_secs_f64())
    }
}
