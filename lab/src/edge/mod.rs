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
        let temp = std::env::temp_dir();
        let launch = Launch {
            folder_in: &temp,
            inspector: None,
        };
        Self::start_with(origin_url, edge_secret, vars.to_vec(), None, launch).await
    }

    /// [`Edge::start`], running the edge build in `build` (a folder with `index.js` and
    /// `index_bg.wasm`, e.g. an earlier commit's) instead of `build/`, with the objects'
    /// SQLite files in memory (tmpfs): for the cost benchmark, whose ten thousand users
    /// would otherwise wait on the disk, one new file each, not on the Worker.
    /// With `inspector`, workerd serves the V8 inspector protocol on that loopback port
    /// (for `scripts/profile-edge.mjs`).
    pub async fn start_in_memory(
        origin_url: &str,
        edge_secret: &str,
        vars: Vec<(&str, String)>,
        build: Option<PathBuf>,
        inspector: Option<u16>,
    ) -> anyhow::Result<Edge> {
        let launch = Launch {
            folder_in: Path::new(TMPFS),
            inspector,
        };
        Self::start_with(origin_url, edge_secret, vars, build, launch).await
    }

    async fn start_with(
        origin_url: &str,
        edge_secret: &str,
        vars: Vec<(&str, String)>,
        build: Option<PathBuf>,
        launch: Launch<'_>,
    ) -> anyhow::Result<Edge> {
        let root = workspace();
        let build = match build {
            Some(dir) => dir,
            None => {
                build_worker(&root, None)?;
                root.join("build")
            }
        };
        let mut all = vec![
            ("JWT_KEYS", jwt_keys()),
            ("JWT_SIGNING_KID", JWT_KID.to_owned()),
            ("ORIGIN_URL", origin_url.to_owned()),
            ("ORIGIN_SIGNING_SECRET", edge_secret.to_owned()),
        ];
        for (name, value) in vars {
            all.retain(|(known, _)| *known != name);
            all.push((name, value));
        }
        Self::launch(&build, &EDGE_OBJECTS, &all, launch).await
    }

    /// The cost benchmark's baseline Worker (`benches/baseline-worker`), built and started
    /// in a workerd of its own, its objects in memory as [`Edge::start_in_memory`]'s.
    pub async fn start_baseline() -> anyhow::Result<Edge> {
        let root = workspace();
        build_worker(&root, Some(BASELINE_WORKER))?;
        let build = root.join(BASELINE_WORKER).join("build");
        let objects = [("NOOP", "Noop"), ("WRITER", "Writer")];
        let launch = Launch {
            folder_in: Path::new(TMPFS),
            inspector: None,
        };
        Self::launch(&build, &objects, &[], launch).await
    }

    /// Starts the Worker of `build` in workerd with its objects and variables, in a new
    /// folder under `storage.root`, and waits until it answers `/healthz`.
    async fn launch(
        build: &Path,
        durable_objects: &[(&str, &str)],
        vars: &[(&str, String)],
        launch: Launch<'_>,
    ) -> anyhow::Result<Edge> {
        let root = workspace();
        let dir = tempfile::tempdir_in(launch.folder_in)
            .with_context(|| format!("a folder in {}", launch.folder_in.display()))?;
        // The build is copied, so a rebuild during the run cannot change what runs.
        for file in ["index.js", "index_bg.wasm"] {
            std::fs::copy(build.join(file), dir.path().join(file))
                .with_context(|| format!("copying {}", build.join(file).display()))?;
        }
        let storage = dir.path().join("durable-objects");
        std::fs::create_dir(&storage)?;
        let wrangler = std::fs::read_to_string(root.join("wrangler.toml"))?;
        let date = compatibility_date(&wrangler)
            .context("wrangler.toml has no compatibility_date = \"YYYY-MM-DD\"")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let config = dir.path().join("edge.capnp");
        let text = config_text(&Config {
            port,
            compatibility_date: &date,
            storage: &storage,
            vars,
            durable_objects,
            objects_down: false,
        });
        std::fs::write(&config, text)?;
        let log = std::fs::File::create(dir.path().join("workerd.log"))?;
        let mut workerd = Command::new(workerd_binary());
        workerd.arg("serve");
        if let Some(port) = launch.inspector {
            workerd.arg(format!("--inspector-addr=127.0.0.1:{port}"));
        }
        // Each object keeps its SQLite files open while it lives, and workerd does not
        // evict them within a run: ten thousand users are thirty thousand files, past the
        // usual limit, where SQLite answers "out of memory". Raised as far as allowed.
        // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
        unsafe {
            workerd.pre_exec(|| {
                let most = libc::rlimit {
                    rlim_cur: OPEN_FILES,
                    rlim_max: OPEN_FILES,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &most) != 0 {
                    let mut now = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    if libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) == 0 {
                        now.rlim_cur = now.rlim_max;
                        libc::setrlimit(libc::RLIMIT_NOFILE, &now);
                    }
                }
                Ok(())
            });
        }
        let child = workerd
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

    /// How many requests the edge's isolate has refused from memory, as its `/healthz`
    /// says; `None` for a Worker that does not say.
    pub async fn refused_from_memory(&self) -> Option<u64> {
        let health: serde_json::Value = reqwest::get(format!("{}/healthz", self.url))
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        health["refusedFromMemory"].as_u64()
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

/// Where a workerd's folder (its configuration, build copy, objects and log) is made, and
/// whether it serves the inspector.
struct Launch<'a> {
    folder_in: &'a Path,
    inspector: Option<u16>,
}

/// The open files a workerd may have: every object's SQLite files stay open.
const OPEN_FILES: libc::rlim_t = 1 << 17;

/// Linux's shared-memory tmpfs.
const TMPFS: &str = "/dev/shm";

/// The crate of the cost benchmark's baseline Worker.
const BASELINE_WORKER: &str = "benches/baseline-worker";

/// `scripts/build-edge [crate]`: the edge (or `crate`) into its `build/`, skipped when it
/// is up to date.
fn build_worker(root: &Path, krate: Option<&str>) -> anyhow::Result<()> {
    let mut command = Command::new(root.join("scripts/build-edge"));
    command.args(krate);
    run_in_workspace(command, "scripts/build-edge")
}

/// `JWT_KEYS` of the lab's edge.
fn jwt_keys() -> String {
    format!(r#"[{{"kty":"oct","alg":"HS256","kid":"{JWT_KID}","k":"{JWT_K}"}}]"#)
}

/// An access token of `user` for the lab's edge, minted with the lab's key, valid for an
/// hour: for requests that need a signed-in user but not a login.
pub fn token(user: &str) -> anyhow::Result<String> {
    let keys = rules::token::KeySet::from_jwks_json(&jwt_keys())?;
    let now = i64::try_from(crate::stack::now_ms() / 1000)?;
    let jti = format!("lab-{user}");
    Ok(keys.mint(
        JWT_KID,
        &rules::token::NewAccessToken {
            sub: user,
            jti: &jti,
            sid: None,
            issued_at: now,
            expires_at: now + 3600,
            issuer: None,
            audience: None,
        },
    )?)
}

/// The workerd of the `workerd` npm package wrangler depends on.
fn workerd_binary() -> PathBuf {
    workspace().join("node_modules/workerd/bin/workerd")
}
