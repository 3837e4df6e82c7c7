//! The edge of a [`System`](super::System): the Worker `scripts/build-edge` builds into
//! `build/`, served by `workerd serve` through the workspace's harness, as the lab
//! serves it, or by `wrangler dev` for the one test of that path
//! (`tests/wrangler_dev.rs`).

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use harness::ports::held_socket;
use harness::workerd::{self, Worker, EDGE_OBJECTS};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::ConnectOptions as _;

use super::{EdgeSetup, EDGE_SECRET, JWT_SECRET, KID, PAYMENT_CLIENT_KEY};

/// What serves the edge of a [`System`](super::System).
#[derive(Clone, Copy, Default)]
pub enum EdgeRuntime {
    /// `workerd serve` (`node_modules/workerd/bin/workerd`) with a generated
    /// configuration.
    #[default]
    Workerd,
    /// `wrangler dev --local`, as `make run` serves it: wrangler's build command, its
    /// file watcher and its proxy in front of workerd.
    WranglerDev,
}

/// How a system's edge was started: enough to start it again on the same storage.
pub(super) struct Launch {
    pub(super) runtime: EdgeRuntime,
    pub(super) base: std::path::PathBuf,
    pub(super) vars: Vec<(&'static str, String)>,
    /// The bindings of the edge's objects that are down (every call fails).
    pub(super) objects_down: Vec<&'static str>,
    /// CA certificates its outbound https trusts (workerd only).
    pub(super) trusted_certificates: Vec<String>,
}

/// The port of a `http://127.0.0.1:{port}` address.
fn port_of(url: &str) -> u16 {
    url.rsplit_once(':')
        .and_then(|(_, port)| port.parse::<u16>().ok())
        .expect("a loopback address with a port")
}

impl super::System {
    /// Starts the edge as `setup` says under `runtime`, its files in `base`, forwarding to
    /// the origin at `origin`, listening on `edge_socket` (held until then).
    pub(super) async fn start_edge(
        &mut self,
        setup: &EdgeSetup,
        edge_runtime: EdgeRuntime,
        base: std::path::PathBuf,
        origin: String,
        edge_socket: TcpListener,
    ) -> Result<(), String> {
        let jwt_keys = format!(
            r#"[{{"kty":"oct","alg":"HS256","kid":"{KID}","k":"{}"}}]"#,
            URL_SAFE_NO_PAD.encode(JWT_SECRET)
        );
        let mut vars = vec![
            ("JWT_KEYS", jwt_keys),
            ("JWT_SIGNING_KID", KID.to_owned()),
            ("ORIGIN_SIGNING_SECRET", EDGE_SECRET.to_owned()),
            ("ORIGIN_URL", origin),
            // The checkout page's window: the simulator's imitation of Toss's.
            ("PAYMENT_WINDOW_URL", format!("{}/window", self.gateway)),
            ("PAYMENT_CLIENT_KEY", PAYMENT_CLIENT_KEY.to_owned()),
        ];
        for (name, value) in &setup.vars {
            vars.retain(|(known, _)| known != name);
            vars.push((*name, value.clone()));
        }
        let launch = Launch {
            runtime: edge_runtime,
            base,
            vars,
            objects_down: match (setup.sessions_down, setup.session_objects_down) {
                (true, _) => EDGE_OBJECTS.iter().map(|(binding, _)| *binding).collect(),
                (false, true) => vec!["USER_SESSIONS"],
                (false, false) => Vec::new(),
            },
            trusted_certificates: setup.trusted_certificates.clone(),
        };
        let twin_socket = match setup.twin {
            true => Some(held_socket().map_err(|err| err.to_string())?),
            false => None,
        };
        if let Some(twin) = &twin_socket {
            let port = twin.local_addr().expect("a bound socket").port();
            self.edge_twin = Some(format!("http://127.0.0.1:{port}"));
        }
        let edge = command(&launch, &edge_socket, twin_socket.as_ref());
        // workerd listens on the socket itself, so it stays open until workerd runs;
        // wrangler dev binds the port on its own, so it is closed first.
        let held = match edge_runtime {
            EdgeRuntime::Workerd => Some(edge_socket),
            EdgeRuntime::WranglerDev => {
                drop(edge_socket);
                None
            }
        };
        self.spawn("edge", edge);
        drop((held, twin_socket));
        self.edge_launch = Some(launch);

        let url = format!("{}/healthz", self.edge);
        self.wait_until_healthy(&url).await
    }

