//! The origin's operator commands, run beside a started origin.

use std::io::Write as _;
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _};

/// Adds a user as an operator does — `origin user add NAME`, the password on standard
/// input — with `origin`, the binary set up with the running origin's database and keys;
/// returns the new user's id.
pub fn add_user(mut origin: Command, name: &str, password: &str) -> anyhow::Result<String> {
    origin.args(["user", "add", name]);
    let stdout = with_password(origin, password)?;
    // "added user NAME with id ID"
    stdout
        .split_whitespace()
        .last()
        .map(str::to_owned)
        .context("origin user add printed no id")
}

/// Runs `command` (an `origin user …` that reads a password) with `password` on its
/// standard input: its standard output, or an error with its standard error.
pub fn with_password(mut command: Command, password: &str) -> anyhow::Result<String> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    let mut stdin = child.stdin.take().context("the command has no stdin")?;
    stdin.write_all(format!("{password}\n").as_bytes())?;
    drop(stdin);
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
