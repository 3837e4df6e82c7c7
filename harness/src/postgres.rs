//! A throwaway PostgreSQL server per test, from Debian's server binaries
//! (`scripts/bootstrap --postgres`): a fresh cluster in a temporary folder, listening on
//! a free loopback port and a unix socket inside that folder, with one fresh database.
//! Dropping it — at the end of the test, or while a failed test unwinds — stops the
//! server and deletes the folder. The server never outlives the test process either:
//! it gets SIGKILL when the thread that started it ends.
//!
//! PostgreSQL refuses to run as root; as root (CI) every server command runs as the
//! `postgres` system user the Debian package creates, and the folder is theirs.
//!
//! When PostgreSQL is missing or does not start, [`TestPostgres::start`] panics saying
//! why: the tests that need it are never skipped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Where Debian's `postgresql-<major>` packages put their server binaries.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
/// The unprivileged user that runs the server when the tests run as root.
const SERVER_USER: &str = "postgres";
const DATABASE: &str = "test";
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// Starts that lose their port to another process before binding it, tried again.
const PORT_ATTEMPTS: usize = 5;

pub struct TestPostgres {
    url: String,
    port: u16,
    bin: PathBuf,
    run_as: Option<Ids>,
    server: Child,
    data: PathBuf,
    log: PathBuf,
    dir: tempfile::TempDir,
}

/// The user and group ids a server command runs as.
#[derive(Clone, Copy)]
struct Ids {
    uid: u32,
    gid: u32,
}

impl TestPostgres {
    /// A new cluster and server, ready, with an empty database at [`Self::url`].
    /// Blocking (a second or so); call it on the test's own thread, which the server
    /// does not outlive — a `#[tokio::test]` body is on it, `spawn_blocking` is not.
    pub fn start() -> TestPostgres {
        let bin = server_binaries();
        let run_as = (current_uid() == 0).then(server_user);
        let dir = tempfile::Builder::new()
            .prefix("test-postgres-")
            .tempdir()
            .unwrap_or_else(|err| panic!("PostgreSQL test server: no temporary folder: {err}"));
        if let Some(ids) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(ids.uid), Some(ids.gid)).unwrap_or_else(
                |err| panic!("PostgreSQL test server: cannot hand {dir:?} to {SERVER_USER}: {err}"),
            );
        }
        let data = dir.path().join("data");
        let initdb = run(as_server_user(run_as, &bin.join("initdb"), dir.path())
            .arg("-D")
            .arg(&data)
            .args(["--auth=trust", "-U", "postgres", "--encoding=UTF8"])
            .args(["--locale=C", "--no-sync", "--no-instructions"]));
        if !initdb.status.success() {
            panic!(
                "PostgreSQL test server: initdb failed ({}):\n{}{}",
                initdb.status,
                String::from_utf8_lossy(&initdb.stdout),
                String::from_utf8_lossy(&initdb.stderr)
            );
        }
        let sockets = dir.path().join("sockets");
        fs::create_dir(&sockets)
            .unwrap_or_else(|err| panic!("PostgreSQL test server: {sockets:?}: {err}"));
        if let Some(ids) = run_as {
            std::os::unix::fs::chown(&sockets, Some(ids.uid), Some(ids.gid))
                .unwrap_or_else(|err| panic!("PostgreSQL test server: {sockets:?}: {err}"));
        }
        let log = dir.path().join("server.log");
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            let log_file = fs::File::create(&log)
                .unwrap_or_else(|err| panic!("PostgreSQL test server: {log:?}: {err}"));
            let log_err = log_file
                .try_clone()
                .unwrap_or_else(|err| panic!("PostgreSQL test server: {log:?}: {err}"));
            let mut server = as_server_user(run_as, &bin.join("postgres"), dir.path())
                .arg("-D")
                .arg(&data)
                .arg("-k")
                .arg(&sockets)
                .args(["-h", "127.0.0.1", "-p", &port.to_string()])
                // A test database is thrown away: durability only costs time.
                .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
                .args(["-c", "full_page_writes=off", "-c", "shared_buffers=16MB"])
                .stdin(Stdio::null())
                .stdout(log_file)
                .stderr(log_err)
                .spawn()
                .unwrap_or_else(|err| panic!("PostgreSQL test server: cannot run postgres: {err}"));
            match wait_until_ready(&mut server, &data, &log) {
                Ready::Yes => {
                    let postgres = TestPostgres {
                        url: format!("postgres://postgres@127.0.0.1:{port}/{DATABASE}"),
                        port,
                        bin,
                        run_as,
                        server,
                        data,
                        log,
                        dir,
                    };
                    postgres.create_database();
                    return postgres;
                }
                Ready::PortTaken(text) => last_failure = text,
                Ready::Failed(text) => {
                    let _ = server.kill();
                    let _ = server.wait();
                    panic!("PostgreSQL test server did not start: {text}")
                }
            }
        }
        panic!(
            "PostgreSQL test server: no free port in {PORT_ATTEMPTS} tries; last:\n{last_failure}"
        )
    }

    /// `postgres://postgres@127.0.0.1:<port>/test`, trusted (no password).
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// What the server wrote so far, for a failing test's message.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn create_database(&self) {
        let created = run(Command::new(self.bin.join("createdb"))
            .current_dir(self.dir.path())
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "--no-password", DATABASE]));
        if !created.status.success() {
            panic!(
                "PostgreSQL test server: createdb failed ({}): {}\n{}",
                created.status,
                String::from_utf8_lossy(&created.stderr),
                self.log()
            );
        }
    }

    /// Immediate shutdown (no checkpoint: the data is thrown away), then SIGKILL if
    /// the server is still there after [`STOP_TIMEOUT`]. Never panics: it runs while
    /// failed tests unwind.
    fn stop(&mut self) {
        if matches!(self.server.try_wait(), Ok(None)) {
            let _ = as_server_user(self.run_as, &self.bin.join("pg_ctl"), self.dir.path())
                .arg("stop")
                .arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "-w", "-t"])
                .arg(STOP_TIMEOUT.as_secs().to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while matches!(self.server.try_wait(), Ok(None)) && Instant::now() < deadline {
            sleep(Duration::from_millis(20));
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        self.stop();
        // The folder goes with `dir`, after this.
    }
}

