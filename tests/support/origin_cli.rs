//! The origin's command line on a [`System`]: `origin` run with the system's origin's
//! configuration — its commands, its users, and the origin started again.

use std::process::{Command, Stdio};

use super::{binary, System};

impl System {
    /// The `origin` binary with `args`, run as this system's origin runs.
    pub(super) fn origin_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(binary("origin"));
        command
            .args(args)
            .envs(self.origin_env.iter().map(|(n, v)| (n, v)));
        command
    }

    /// Sets one of the origin's variables for the commands run and the restarts from
    /// now on; the running origin keeps what it started with.
    pub fn set_origin_env(&mut self, name: &str, value: &str) {
        self.origin_env.retain(|(known, _)| known != name);
        self.origin_env.push((name.to_owned(), value.to_owned()));
    }

    /// The origin's `DATABASE_URL`.
    pub fn database_url(&self) -> &str {
        &self.database_url
    }

    /// Unsets variable `name` of the origin's commands (the running origin keeps it).
    pub fn unset_origin_env(&mut self, name: &str) {
        self.origin_env.retain(|(known, _)| known != name);
    }

    /// Runs `origin ARGS` with the origin's configuration, whatever comes of it.
    pub fn origin_cli_output(&self, args: &[&str]) -> std::process::Output {
        self.origin_command(args)
            .stdin(Stdio::null())
            .output()
            .expect("the origin command runs")
    }

    /// Runs `origin ARGS` (e.g. `recover --once`) with the origin's configuration; its
    /// standard output, after asserting it succeeded.
    pub fn origin_cli(&self, args: &[&str]) -> String {
        let output = self.origin_cli_output(args);
        assert!(
            output.status.success(),
            "origin {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Starts the origin again (after [`System::kill`]) on the same ports and database.
    pub async fn restart_origin(&mut self) {
        let command = self.origin_command(&["serve"]);
        self.spawn("origin", command);
        let url = format!("{}/healthz", self.origin);
        self.wait_until_healthy(&url)
            .await
            .unwrap_or_else(|failure| panic!("the origin did not restart: {failure}"));
    }

    /// Adds a user with `origin user add`, as an operator does; returns its id.
    pub fn add_user(&self, name: &str, password: &str) -> String {
        harness::origin::add_user(self.origin_command(&[]), name, password)
            .unwrap_or_else(|err| panic!("{err:#}"))
    }

    /// Sets a user's new password with `origin user add NAME --replace-password`, which
    /// also ends the user's sessions at the edge (`EDGE_URL`, see
    /// [`System::set_origin_env`]); its standard output.
    pub fn replace_password(&self, name: &str, password: &str) -> Result<String, String> {
        let command = self.origin_command(&["user", "add", name, "--replace-password"]);
        harness::origin::with_password(command, password).map_err(|err| format!("{err:#}"))
    }
}
