//! The edge of a [`System`](super::System): the Worker `scripts/build-edge` builds into
//! `build/`, served by `workerd serve` through the workspace's harness, as the lab
//! serves it, or by `wrangler dev` for the one test of that path
//! (`tests/wrangler_dev.rs`).

use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use harness::workerd::{self, Worker, EDGE_OBJECTS};

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
    pub(super) sessions_down: bool,
}

impl super::System {
    /// Kills the edge (`kill -9`) and starts it again on the same port and storage: every
    /// Durable Object restarts from what it stored.
    pub async fn restart_edge(&mut self) {
        self.kill("edge");
        let launch = self.edge_launch.as_ref().expect("a system with an edge");
        let port = self
            .edge
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse::<u16>().ok())
            .expect("the edge's port");
        let socket = TcpListener::bind(("127.0.0.1", port)).expect("the edge's port again");
        let edge = command(
            launch.runtime,
            &launch.base,
            &socket,
            &launch.vars,
            launch.sessions_down,
        );
        self.spawn("edge", edge);
        drop(socket);
        let url = format!("{}/healthz", self.edge);
        self.wait_until_healthy(&url)
            .await
            .unwrap_or_else(|failure| panic!("the edge did not restart: {failure}"));
    }
}

/// The command that serves the edge on `socket` with `vars`, its files in `base`. With
/// `sessions_down`, every object call fails (workerd only). workerd is handed the socket
/// itself, already listening; `wrangler dev` binds the port itself.
pub(super) fn command(
    runtime: EdgeRuntime,
    base: &Path,
    socket: &TcpListener,
    vars: &[(&str, String)],
    sessions_down: bool,
) -> Command {
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
                objects_down: sessions_down,
                inspector: None,
                driver: None,
            };
            workerd::command(&worker, socket).unwrap_or_else(|err| panic!("{err:#}"))
        }
        EdgeRuntime::WranglerDev => {
            assert!(!sessions_down, "sessions_down is served under workerd only");
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