    /// Kills the edge (`kill -9`) and starts it again on the same port and storage: every
    /// Durable Object restarts from what it stored.
    pub async fn restart_edge(&mut self) {
        self.kill("edge");
        self.start_edge_again().await;
    }

    /// Starts the edge again, after [`System::kill`], on the same port and storage.
    pub async fn start_edge_again(&mut self) {
        let launch = self.edge_launch.as_ref().expect("a system with an edge");
        let again = |url: &str| {
            TcpListener::bind(("127.0.0.1", port_of(url))).expect("the edge's port again")
        };
        let socket = again(&self.edge);
        let twin = self.edge_twin.as_deref().map(again);
        let edge = command(launch, &socket, twin.as_ref());
        self.spawn("edge", edge);
        drop((socket, twin));
        let url = format!("{}/healthz", self.edge);
        self.wait_until_healthy(&url)
            .await
            .unwrap_or_else(|failure| panic!("the edge did not restart: {failure}"));
    }

    /// The SQLite files of the edge's objects of `class` (workerd only): one per object
    /// that has stored anything (not workerd's own `metadata.sqlite`).
    pub fn edge_object_files(&self, class: &str) -> Vec<PathBuf> {
        let launch = self.edge_launch.as_ref().expect("a system with an edge");
        let folder = launch
            .base
            .join("edge/durable-objects")
            .join(format!("worker-{class}"));
        let mut files: Vec<_> = fs::read_dir(&folder)
            .unwrap_or_else(|err| panic!("{}: {err}", folder.display()))
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "sqlite"))
            .filter(|path| !path.ends_with("metadata.sqlite"))
            .collect();
        files.sort();
        files
    }

    /// The one object of `class` that stored anything, its SQLite file and a connection
    /// to it — with the edge stopped, what a test rewrites to stand for what an earlier
    /// release stored.
    pub async fn only_object_db(&self, class: &str) -> (PathBuf, SqliteConnection) {
        let files = self.edge_object_files(class);
        let [file] = files.as_slice() else {
            panic!("one {class}'s file, not {files:?}");
        };
        let db = SqliteConnectOptions::new()
            .filename(file)
            .connect()
            .await
            .unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        (file.clone(), db)
    }
}

/// The command that serves the edge as `launch` says, on `socket`, and its twin isolate
/// on `twin` (workerd only). The objects of `objects_down` fail every call (workerd
/// only). workerd is handed the sockets themselves, already listening; `wrangler dev`
/// binds the port itself.
pub(super) fn command(
    launch: &Launch,
    socket: &TcpListener,
    twin: Option<&TcpListener>,
) -> Command {
    let &Launch {
        runtime,
        ref base,
        ref vars,
        ref objects_down,
        ref trusted_certificates,
    } = launch;
    let root = harness::workspace();
    workerd::build(None).unwrap_or_else(|err| panic!("{err:#}"));
    match runtime {
        EdgeRuntime::Workerd => {
            let dir = base.join("edge");
            fs::create_dir_all(&dir).expect("the edge's folder");
            let worker = Worker {
                build: &root.join("build"),
                dir: &dir,
                vars,
                durable_objects: &EDGE_OBJECTS,
                objects_down,
                inspector: None,
                driver: None,
                twin,
                trusted_certificates,
            };
            workerd::command(&worker, socket).unwrap_or_else(|err| panic!("{err:#}"))
        }
        EdgeRuntime::WranglerDev => {
            assert!(
                objects_down.is_empty() && twin.is_none() && trusted_certificates.is_empty(),
                "objects down, a twin and trusted certificates are served under workerd only"
            );
            let port = socket.local_addr().expect("a bound socket").port();
            wrangler_dev(&root, base, port, vars)
        }
    }
}

fn wrangler_dev(root: &Path, base: &Path, port: u16, vars: &[(&str, String)]) -> Command {
    let env_file = base.join("edge.env");
    let env_text: String = vars
        .iter()
        .map(|(name, value)| format!("{name}='{value}'\n"))
        .collect();
    fs::write(&env_file, env_text).expect("the edge's env file");
    let mut command = Command::new(root.join("node_modules/.bin/wrangler"));
    command
        .current_dir(root)
        .env("WRANGLER_SEND_METRICS", "false")
        .args([
            "dev",
            "--local",
            "--ip",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .arg("--env-file")
        .arg(&env_file)
        .arg("--persist-to")
        .arg(base.join("wrangler"))
        .args([
            "--show-interactive-dev-session=false",
            "--inspector-port",
            "0",
        ]);
    command
}