enum Ready {
    Yes,
    /// Another process bound the port first: the server exited; try another port.
    PortTaken(String),
    Failed(String),
}

/// Waits until the server accepts connections: its status, the last line of
/// `postmaster.pid`, says `ready` (what `pg_ctl start -w` waits for too).
fn wait_until_ready(server: &mut Child, data: &Path, log: &Path) -> Ready {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Ok(Some(status)) = server.try_wait() {
            let log = fs::read_to_string(log).unwrap_or_default();
            return if log.contains("Address already in use") {
                Ready::PortTaken(log)
            } else {
                Ready::Failed(format!("postgres exited ({status}):\n{log}"))
            };
        }
        let pid_file = fs::read_to_string(data.join("postmaster.pid")).unwrap_or_default();
        if pid_file.lines().nth(7).map(str::trim) == Some("ready") {
            return Ready::Yes;
        }
        if Instant::now() > deadline {
            let log = fs::read_to_string(log).unwrap_or_default();
            return Ready::Failed(format!("not ready within {READY_TIMEOUT:?}:\n{log}"));
        }
        sleep(Duration::from_millis(20));
    }
}

/// The bin folder of the highest PostgreSQL major version installed.
fn server_binaries() -> PathBuf {
    let missing = || {
        format!(
            "PostgreSQL test server: no initdb, pg_ctl and postgres under \
             {DEBIAN_ROOT}/<major>/bin — install Debian's postgresql with \
             `scripts/bootstrap --postgres` (as root; `make test` does)"
        )
    };
    let entries = fs::read_dir(DEBIAN_ROOT).unwrap_or_else(|_| panic!("{}", missing()));
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            let version: Vec<u32> = name
                .split('.')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            let bin = entry.path().join("bin");
            ["initdb", "pg_ctl", "postgres", "createdb"]
                .iter()
                .all(|program| bin.join(program).is_file())
                .then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
        .unwrap_or_else(|| panic!("{}", missing()))
}

/// `program`, run as `run_as` when given, and killed when this thread ends (so a
/// test process that dies leaves no server behind), from within `dir`.
fn as_server_user(run_as: Option<Ids>, program: &Path, dir: &Path) -> Command {
    let mut command = Command::new("setpriv");
    if let Some(ids) = run_as {
        command
            .arg(format!("--reuid={}", ids.uid))
            .arg(format!("--regid={}", ids.gid))
            .arg("--clear-groups");
    }
    command
        .args(["--pdeathsig", "KILL", "--"])
        .arg(program)
        .current_dir(dir);
    command
}

fn run(command: &mut Command) -> Output {
    command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|err| panic!("PostgreSQL test server: cannot run {command:?}: {err}"))
}

fn current_uid() -> u32 {
    id(&["-u"])
}

fn server_user() -> Ids {
    Ids {
        uid: id(&["-u", SERVER_USER]),
        gid: id(&["-g", SERVER_USER]),
    }
}

fn id(args: &[&str]) -> u32 {
    let output = run(Command::new("id").args(args));
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| {
            panic!(
                "PostgreSQL test server: `id {}` failed: {} — as root the server runs as the \
                 `{SERVER_USER}` user that Debian's postgresql package creates",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            )
        })
}

/// A loopback port that was free a moment ago; a server that loses it to another
/// process is started again on another.
fn free_port() -> u16 {
    match crate::ports::free_ports() {
        Ok([port]) => port,
        Err(err) => panic!("PostgreSQL test server: no free loopback port: {err}"),
    }
}
