//! The edge Worker under `workerd serve` (the workspace's `harness::workerd`), for the
//! experiments that load it: the build `wrangler dev` would run, without its Node.js
//! proxy in front, which costs most of the throughput.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use harness::ports::held_socket;
use harness::services::Services;
use harness::workerd::{self, Worker, EDGE_OBJECTS};

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
    services: Services,
    /// The configuration, the build it runs, the objects' storage and workerd's log.
    _dir: tempfile::TempDir,
}

/// The one service of an [`Edge`].
const WORKERD: &str = "workerd";

impl Edge {
    /// Builds the Worker (a no-op when `build/` is up to date) and starts it in workerd,
    /// forwarding to the origin at `origin_url` signed with `edge_secret`. `vars` are
    /// the edge's variables over the lab's own (`JWT_KEYS`, `JWT_SIGNING_KID`,
    /// `ORIGIN_URL`, `ORIGIN_SIGNING_SECRET`). With `build` (a folder with `index.js` and
    /// `index_bg.wasm`, e.g. a copy of `build/`), runs that instead and builds nothing.
    /// Waits until `/healthz` answers.
    pub async fn start(
        origin_url: &str,
        edge_secret: &str,
        vars: &[(&str, String)],
        build: Option<&Path>,
    ) -> anyhow::Result<Edge> {
        Self::start_on(held_socket()?, origin_url, edge_secret, vars, build).await
    }

    /// [`Edge::start`] on `socket`, bound beforehand: for an origin that must know the
    /// edge's address before the edge starts (`EDGE_URL`, to hand it a drop's room).
    pub async fn start_on(
        socket: TcpListener,
        origin_url: &str,
        edge_secret: &str,
        vars: &[(&str, String)],
        build: Option<&Path>,
    ) -> anyhow::Result<Edge> {
        let temp = std::env::temp_dir();
        let launch = Launch {
            folder_in: &temp,
            inspector: None,
            socket,
        };
        let build = build.map(Path::to_path_buf);
        Self::start_with(origin_url, edge_secret, vars.to_vec(), build, launch).await
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
            socket: held_socket()?,
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
        let build = match build {
            Some(dir) => dir,
            None => {
                workerd::build(None)?;
                harness::workspace().join("build")
            }
        };
        let mut all = own_vars(origin_url, edge_secret);
        for (name, value) in vars {
            all.retain(|(known, _)| *known != name);
            all.push((name, value));
        }
        Self::launch(&build, &EDGE_OBJECTS, &all, launch).await
    }

    /// The cost benchmark's baseline Worker (`benches/baseline-worker`), built and started
    /// in a workerd of its own, its objects in memory as [`Edge::start_in_memory`]'s.
    pub async fn start_baseline() -> anyhow::Result<Edge> {
        workerd::build(Some(BASELINE_WORKER))?;
        let build = harness::workspace().join(BASELINE_WORKER).join("build");
        let objects = [("NOOP", "Noop"), ("WRITER", "Writer")];
        let launch = Launch {
            folder_in: Path::new(TMPFS),
            inspector: None,
            socket: held_socket()?,
        };
        Self::launch(&build, &objects, &[], launch).await
    }

    /// Starts the Worker of `build` in workerd with its objects and variables, in a new
    /// folder under `launch.folder_in`, and waits until it answers `/healthz`.
    async fn launch(
        build: &Path,
        durable_objects: &[(&str, &str)],
        vars: &[(&str, String)],
        launch: Launch<'_>,
    ) -> anyhow::Result<Edge> {
        let dir = tempfile::tempdir_in(launch.folder_in)
            .with_context(|| format!("a folder in {}", launch.folder_in.display()))?;
        let socket = launch.socket;
        let url = format!("http://127.0.0.1:{}", socket.local_addr()?.port());
        let command = workerd::command(
            &Worker {
                build,
                dir: dir.path(),
                vars,
                durable_objects,
                objects_down: &[],
                inspector: launch.inspector,
                driver: None,
                twin: None,
                trusted_certificates: &[],
            },
            &socket,
        )?;
        let mut services = Services::new(dir.path());
        services
            .spawn(WORKERD, command)
            .context("starting workerd: run `npm ci` (scripts/bootstrap) for node_modules")?;
        drop(socket);
        services
            .wait_until_healthy(
                &reqwest::Client::new(),
                &format!("{url}/healthz"),
                READY_TIMEOUT,
            )
            .await?;
        Ok(Edge {
            url,
            services,
            _dir: dir,
        })
    }

    /// How many requests the edge's isolate has refused from memory, as its `/healthz`
    /// says; `None` for a Worker that does not say.
    pub async fn refused_from_memory(&self) -> Option<u64> {
        self.health_count("refusedFromMemory").await
    }

    /// The count `name` of the edge's `/healthz`; `None` for a Worker that does not say.
    pub async fn health_count(&self, name: &str) -> Option<u64> {
        let health: serde_json::Value = reqwest::get(format!("{}/healthz", self.url))
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        health[name].as_u64()
    }

    /// What `workerd --version` says of the binary the lab runs.
    pub fn version() -> anyhow::Result<String> {
        workerd::version()
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
            .header("cf-connecting-ip", client_address(username))
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

    /// The CPU time workerd has used so far, all its threads together; `None` where that
    /// cannot be read.
    pub fn cpu_time(&self) -> Option<Duration> {
        crate::process::cpu_time(self.services.pid(WORKERD)?)
    }

    /// What workerd has written so far.
    pub fn log(&self) -> String {
        self.services.log(WORKERD)
    }
}

/// Where a workerd's folder (its configuration, build copy, objects and log) is made,
/// whether it serves the inspector, and the socket it is handed.
struct Launch<'a> {
    folder_in: &'a Path,
    inspector: Option<u16>,
    socket: TcpListener,
}

/// Linux's shared-memory tmpfs.
const TMPFS: &str = "/dev/shm";

/// The crate of the cost benchmark's baseline Worker.
const BASELINE_WORKER: &str = "benches/baseline-worker";

/// The address a simulated browser of `user` comes from, as Cloudflare would say it in
/// `CF-Connecting-IP`: one of its own in 10.0.0.0/8, so the edge's login window per
/// client address counts each browser apart, as it would on the internet.
pub fn client_address(user: &str) -> String {
    let [_, b, c, d] = rules::login_limit::fnv1a(user).to_be_bytes();
    format!("10.{b}.{c}.{d}")
}

/// The lab's own variables of the edge: its token key, and the origin it forwards to,
/// signed with `edge_secret`.
pub fn own_vars(origin_url: &str, edge_secret: &str) -> Vec<(&'static str, String)> {
    vec![
        ("JWT_KEYS", jwt_keys()),
        ("JWT_SIGNING_KID", JWT_KID.to_owned()),
        ("ORIGIN_URL", origin_url.to_owned()),
        ("ORIGIN_SIGNING_SECRET", edge_secret.to_owned()),
    ]
}

/// `JWT_KEYS` of the lab's edge.
fn jwt_keys() -> String {
    format!(r#"[{{"kty":"oct","alg":"HS256","kid":"{JWT_KID}","k":"{JWT_K}"}}]"#)
}

/// An access token of `user` for the lab's edge, minted with the lab's key, valid for an
/// hour: for requests that need a signed-in user but not a login.
pub fn token(user: &str) -> anyhow::Result<String> {
    let keys = rules::token::KeySet::from_jwks_json(&jwt_keys())?;
    let now = harness::signed::now_ms() / 1000;
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
