//! A Worker under `workerd serve`, as the tests and the lab run the edge.
//!
//! `wrangler dev` puts a Node.js proxy in front of workerd, and that proxy — not the
//! Worker — costs most of the throughput (measured here with one Node.js client, 64
//! requests at once: `GET /healthz` ≈ 1,350/s under `wrangler dev` against ≈ 10,000/s
//! under `workerd serve`). So the very build `wrangler dev` would run
//! (`scripts/build-edge` → `build/`) is run straight in workerd, with a configuration
//! generated from `wrangler.toml`'s facts (`config.rs`): the ES module and its wasm, the
//! compatibility date, SQLite-backed Durable Object classes stored on disk, every
//! variable a text binding, and outbound `fetch` limited to loopback (over https only to
//! servers whose certificate a CA of [`Worker::trusted_certificates`] signed). workerd runs the
//! Worker and every object on one thread: one process is one core.
//!
//! The build is copied into the Worker's folder, so no rebuild can change what runs
//! mid-run. workerd is handed its socket already listening, so no other process can take
//! its port between finding it free and binding it (seen: workerd failed with "Address
//! already in use" while another test's origin answered the edge's `/healthz`).

mod beside;
mod config;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use anyhow::Context as _;

use crate::{run_in_workspace, workspace};
use config::{compatibility_date, config_text, Config};
pub use config::{Driver, EDGE_OBJECTS};

/// What one workerd serves.
pub struct Worker<'a> {
    /// The build: a folder with `index.js` and `index_bg.wasm`.
    pub build: &'a Path,
    /// Where the configuration, the build's copy and the objects' storage are kept.
    pub dir: &'a Path,
    /// Its variables, each a text binding.
    pub vars: &'a [(&'a str, String)],
    /// Its Durable Object namespaces, (binding, class), every class SQLite-backed.
    pub durable_objects: &'a [(&'a str, &'a str)],
    /// The bindings whose namespaces are bound to a stand-in Worker whose objects throw,
    /// so every call to them fails.
    pub objects_down: &'a [&'a str],
    /// Serve the V8 inspector protocol on this loopback port.
    pub inspector: Option<u16>,
    /// A second Worker beside it that calls its objects directly.
    pub driver: Option<Driver<'a>>,
    /// Serve a second isolate of the Worker on this socket (held open, as the Worker's
    /// own): another machine of the same data centre, sharing its objects and cache.
    pub twin: Option<&'a TcpListener>,
    /// CA certificates (PEM) its outbound https trusts, beside none: a test's own https
    /// server on loopback. Empty: https to loopback reaches nothing (the usual case).
    pub trusted_certificates: &'a [String],
}

/// The open files a workerd may have: each object keeps its SQLite files open while it
/// lives, and workerd does not evict them within a run — ten thousand users are thirty
/// thousand files, past the usual limit, where SQLite answers "out of memory".
const OPEN_FILES: libc::rlim_t = 1 << 17;

/// The `workerd serve` command for `worker`, listening on `socket`, which the caller
/// keeps open until the command is spawned.
pub fn command(worker: &Worker<'_>, socket: &TcpListener) -> anyhow::Result<Command> {
    let storage = worker.dir.join("durable-objects");
    std::fs::create_dir_all(&storage)?;
    for file in ["index.js", "index_bg.wasm"] {
        let from = worker.build.join(file);
        std::fs::copy(&from, worker.dir.join(file))
            .with_context(|| format!("copying {}", from.display()))?;
    }
    let wrangler = std::fs::read_to_string(workspace().join("wrangler.toml"))?;
    let date = compatibility_date(&wrangler)
        .context("wrangler.toml has no compatibility_date = \"YYYY-MM-DD\"")?;
    let config = worker.dir.join("edge.capnp");
    let text = config_text(&Config {
        port: socket.local_addr()?.port(),
        compatibility_date: &date,
        storage: &storage,
        vars: worker.vars,
        durable_objects: worker.durable_objects,
        objects_down: worker.objects_down,
        driver: worker.driver,
        twin: worker
            .twin
            .map(TcpListener::local_addr)
            .transpose()?
            .map(|address| address.port()),
        trusted_certificates: worker.trusted_certificates,
    });
    std::fs::write(&config, text)?;
    let mut command = Command::new(binary());
    command.arg("serve").arg(&config).current_dir(worker.dir);
    if let Some(port) = worker.inspector {
        command.arg(format!("--inspector-addr=127.0.0.1:{port}"));
    }
    let fd = socket.as_raw_fd();
    command.arg(format!("--socket-fd=http={fd}"));
    let twin_fd = worker.twin.map(AsRawFd::as_raw_fd);
    if let Some(twin_fd) = twin_fd {
        command.arg(format!("--socket-fd=twin={twin_fd}"));
    }
    // SAFETY: between fork and exec only fcntl and setrlimit/getrlimit, which are
    // async-signal-safe: the sockets are kept open across exec for workerd to listen on,
    // and the open-file limit raised as far as allowed.
    unsafe {
        command.pre_exec(move || {
            for fd in std::iter::once(fd).chain(twin_fd) {
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
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
    Ok(command)
}

/// `scripts/build-edge [crate]`: the edge (or `crate`) into its `build/`, once per
/// process (the script itself skips a build that is up to date).
pub fn build(krate: Option<&str>) -> anyhow::Result<()> {
    static BUILT: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let name = krate.unwrap_or(".").to_owned();
    let mut built = BUILT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if built.contains(&name) {
        return Ok(());
    }
    let mut command = Command::new(workspace().join("scripts/build-edge"));
    command.args(krate);
    run_in_workspace(command, "scripts/build-edge")?;
    built.insert(name);
    Ok(())
}

/// A client for workerd: it never sends on a connection idle for 2 s or more. workerd
/// closes a connection idle for 5 s (measured on the edge: reused at 1 and 3 s, closed
/// at 5.0 s every time), and a request written on one as it closes gets no answer
/// (`IncompleteMessage`) — surely so when the caller's runtime was held meanwhile (a
/// test waiting on a browser script), so it never read the close. hyper checks the
/// idle time as it takes a connection from its pool.
pub fn client() -> reqwest::ClientBuilder {
    reqwest::Client::builder().pool_idle_timeout(std::time::Duration::from_secs(2))
}

/// The workerd of the `workerd` npm package wrangler depends on (`npm ci`, run by
/// `scripts/bootstrap`).
pub fn binary() -> PathBuf {
    workspace().join("node_modules/workerd/bin/workerd")
}

/// What `workerd --version` says of [`binary`].
pub fn version() -> anyhow::Result<String> {
    let output = Command::new(binary()).arg("--version").output()?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
