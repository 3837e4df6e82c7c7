//! Named child processes, each in a process group of its own with its output appended to
//! `NAME.log` in one folder, killed — the whole group — when asked or when the set is
//! dropped, whatever happened. A group is signalled while its leader is unreaped (a
//! zombie still holds the id), so a recycled process id is never hit.

use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

/// How often a start is probed.
const PROBE_EVERY: Duration = Duration::from_millis(100);
/// How long one probe may take: a socket that accepts and never answers must not hang
/// the start.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The running services of one test, benchmark or experiment.
pub struct Services {
    dir: PathBuf,
    running: Vec<Service>,
}

struct Service {
    name: String,
    child: Child,
    /// Reaped: its group is not signalled again.
    gone: bool,
}

impl Services {
    /// No services yet; their logs go to `dir`.
    pub fn new(dir: &Path) -> Services {
        Services {
            dir: dir.to_owned(),
            running: Vec::new(),
        }
    }

    /// Starts `command` as service `name`, in a process group of its own, its standard
    /// output and error appended to `NAME.log` (so a restarted service's log follows its
    /// first life's). A service of that name still running is killed first.
    pub fn spawn(&mut self, name: &str, mut command: Command) -> anyhow::Result<()> {
        if let Some(index) = self.running.iter().position(|s| s.name == name) {
            let mut old = self.running.remove(index);
            let _ = old.kill();
        }
        let log = self.log_path(name);
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .with_context(|| format!("opening {}", log.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {name} ({:?})", command.get_program()))?;
        self.running.push(Service {
            name: name.to_owned(),
            child,
            gone: false,
        });
        Ok(())
    }

    /// Waits until `GET url` answers 2xx. An error, with the service's log, when any
    /// service exits first (it may have lost its port) or `within` passes.
    pub async fn wait_until_healthy(
        &mut self,
        http: &reqwest::Client,
        url: &str,
        within: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + within;
        loop {
            let probe = http.get(url).timeout(PROBE_TIMEOUT).send().await;
            let healthy = probe.is_ok_and(|response| response.status().is_success());
            // Checked on success too: a service that lost its port to another process
            // exits, while that process may answer the health check in its place.
            for service in &mut self.running {
                if let Some(status) = service.exited() {
                    bail!(
                        "{} exited with {status} before {url} was healthy:\n{}",
                        service.name,
                        read_log(&self.dir, &service.name)
                    );
                }
            }
            if healthy {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!("{url} not healthy after {within:?}:\n{}", self.logs());
            }
            tokio::time::sleep(PROBE_EVERY).await;
        }
    }

    /// Kills service `name`'s group with SIGKILL and waits until it is gone; its log
    /// stays. A name not started is an error.
    pub fn kill(&mut self, name: &str) -> anyhow::Result<()> {
        let _ = self.service(name)?.kill();
        Ok(())
    }

    /// What kills service `name` later, from another task, while the set is in use.
    pub fn killer(&self, name: &str) -> anyhow::Result<Killer> {
        let service = self
            .running
            .iter()
            .find(|s| s.name == name)
            .with_context(|| format!("no service {name}"))?;
        Ok(Killer {
            group: libc::pid_t::try_from(service.child.id())?,
        })
    }

    /// The process id of service `name`.
    pub fn pid(&self, name: &str) -> Option<u32> {
        let service = self.running.iter().find(|s| s.name == name)?;
        Some(service.child.id())
    }

    /// What service `name` has written so far.
    pub fn log(&self, name: &str) -> String {
        read_log(&self.dir, name)
    }

    /// Every service's log, each under a heading.
    pub fn logs(&self) -> String {
        self.running
            .iter()
            .map(|service| {
                format!(
                    "===== {} log ({}) =====\n{}\n",
                    service.name,
                    self.log_path(&service.name).display(),
                    read_log(&self.dir, &service.name)
                )
            })
            .collect()
    }

    fn service(&mut self, name: &str) -> anyhow::Result<&mut Service> {
        self.running
            .iter_mut()
            .find(|s| s.name == name)
            .with_context(|| format!("no service {name}"))
    }

    fn log_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.log"))
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        for service in &mut self.running {
            let _ = service.kill();
        }
    }
}

impl Service {
    /// How the group's leader ended, if it has; what is left of its group is killed
    /// before the leader is reaped.
    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        if self.gone || !self.has_exited() {
            return None;
        }
        self.kill()
    }

    /// Whether the leader has exited, without reaping it (waitid with `WNOWAIT`).
    fn has_exited(&self) -> bool {
        let pid: libc::id_t = self.child.id();
        // SAFETY: waitid(2) fills `info`, a plain C struct zeroed here, and with
        // `WNOWAIT` leaves the child waitable.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            libc::waitid(libc::P_PID, pid, &mut info, flags) == 0 && info.si_pid() != 0
        }
    }

    /// Kills the group and reaps its leader: how the leader ended.
    fn kill(&mut self) -> Option<std::process::ExitStatus> {
        if self.gone {
            return None;
        }
        if let Ok(group) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group this set
            // created, whose leader is not yet reaped. Under `wrangler dev` the group
            // holds its workerd too.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        self.gone = true;
        self.child.wait().ok()
    }
}

fn read_log(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default()
}

/// Kills one service's process group when asked: `kill -9`, mid-flight. The set reaps
/// the service afterwards.
pub struct Killer {
    group: libc::pid_t,
}

impl Killer {
    pub fn kill(self) {
        // SAFETY: kill(2) with a negative pid signals the process group the set created;
        // the set has not reaped its leader (it reaps only when asked or dropped).
        unsafe { libc::kill(-self.group, libc::SIGKILL) };
    }
}
